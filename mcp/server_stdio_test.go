package mcp_test

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/tool"
)

// TestStdioRelay sends requests back to back, pipelined, whose handlers
// take from nothing to a few times the time a request is served on its
// reading goroutine before another takes over the reading. Every request
// must be answered exactly once with its own result, and a slow request
// must not hold up the ones behind it.
func TestStdioRelay(t *testing.T) {
	c := startStdio(t, newServer(t, sleepTool()))
	c.initialize(nil)

	durations := []int{0, 0, 300, 900, 1100, 2500, 0, 5000, 50, 1000}
	want := map[string]string{}
	for round := range 20 {
		for i, us := range durations {
			tag := fmt.Sprintf("r%d-%d", round, i)
			id := c.request(mcp.MethodToolsCall, map[string]any{"name": "sleep", "arguments": map[string]any{"us": us, "tag": tag}})
			want[id] = tag
		}
	}
	for len(want) > 0 {
		m := c.next()
		if !m.isResponse() {
			continue
		}
		id := string(m.ID)
		tag, ok := want[id]
		if !ok {
			t.Fatalf("response to id %s, which is not outstanding (answered twice?): %s", id, m)
		}
		delete(want, id)
		if got, isErr := toolText(t, m); isErr || got != tag {
			t.Errorf("id %s: got %q (error %v), want %q", id, got, isErr, tag)
		}
	}

	// A request taking a second does not hold up a quick one sent after it.
	slow := c.request(mcp.MethodToolsCall, map[string]any{"name": "sleep", "arguments": map[string]any{"us": 1e6, "tag": "slow"}})
	fast := c.request(mcp.MethodToolsCall, map[string]any{"name": "sleep", "arguments": map[string]any{"us": 0, "tag": "fast"}})
	first := c.next()
	if !first.hasID(fast) {
		t.Errorf("first response is %s, want the quick request %s's", first, fast)
	}
	if resp, _ := c.await(slow); !resp.hasID(slow) {
		t.Errorf("no response to the slow request %s", strconv.Quote(slow))
	}
	if first.hasID(slow) {
		c.await(fast)
	}
}

// gateTool is a slow tool: each call waits until the gate opens or its
// context ends; started counts the calls that began.
type gateTool struct {
	open    chan struct{}
	started atomic.Int64
}

func (g *gateTool) tool() tool.Tool {
	return textTool("slow", func(ctx context.Context, args map[string]any) (string, error) {
		g.started.Add(1)
		select {
		case <-g.open:
			return fmt.Sprint(args["tag"]), nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	})
}

// TestStdioPingWhileSlotsFull sends 2,000 slow requests on one stdio
// connection, more than its request slots and its queue hold, then a
// ping: the ping is answered while every slot is taken, the requests past
// the queue are refused at once with an error saying the server is busy
// (not parked on a goroutine each: issue 20 saw 1,985), and a cancelled
// queued request leaves the queue without running.
func TestStdioPingWhileSlotsFull(t *testing.T) {
	gate := &gateTool{open: make(chan struct{})}
	srv := newServer(t, gate.tool())
	before := runtime.NumGoroutine()
	c := startStdio(t, srv)
	t.Cleanup(func() {
		select {
		case <-gate.open:
		default:
			close(gate.open)
		}
	})
	slots, queue := mcp.DefaultMaxConcurrentRequests, mcp.DefaultMaxQueuedRequests
	const total = 2000
	call := func(n int) string {
		return c.request(mcp.MethodToolsCall, modern(map[string]any{"name": "slow", "arguments": map[string]any{"tag": n}}))
	}
	for n := range total {
		call(n)
	}
	ping := c.request(mcp.MethodPing, nil)
	resp, early := c.await(ping)
	if resp.Error != nil {
		t.Fatalf("ping answered with an error: %s", resp)
	}
	busy := 0
	for _, m := range early {
		if m.Error == nil || !strings.Contains(m.Error.Message, "server busy") || !strings.Contains(m.Error.Message, "retry") {
			t.Fatalf("before the ping's answer: %s; want only server busy errors", m)
		}
		busy++
	}
	if want := total - slots - queue; busy != want {
		t.Errorf("%d requests refused as busy, want %d (%d sent, %d slots, %d queued)", busy, want, total, slots, queue)
	}
	if got := gate.started.Load(); got != int64(slots) {
		t.Errorf("%d calls running, want %d (the slots)", got, slots)
	}
	g := runtime.NumGoroutine() - before
	t.Logf("%d more goroutines with %d requests running and %d queued", g, slots, queue)
	if g > slots+queue+64 {
		t.Errorf("%d goroutines for %d requests running and %d queued", g, slots, queue)
	}

	// Cancelling a queued request (ids 1 to 64 run, 65 to 320 wait)
	// frees its place: one more request queues, the next is refused.
	c.notify(mcp.NotificationCancelled, map[string]any{"requestId": 100, "reason": "gave up"})
	queued := call(total)
	refused := call(total + 1)
	resp, early = c.await(refused)
	if resp.Error == nil || !strings.Contains(resp.Error.Message, "server busy") || len(early) > 0 {
		t.Fatalf("after a cancellation freed a place: %v then %s; want nothing for %s, then busy for %s", early, resp, queued, refused)
	}

	// Opened, the gate lets every request run but the cancelled one.
	close(gate.open)
	want := map[string]bool{queued: true}
	for id := 1; id <= slots+queue; id++ {
		if id != 100 {
			want[strconv.Itoa(id)] = true
		}
	}
	for len(want) > 0 {
		m := c.next()
		if !want[string(m.ID)] || m.Error != nil {
			t.Fatalf("unexpected message %s", m)
		}
		delete(want, string(m.ID))
	}
	c.expectQuiet()
	if got, want := gate.started.Load(), int64(slots+queue); got != want {
		t.Errorf("%d calls ran, want %d (the cancelled one never runs)", got, want)
	}
}
