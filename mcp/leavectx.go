package mcp

import (
	"context"
	"sync"
	"time"
)

// leaveCtx is a stateless HTTP request's context: the request's own
// (context.WithCancelCause of the HTTP request's values only), which
// also ends when the HTTP request's context, leave, ends (the client
// went away). It registers with leave only once something waits on Done
// (a handler's select, a context derived from it): registering takes an
// allocation of leave's done channel, of its map of children and of the
// entry, and most requests end before anything waits. Err looks at leave
// itself. release, once the request has ended, takes the registration
// back (or forbids it).
type leaveCtx struct {
	context.Context
	cancel context.CancelCauseFunc
	leave  context.Context

	once sync.Once
	stop func() bool // set by once, when it registered

	// values is the parent of the request's own context: the HTTP
	// request's values without its cancellation or deadline
	// (context.WithoutCancel, without its allocation).
	values valuesOnly
}

// valuesOnly is a context's values without its cancellation or
// deadline. Its Value passes every key on: only the request's own
// context derives from it, and that answers the context package's own
// key itself.
type valuesOnly struct{ context.Context }

func (valuesOnly) Deadline() (time.Time, bool) { return time.Time{}, false }
func (valuesOnly) Done() <-chan struct{}       { return nil }
func (valuesOnly) Err() error                  { return nil }

// init makes c the context of a request whose own context is ctx,
// cancelled with cancel, that leave's end ends too.
func (c *leaveCtx) init(ctx context.Context, cancel context.CancelCauseFunc, leave context.Context) {
	c.Context, c.cancel, c.leave = ctx, cancel, leave
}

// Done registers c with leave, the first time, and returns the request's
// done channel.
func (c *leaveCtx) Done() <-chan struct{} {
	c.once.Do(func() {
		c.stop = context.AfterFunc(c.leave, func() { c.cancel(context.Cause(c.leave)) })
	})
	return c.Context.Done()
}

// Err ends the request first if leave has ended.
func (c *leaveCtx) Err() error {
	if err := c.Context.Err(); err != nil {
		return err
	}
	if c.leave.Err() != nil {
		c.cancel(context.Cause(c.leave))
	}
	return c.Context.Err()
}

// release takes c's registration with leave back, or forbids a later
// one; the request's own context has ended.
func (c *leaveCtx) release() {
	c.once.Do(func() {})
	if c.stop != nil {
		c.stop()
	}
}
