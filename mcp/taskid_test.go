package mcp

import (
	"encoding/base64"
	"strings"
	"testing"
)

func TestNewTaskID(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		id := newTaskID()
		if !validTaskID(id) || seen[id] {
			t.Fatalf("task id %q: valid %v, seen %v", id, validTaskID(id), seen[id])
		}
		seen[id] = true
	}
}

// FuzzTaskID checks the task id parser: what it accepts is exactly the
// prefix and the canonical encoding of 128 bits, nothing longer, shorter
// or otherwise spelled.
func FuzzTaskID(f *testing.F) {
	for _, s := range []string{newTaskID(), "", "task_", "task_AAAAAAAAAAAAAAAAAAAAAA", "task_AAAAAAAAAAAAAAAAAAAAAB",
		"task_AAAAAAAAAAAAAAAAAAAAA=", "TASK_AAAAAAAAAAAAAAAAAAAAAA", "task_" + strings.Repeat("/", 22), "tasks-conformance-nonexistent-12345"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !validTaskID(s) {
			return
		}
		rest, ok := strings.CutPrefix(s, taskIDPrefix)
		if !ok {
			t.Fatalf("accepted %q without the prefix", s)
		}
		b, err := base64.RawURLEncoding.DecodeString(rest)
		if err != nil || len(b) != 16 || base64.RawURLEncoding.EncodeToString(b) != rest {
			t.Fatalf("accepted %q: not the canonical encoding of 128 bits", s)
		}
	})
}
