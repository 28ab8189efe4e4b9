package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/testpeers"
)

// The test binary doubles as an MCP server for the CLI to start: with
// TOOLWIRE_TEST_SERVER set it serves the calc tools over stdio, after
// creating the file $TOOLWIRE_TEST_MARKER (to show it ran) and sleeping
// $TOOLWIRE_TEST_DELAY; in mode "silent" it never answers, in mode "many"
// it serves 500 generated tools too (manyTools), in mode "shapes" the
// tools of shapeTools, in "asks" a form (formTool), in "notes"
// noteTool and waitTool. With
// TOOLWIRE_TEST_BROWSER set, it is the browser of the login tests (see
// testBrowser).
func TestMain(m *testing.M) {
	if mode := os.Getenv("TOOLWIRE_TEST_SERVER"); mode != "" {
		os.Exit(testServer(mode))
	}
	if to := os.Getenv("TOOLWIRE_TEST_BROWSER"); to != "" {
		os.Exit(testBrowser(to, os.Args[1:]))
	}
	dir, err := os.MkdirTemp("", "toolwire-cli-test")
	if err == nil {
		err = buildBinary(dir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func testServer(mode string) int {
	if p := os.Getenv("TOOLWIRE_TEST_MARKER"); p != "" {
		if err := os.WriteFile(p, []byte("ran"), 0o644); err != nil {
			return 3
		}
	}
	if d, err := time.ParseDuration(os.Getenv("TOOLWIRE_TEST_DELAY")); err == nil {
		time.Sleep(d)
	}
	if mode == "silent" {
		_, _ = io.Copy(io.Discard, os.Stdin) // reads everything, answers nothing
		return 0
	}
	srv, _, err := newToolServer(serveOptions{}, nil)
	if err == nil && mode == "notes" {
		err = srv.AddTools(noteTool(), waitTool())
	}
	if err == nil && mode == "shapes" {
		err = srv.AddTools(shapeTools()...)
	}
	if err == nil && mode == "asks" {
		err = srv.AddTools(formTool())
	}
	if err == nil && mode == "many" {
		err = srv.AddTools(manyTools()...)
	}
	if err != nil || srv.ServeStream(context.Background(), os.Stdin, os.Stdout) != nil {
		return 1
	}
	return 0
}

// testServerJSON is the configuration of a server run by testServer, with
// more JSON members for it (e.g. `"timeout": "1s"`) and environment.
func testServerJSON(t *testing.T, mode string, env map[string]string, more string) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// Under -race, a process sleeps a second at exit unless told not to.
	e := map[string]string{"TOOLWIRE_TEST_SERVER": mode, "GORACE": "atexit_sleep_ms=0"}
	for k, v := range env {
		e[k] = v
	}
	b, _ := json.Marshal(map[string]any{"command": self, "env": e})
	if more != "" {
		b = append(b[:len(b)-1], []byte(", "+more+"}")...)
	}
	return string(b)
}

// writeConfig writes an "mcpServers" file of servers given as JSON, by name.
func writeConfig(t *testing.T, servers map[string]string) string {
	t.Helper()
	var parts []string
	for name, body := range servers {
		parts = append(parts, fmt.Sprintf("%q: %s", name, body))
	}
	sort.Strings(parts)
	p := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(p, []byte(`{"mcpServers": {`+strings.Join(parts, ",\n")+`}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// buildBinary builds the toolwire binary into dir, for all tests; its path
// goes to TOOLWIRE_TEST_BINARY.
func buildBinary(dir string) error {
	bin := filepath.Join(dir, "toolwire")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		return fmt.Errorf("go build: %v\n%s", err, out)
	}
	return os.Setenv("TOOLWIRE_TEST_BINARY", bin)
}

func build(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("TOOLWIRE_TEST_BINARY")
	if bin == "" {
		t.Fatal("TestMain did not build the binary")
	}
	return bin
}

// result is what a run of the binary gave.
type result struct {
	stdout, stderr string
	code           int
	took           time.Duration
}

// runEnv runs the binary with extra environment ("KEY=value"; "KEY="
// unsets nothing but sets it empty) and stdin.
func runEnv(t *testing.T, env []string, stdin string, args ...string) result {
	t.Helper()
	cmd := exec.Command(build(t), args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = strings.NewReader(stdin)
	return runCmd(t, cmd)
}

// startPiped starts cmd with pipes to its stdin and from its stdout, its
// stderr kept; it is killed when the test ends.
func startPiped(t *testing.T, cmd *exec.Cmd) (io.WriteCloser, io.ReadCloser, *syncBuffer) {
	t.Helper()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	return stdin, stdout, stderr
}

// runCmd runs cmd and returns what it printed and its exit status.
func runCmd(t *testing.T, cmd *exec.Cmd) result {
	t.Helper()
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	start := time.Now()
	err := cmd.Run()
	r := result{stdout: o.String(), stderr: e.String(), took: time.Since(start)}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return r
}

func run(t *testing.T, bin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	r := runEnv(t, nil, "", args...)
	return r.stdout, r.stderr, r.code
}

// syncBuffer is a bytes.Buffer safe for a process to write while a test
// reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// serveHTTPForTest runs `toolwire serve --http` on a free port with more
// arguments, and returns its address and its stderr.
func serveHTTPForTest(t *testing.T, args ...string) string {
	addr, _ := serveHTTPWithLog(t, args...)
	return addr
}

func serveHTTPWithLog(t *testing.T, args ...string) (string, *syncBuffer) {
	t.Helper()
	_, addr, log := serveHTTPProcess(t, args...)
	return addr, log
}

// serveHTTPProcess is serveHTTPWithLog that also returns the server's
// process, stopped when the test ends.
func serveHTTPProcess(t *testing.T, args ...string) (*exec.Cmd, string, *syncBuffer) {
	t.Helper()
	cmd := exec.Command(build(t), append([]string{"serve", "--http", "127.0.0.1:0"}, args...)...)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	m := regexp.MustCompile(`http://([0-9.:]+)/mcp`).FindStringSubmatch(line)
	if err != nil || m == nil {
		t.Fatalf("serve printed %q (%v); stderr: %s", line, err, stderr)
	}
	return cmd, m[1], stderr
}

// waitFor waits (a bounded while) for s() to contain want.
func waitFor(t *testing.T, s func() string, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(s(), want) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
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
		{"unknown key", `{"mcpServers": {"x": {"command": "true", "argz": []}}}`, []string{`server "x"`, `unknown key "argz" ignored`}},
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
