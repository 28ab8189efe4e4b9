package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/internal/testpeers"
)

// build compiles the toolwire binary once per test.
func build(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "toolwire")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func run(t *testing.T, bin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var o, e bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return o.String(), e.String(), code
}

// A Claude Desktop configuration, pasted as it is.
func claudeConfig(t *testing.T, root string) string {
	node := testpeers.Node(t)
	everything := filepath.Join(testpeers.Package(t, "@modelcontextprotocol/server-everything"), "dist", "index.js")
	files := filepath.Join(testpeers.Package(t, "@modelcontextprotocol/server-filesystem"), "dist", "index.js")
	path := filepath.Join(t.TempDir(), "claude_desktop_config.json")
	cfg := fmt.Sprintf(`{
  "mcpServers": {
    "everything": {"command": %q, "args": [%q]},
    "filesystem": {"command": %q, "args": [%q, %q], "env": {"HOME": "${HOME}"}}
  },
  "globalShortcut": ""
}`, node, everything, node, files, root)
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestToolsAndCallCommands(t *testing.T) {
	bin := build(t)
	root, _ := filepath.EvalSymlinks(t.TempDir())
	if err := os.WriteFile(filepath.Join(root, "hello.txt"), []byte("hello from a file"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := claudeConfig(t, root)

	out, errOut, code := run(t, bin, "tools", "--config", cfg)
	if code != 0 {
		t.Fatalf("tools: exit %d\n%s", code, errOut)
	}
	for _, want := range []string{"everything__echo", "message", "filesystem__read_text_file", "filesystem__write_file"} {
		if !strings.Contains(out, want) {
			t.Errorf("tools output lacks %q:\n%s", want, out)
		}
	}
	out, _, code = run(t, bin, "tools", "--config", cfg, "--json")
	if code != 0 || !strings.Contains(out, `"inputSchema"`) || !strings.HasPrefix(strings.TrimSpace(out), "[") {
		t.Errorf("tools --json: exit %d\n%s", code, out)
	}

	tests := []struct {
		name       string
		args       []string
		code       int
		out, error string
	}{
		{"text result", []string{"everything__echo", `{"message":"hi there"}`}, 0, "hi there", ""},
		{"structured result", []string{"filesystem__read_text_file", fmt.Sprintf(`{"path":%q}`, filepath.Join(root, "hello.txt"))}, 0, "hello from a file", ""},
		{"tool error", []string{"filesystem__read_text_file", `{"path":"/etc/hostname"}`}, 1, "", "outside allowed directories"},
		{"bad arguments", []string{"everything__get-sum", `{"a":1}`}, 1, "", `missing required argument "b"`},
		{"not JSON", []string{"everything__echo", `{"message":`}, 1, "", "not valid JSON"},
		{"unknown tool", []string{"everything__nope", `{}`}, 1, "", `no tool "everything__nope"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := run(t, bin, append([]string{"call", "--config", cfg}, tt.args...)...)
			if code != tt.code || !strings.Contains(out, tt.out) || !strings.Contains(errOut, tt.error) {
				t.Errorf("exit %d (want %d)\nstdout: %s\nstderr: %s", code, tt.code, out, errOut)
			}
		})
	}
}

func TestConfigErrors(t *testing.T) {
	bin := build(t)
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name, body string
		want       []string
	}{
		{"not JSON", `{"mcpServers": [}`, []string{"not valid JSON"}},
		{"missing command", `{"mcpServers": {"x": {"command": "definitely-not-a-command-xyz"}}}`, []string{`server "x"`, "definitely-not-a-command-xyz"}},
		{"unset variable", `{"mcpServers": {"x": {"url": "http://127.0.0.1:1/${TOOLWIRE_TEST_UNSET}"}}}`, []string{`server "x"`, `key "url"`, "TOOLWIRE_TEST_UNSET"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := write(strings.ReplaceAll(tt.name, " ", "_")+".json", tt.body)
			_, errOut, code := run(t, bin, "tools", "--config", p)
			if code == 0 {
				t.Fatal("exit 0")
			}
			for _, w := range append(tt.want, p) {
				if w == p && tt.name == "missing command" {
					continue // reported by the server, not the file
				}
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr does not mention %q:\n%s", w, errOut)
				}
			}
		})
	}
}
