package mcp_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/mcp"
)

func TestReadStateKey(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, n int) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(strings.Repeat("k", n)), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name, path, err string
	}{
		{"32 bytes", write("good", 32), ""},
		{"16 bytes", write("least", mcp.MinStateKey), ""},
		{"15 bytes", write("short", mcp.MinStateKey-1), "too short to sign with"},
		{"empty", write("empty", 0), "has 0 bytes"},
		{"missing", filepath.Join(dir, "none"), "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key, err := mcp.ReadStateKey(tc.path)
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("ReadStateKey: %v", err)
			case tc.err == "" && len(key) == 0:
				t.Fatal("no key")
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("ReadStateKey = %q, %v; want an error with %q", key, err, tc.err)
			}
		})
	}
}
