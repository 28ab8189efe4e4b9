package gateway

import (
	"context"
	"strconv"
	"testing"

	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/tool"
	"github.com/toolwire/toolwire/toolsearch"
)

// What callers found is remembered for a bounded number of callers.
func TestSearchCallersBounded(t *testing.T) {
	s := &search{srv: &mcp.Server{}, loaded: map[string]map[string]bool{}}
	for i := range maxSearchCallers + 5 {
		s.found(tool.WithCaller(context.Background(), tool.Caller{ID: "user:" + strconv.Itoa(i)}), []toolsearch.Hit{{Name: "x"}})
	}
	if n := len(s.loaded); n > maxSearchCallers || n == 0 {
		t.Errorf("%d callers remembered, want 1 to %d", n, maxSearchCallers)
	}
}
