package agent_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/agent"
	"github.com/toolwire/toolwire/tool"
)

// TestApprovalHints: a tool runs unasked when its annotations say it is
// read-only, or neither destructive nor open-world (Codex CLI's rule);
// hints left out count as MCP's defaults, destructive and open-world.
func TestApprovalHints(t *testing.T) {
	yes, no := true, false
	tests := []struct {
		name string
		an   *tool.Annotations
		asks bool
	}{
		{"no annotations", nil, true},
		{"read-only", &tool.Annotations{ReadOnlyHint: &yes}, false},
		{"read-only, open-world", &tool.Annotations{ReadOnlyHint: &yes, OpenWorldHint: &yes}, false},
		{"not destructive, closed world", &tool.Annotations{ReadOnlyHint: &no, DestructiveHint: &no, OpenWorldHint: &no}, false},
		{"not destructive, world unsaid", &tool.Annotations{DestructiveHint: &no}, true},
		{"not destructive, open world", &tool.Annotations{DestructiveHint: &no, OpenWorldHint: &yes}, true},
		{"destructive, closed world", &tool.Annotations{DestructiveHint: &yes, OpenWorldHint: &no}, true},
		{"not read-only, nothing else", &tool.Annotations{ReadOnlyHint: &no}, true},
		{"closed world, destructive unsaid", &tool.Annotations{OpenWorldHint: &no}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var reg tool.Registry
			if err := reg.Add(tool.NewFunc(tool.Info{Name: "t", Annotations: tt.an},
				func(context.Context, json.RawMessage) (*tool.Result, error) { return tool.Text("ran"), nil })); err != nil {
				t.Fatal(err)
			}
			reg.Use(agent.Approval(agent.Policy{})) // nobody to ask: refused
			res, err := reg.Call(context.Background(), "t", json.RawMessage(`{}`))
			if err != nil {
				t.Fatal(err)
			}
			asked := strings.Contains(res.Content[0].Text, "was not approved")
			if asked != tt.asks || !asked && res.Content[0].Text != "ran" {
				t.Errorf("result %q; want asking %v", res.Content[0].Text, tt.asks)
			}
		})
	}
}
