package handle_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestCoreNeedsNoCgo: the core packages build without cgo and depend on
// neither DuckDB nor a Redis client, which live in modules of their own.
func TestCoreNeedsNoCgo(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "../jsonrpc", "../mcp", "../schema", "../tool", "../host", ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, p := range strings.Fields(string(out)) {
		if strings.Contains(p, "duckdb") || strings.Contains(p, "redis") || p == "runtime/cgo" {
			t.Errorf("a core package depends on %s", p)
		}
	}
}
