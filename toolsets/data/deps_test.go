package data

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoMCPImport: the toolset reaches its caller through tool.Client
// (tool.Progress), so it works in-process and over MCP alike and links
// no MCP code of its own.
func TestNoMCPImport(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if p == "github.com/toolwire/toolwire/mcp" {
			t.Errorf("package data depends on %s: reach the caller through package tool instead", p)
		}
	}
}
