package mcp_test

import (
	"context"
	"testing"

	"github.com/toolwire/toolwire/tool"
)

// TestServerIgnoresUnknownArguments: a host that adds an argument of its
// own to every tool (Gemini CLI's wait_for_previous) gets the tool's
// normal result, and the tool never sees the argument; a misspelled
// required argument is still reported as missing.
func TestServerIgnoresUnknownArguments(t *testing.T) {
	type in struct {
		Path string `json:"path"`
	}
	echo := tool.Must(tool.New("echo_path", "Echoes the path.", func(_ context.Context, in in) (string, error) { return "path " + in.Path, nil }))
	c := startStdio(t, newServer(t, echo))
	c.initialize(nil)
	text, isErr := toolText(t, c.call("tools/call", map[string]any{"name": "echo_path", "arguments": map[string]any{"path": "a.csv", "wait_for_previous": true}}))
	if isErr || text != "path a.csv" {
		t.Errorf("with wait_for_previous: %q (error %v), want path a.csv", text, isErr)
	}
	text, isErr = toolText(t, c.call("tools/call", map[string]any{"name": "echo_path", "arguments": map[string]any{"pth": "a.csv"}}))
	if !isErr || text != `invalid arguments for tool echo_path: missing required argument "path"; argument "pth" was ignored, as the tool has none of that name: did you mean "path"?` {
		t.Errorf("misspelled: %q (error %v)", text, isErr)
	}
}
