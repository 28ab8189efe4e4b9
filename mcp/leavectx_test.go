package mcp

import (
	"context"
	"errors"
	"testing"
	"time"
)

type leaveKey struct{}

// newLeaveCtx returns a request context as conn.serve makes one for a
// stateless HTTP request whose HTTP request's context is leave.
func newLeaveCtx(leave context.Context) *leaveCtx {
	c := new(leaveCtx)
	c.values.Context = leave
	ctx, cancel := context.WithCancelCause(&c.values)
	c.init(ctx, cancel, leave)
	return c
}

// TestLeaveCtx: a stateless HTTP request's context ends when its HTTP
// request's context does, whether the handler waits on Done, polls Err or
// derives a context; a cause of its own stays its own; once released it
// no longer hears from the HTTP request.
func TestLeaveCtx(t *testing.T) {
	left := errors.New("client left")
	own := errors.New("own cause")
	tests := []struct {
		name string
		run  func(t *testing.T, c *leaveCtx, leave context.CancelCauseFunc)
	}{
		{"Done then leave", func(t *testing.T, c *leaveCtx, leave context.CancelCauseFunc) {
			done := c.Done()
			leave(left)
			waitDone(t, done)
			if got := context.Cause(c); got != left {
				t.Errorf("cause %v, want %v", got, left)
			}
		}},
		{"leave then Done", func(t *testing.T, c *leaveCtx, leave context.CancelCauseFunc) {
			leave(left)
			waitDone(t, c.Done())
		}},
		{"Err only", func(t *testing.T, c *leaveCtx, leave context.CancelCauseFunc) {
			if err := c.Err(); err != nil {
				t.Fatalf("Err before the client left: %v", err)
			}
			leave(left)
			if err := c.Err(); !errors.Is(err, context.Canceled) {
				t.Errorf("Err after the client left: %v, want context.Canceled", err)
			}
			if got := context.Cause(c); got != left {
				t.Errorf("cause %v, want %v", got, left)
			}
		}},
		{"derived context", func(t *testing.T, c *leaveCtx, leave context.CancelCauseFunc) {
			child, stop := context.WithCancel(c)
			defer stop()
			leave(left)
			waitDone(t, child.Done())
		}},
		{"own cause", func(t *testing.T, c *leaveCtx, leave context.CancelCauseFunc) {
			_ = c.Done()
			c.cancel(own)
			leave(left)
			if got := context.Cause(c); got != own {
				t.Errorf("cause %v, want %v", got, own)
			}
		}},
		{"released", func(t *testing.T, c *leaveCtx, leave context.CancelCauseFunc) {
			done := c.Done()
			c.release()
			leave(left)
			select {
			case <-done:
				t.Error("a released context still ended with its HTTP request's")
			case <-time.After(50 * time.Millisecond):
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			leave, cancel := context.WithCancelCause(context.WithValue(context.Background(), leaveKey{}, "v"))
			defer cancel(nil)
			c := newLeaveCtx(leave)
			if got := c.Value(leaveKey{}); got != "v" {
				t.Errorf("Value %v, want the HTTP request's v", got)
			}
			tt.run(t, c, cancel)
		})
	}
}

// TestLeaveCtxNoDeadline: the request's context keeps the HTTP request's
// values, not its deadline (its own timeout is the server's).
func TestLeaveCtxNoDeadline(t *testing.T) {
	leave, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	if d, ok := newLeaveCtx(leave).Deadline(); ok {
		t.Errorf("deadline %v, want none", d)
	}
}

func waitDone(t *testing.T, done <-chan struct{}) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the request's context did not end when its HTTP request's did")
	}
}
