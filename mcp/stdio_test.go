package mcp_test

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/toolwire/toolwire/mcp"
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
