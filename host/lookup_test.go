package host

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/mcp"
)

func TestLookup(t *testing.T) {
	h := memHost(t, map[string]*mcp.Server{"fake": newFakeServer("plain")}, map[string]*ServerConfig{
		"fake":   {},
		"broken": {Command: "definitely-not-a-command-xyz"},
	})
	var started []string
	h.Observe = func(e Event) {
		if e.State == Connecting {
			started = append(started, e.Server)
		}
	}
	ctx := context.Background()
	if tl, err := h.Lookup(ctx, "fake__ping"); err != nil || tl.Info().Name != "fake__ping" {
		t.Fatalf("Lookup(fake__ping) = %v, %v", tl, err)
	}
	if fmt.Sprint(started) != "[fake]" {
		t.Errorf("servers started = %v; want only the owner", started)
	}
	tests := []struct {
		name string
		want []string
	}{
		{"fake__pong", []string{`no tool "fake__pong"`, "did you mean fake__ping?"}},
		{"faek__ping", []string{`no tool "faek__ping"`, "names no configured server", "fake__ping"}},
		{"ping", []string{`no tool "ping" (the name lacks its server's prefix); did you mean fake__ping?`}},
		{"pnig", []string{`no tool "pnig"`, "did you mean fake__ping?"}},
		{"broken__x", []string{`cannot look up tool "broken__x"`, `server "broken"`, "start", "definitely-not-a-command-xyz"}},
	}
	for _, tt := range tests {
		_, err := h.Lookup(ctx, tt.name)
		for _, w := range tt.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("Lookup(%q) = %v; want an error with %q", tt.name, err, w)
			}
		}
	}
	if _, err := h.Tools(ctx, "fak"); err == nil || !strings.Contains(err.Error(), "did you mean fake?") {
		t.Errorf("Tools(fak) = %v", err)
	}
}
