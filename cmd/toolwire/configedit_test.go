package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tailscale/hujson"
)

const newEntry = `{"type": "stdio", "command": "npx", "args": ["pkg"]}`

// Edits keep what they do not touch: other servers and keys, order,
// comments, trailing commas, indentation.
func TestSetServer(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty object", "{}\n", "{\n  \"mcpServers\": {\n    \"new\": {\n      \"type\": \"stdio\",\n      \"command\": \"npx\",\n      \"args\": [\n        \"pkg\"\n      ]\n    }\n  }\n}\n"},
		{"other keys kept, in order", "{\n  \"mcpServers\": {\n    \"old\": {\"command\": \"x\", \"colour\": \"blue\"}\n  },\n  \"other\": {\"keep\": true}\n}\n",
			"{\n  \"mcpServers\": {\n    \"old\": {\"command\": \"x\", \"colour\": \"blue\"},\n    \"new\": {\n      \"type\": \"stdio\",\n      \"command\": \"npx\",\n      \"args\": [\n        \"pkg\"\n      ]\n    }\n  },\n  \"other\": {\"keep\": true}\n}\n"},
		{"VS Code's JSONC: comments, tabs, servers key", "{\n\t// VS Code\n\t\"servers\": {\n\t\t\"old\": {\"command\": \"x\"}, // the old one\n\t},\n\t\"inputs\": [],\n}\n",
			"{\n\t// VS Code\n\t\"servers\": {\n\t\t\"old\": {\"command\": \"x\"}, // the old one\n\t\t\"new\": {\n\t\t\t\"type\": \"stdio\",\n\t\t\t\"command\": \"npx\",\n\t\t\t\"args\": [\n\t\t\t\t\"pkg\"\n\t\t\t]\n\t\t}\n\t},\n\t\"inputs\": [],\n}\n"},
		{"one line", `{"mcpServers": {"old": {"command": "x"}}}`, `{"mcpServers": {"old": {"command": "x"}, "new": {"type":"stdio","command":"npx","args":["pkg"]}}}`},
		{"no servers key", "{\n  \"other\": 1\n}\n", "{\n  \"other\": 1,\n  \"mcpServers\": {\n    \"new\": {\n      \"type\": \"stdio\",\n      \"command\": \"npx\",\n      \"args\": [\n        \"pkg\"\n      ]\n    }\n  }\n}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, err := hujson.Parse([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if err := setServer(&root, "new", []byte(newEntry), false); err != nil {
				t.Fatal(err)
			}
			if got := string(root.Pack()); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestSetServerExisting(t *testing.T) {
	in := "{\n  // keep me\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\"}, // a's note\n    \"b\": {\"command\": \"y\"}\n  }\n}\n"
	root, _ := hujson.Parse([]byte(in))
	if err := setServer(&root, "a", []byte(newEntry), false); !errors.Is(err, errExists) {
		t.Fatalf("adding a name that exists: %v, want errExists", err)
	}
	if got := string(root.Pack()); got != in {
		t.Errorf("a refused edit changed the file:\n%s", got)
	}
	if err := setServer(&root, "a", []byte(`{"url": "http://h/mcp"}`), true); err != nil {
		t.Fatal(err)
	}
	want := "{\n  // keep me\n  \"mcpServers\": {\n    \"a\": {\n      \"url\": \"http://h/mcp\"\n    }, // a's note\n    \"b\": {\"command\": \"y\"}\n  }\n}\n"
	if got := string(root.Pack()); got != want {
		t.Errorf("replaced:\n%s\nwant\n%s", got, want)
	}
}

func TestRemoveServer(t *testing.T) {
	tests := []struct {
		name, in, remove, want string
		removed                bool
	}{
		{"last", "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\"}, // a\n    \"b\": {\"command\": \"y\"}\n  },\n  \"z\": 1\n}\n", "b",
			"{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\"} // a\n  },\n  \"z\": 1\n}\n", true},
		{"first", "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\"},\n    \"b\": {\"command\": \"y\"}\n  }\n}\n", "a",
			"{\n  \"mcpServers\": {\n    \"b\": {\"command\": \"y\"}\n  }\n}\n", true},
		{"absent", "{\"servers\": {\"a\": {\"command\": \"x\"}}}", "b", "{\"servers\": {\"a\": {\"command\": \"x\"}}}", false},
		{"no servers", "{}", "b", "{}", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, _ := hujson.Parse([]byte(tt.in))
			removed, err := removeServer(&root, tt.remove)
			if err != nil || removed != tt.removed {
				t.Fatalf("removeServer = %v, %v; want %v", removed, err, tt.removed)
			}
			if got := string(root.Pack()); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

// The file is replaced whole, with its mode, through a symbolic link, and
// a new file is readable only by its owner.
func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real.json")
	if err := os.WriteFile(real, []byte("old"), 0o640); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if err := writeFileAtomic(link, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(real); string(b) != "new" {
		t.Errorf("the link's target holds %q", b)
	}
	if fi, _ := os.Lstat(link); fi.Mode()&os.ModeSymlink == 0 {
		t.Error("the symbolic link was replaced by a file")
	}
	if fi, _ := os.Stat(real); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want 0640 as before", fi.Mode().Perm())
	}
	fresh := filepath.Join(dir, "sub", "mcp.json")
	if err := writeFileAtomic(fresh, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(fresh); fi.Mode().Perm() != 0o600 {
		t.Errorf("a new file's mode %v, want 0600", fi.Mode().Perm())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 3 {
		t.Errorf("temporary files left: %v", entries)
	}
}

// A file that does not parse is left alone, with the reason.
func TestEditConfigInvalid(t *testing.T) {
	p := filepath.Join(t.TempDir(), "mcp.json")
	in := "{\"mcpServers\": {\n  \"a\": {\"command\": \"x\"}\n  \"b\": {}\n}}"
	if err := os.WriteFile(p, []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	err := editConfig(p, func(root *hujson.Value) error { return setServer(root, "c", []byte(newEntry), false) })
	if err == nil {
		t.Fatal("no error")
	}
	for _, w := range []string{p, "line 3, column 3", "fix it"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not mention %q", err, w)
		}
	}
	if b, _ := os.ReadFile(p); string(b) != in {
		t.Errorf("the file changed:\n%s", b)
	}
}

// Edits at once all land: each holds the file's lock from its read to
// its write, so none writes over another's server. Each goroutine opens
// the lock on its own descriptor, which excludes the others as another
// process would.
func TestEditConfigConcurrent(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir()) // the lock directory
	p := filepath.Join(t.TempDir(), "mcp.json")
	const n = 40
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := fmt.Sprintf("s%d", i)
			errs <- editConfig(p, func(root *hujson.Value) error { return setServer(root, name, []byte(newEntry), false) })
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct{ MCPServers map[string]json.RawMessage }
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	if len(cfg.MCPServers) != n {
		t.Errorf("%d of %d servers in the file after %d edits at once", len(cfg.MCPServers), n, n)
	}
}

// An edit waits for another holding the lock, and says so when it
// cannot get it.
func TestEditConfigLockHeld(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	p := filepath.Join(t.TempDir(), "mcp.json")
	release := make(chan struct{})
	held := make(chan struct{})
	go withFileLock(p, func() error { close(held); <-release; return nil })
	<-held
	done := make(chan error, 1)
	go func() {
		done <- editConfig(p, func(root *hujson.Value) error { return setServer(root, "a", []byte(newEntry), false) })
	}()
	select {
	case err := <-done:
		t.Fatalf("the edit did not wait for the lock: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
