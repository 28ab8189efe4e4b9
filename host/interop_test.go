package host

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/testpeers"
	"github.com/toolwire/toolwire/tool"
)

// call runs a tool through the one argument pipeline, as an agent would,
// and turns failures into the result a model would read.
func call(t *testing.T, reg *tool.Registry, name, args string) *tool.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := reg.Call(ctx, name, json.RawMessage(args))
	if err != nil {
		return tool.ErrorResult(err)
	}
	return res
}

func registry(t *testing.T, h *Host) *tool.Registry {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	tools, err := h.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var reg tool.Registry
	if err := reg.Add(tools...); err != nil {
		t.Fatal(err)
	}
	return &reg
}

func texts(res *tool.Result) string {
	var parts []string
	for _, c := range res.Content {
		parts = append(parts, c.Type+":"+c.Text)
	}
	return strings.Join(parts, " | ")
}

// everythingCases call server-everything's tools with valid and invalid
// arguments and say what must come back.
var everythingCases = []struct {
	tool, args string
	isError    bool
	check      func(*tool.Result) bool
}{
	{"echo", `{"message":"hello"}`, false, func(r *tool.Result) bool { return strings.Contains(r.Content[0].Text, "hello") }},
	{"echo", `{}`, true, func(r *tool.Result) bool {
		return strings.Contains(r.Content[0].Text, `missing required argument "message"`)
	}},
	{"get-sum", `{"a":2,"b":40}`, false, func(r *tool.Result) bool { return strings.Contains(r.Content[0].Text, "42") }},
	{"get-sum", `{"a":2,"b":"forty"}`, true, func(r *tool.Result) bool { return strings.Contains(r.Content[0].Text, `argument "b": expected number`) }},
	{"get-tiny-image", `{}`, false, func(r *tool.Result) bool {
		for _, c := range r.Content {
			if c.Type == tool.TypeImage && c.MimeType == "image/png" && len(c.Data) > 100 {
				return true
			}
		}
		return false
	}},
	{"get-structured-content", `{"location":"New York"}`, false, func(r *tool.Result) bool { return r.StructuredContent != nil }},
	{"get-structured-content", `{"location":"Atlantis"}`, true, nil},
	{"get-resource-links", `{"count":2}`, false, func(r *tool.Result) bool {
		n := 0
		for _, c := range r.Content {
			if c.Type == tool.TypeResourceLink && c.Link != nil && c.Link.URI != "" {
				n++
			}
		}
		return n == 2
	}},
	{"get-resource-reference", `{}`, false, func(r *tool.Result) bool {
		for _, c := range r.Content {
			if c.Type == tool.TypeResource && c.Resource != nil && c.Resource.URI != "" {
				return true
			}
		}
		return false
	}},
	{"get-annotated-message", `{"messageType":"error"}`, false, func(r *tool.Result) bool { return r.Content[0].Annotations != nil }},
	{"get-annotated-message", `{"messageType":"shouting"}`, true, nil},
	{"trigger-long-running-operation", `{"duration":0.2,"steps":2}`, false, func(r *tool.Result) bool { return strings.Contains(texts(r), "completed") }},
	{"toggle-simulated-logging", `{}`, false, func(r *tool.Result) bool { return len(r.Content) > 0 }},
	// Runs only as a 2025-11-25 task (execution.taskSupport "required").
	{"simulate-research-query", `{"topic":"tasks"}`, false, func(r *tool.Result) bool { return strings.Contains(texts(r), "Research Report: tasks") }},
}

func runEverything(t *testing.T, reg *tool.Registry) {
	for _, tc := range everythingCases {
		t.Run(tc.tool+" "+tc.args, func(t *testing.T) {
			res := call(t, reg, "everything__"+tc.tool, tc.args)
			if res.IsError != tc.isError {
				t.Fatalf("isError = %v, want %v: %s", res.IsError, tc.isError, texts(res))
			}
			if tc.check != nil && !tc.check(res) {
				t.Errorf("unexpected result: %s", texts(res))
			}
		})
	}
}

func TestInteropEverythingStdio(t *testing.T) {
	h := &Host{Config: everythingConfig(t)}
	defer h.Close()
	runEverything(t, registry(t, h))
}

// freePort returns a loopback port nobody listens on.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func TestInteropEverythingStreamableHTTP(t *testing.T) {
	node := testpeers.Node(t)
	pkg := testpeers.Package(t, "@modelcontextprotocol/server-everything")
	port := freePort(t)
	cmd := exec.Command(node, filepath.Join(pkg, "dist", "index.js"), "streamableHttp")
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "listening") {
				close(ready)
				break
			}
		}
		for sc.Scan() {
		}
	}()
	select {
	case <-ready:
	case <-time.After(20 * time.Second):
		t.Fatal("server-everything did not start")
	}
	cfg, err := ParseConfig("test.json", fmt.Appendf(nil, `{"mcpServers": {"everything": {"type": "http", "url": "http://127.0.0.1:%d/mcp"}}}`, port),
		func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	h := &Host{Config: cfg}
	defer h.Close()
	runEverything(t, registry(t, h))
}

func TestInteropFilesystem(t *testing.T) {
	node := testpeers.Node(t)
	pkg := testpeers.Package(t, "@modelcontextprotocol/server-filesystem")
	root := t.TempDir()
	root, _ = filepath.EvalSymlinks(root)
	if err := os.WriteFile(filepath.Join(root, "notes.txt"), []byte("first line\nsecond line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := ParseConfig("test.json", fmt.Appendf(nil, `{"mcpServers": {"files": {"command": %q, "args": [%q, %q]}}}`,
		node, filepath.Join(pkg, "dist", "index.js"), root), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	h := &Host{Config: cfg}
	defer h.Close()
	reg := registry(t, h)
	p := func(name string) string { return filepath.Join(root, name) }
	cases := []struct {
		tool, args string
		isError    bool
		want       string
	}{
		{"read_text_file", fmt.Sprintf(`{"path":%q}`, p("notes.txt")), false, "second line"},
		{"read_text_file", fmt.Sprintf(`{"path":%q,"head":1}`, p("notes.txt")), false, "first line"},
		{"write_file", fmt.Sprintf(`{"path":%q,"content":"written by toolwire"}`, p("out.txt")), false, ""},
		{"read_text_file", fmt.Sprintf(`{"path":%q}`, p("out.txt")), false, "written by toolwire"},
		{"list_directory", fmt.Sprintf(`{"path":%q}`, root), false, "[FILE] notes.txt"},
		{"create_directory", fmt.Sprintf(`{"path":%q}`, p("sub")), false, ""},
		{"search_files", fmt.Sprintf(`{"path":%q,"pattern":"*.txt"}`, root), false, "notes.txt"},
		{"read_text_file", `{"path":"/etc/hostname"}`, true, "outside allowed directories"},
		{"read_text_file", `{}`, true, `missing required argument "path"`},
		{"read_text_file", fmt.Sprintf(`{"path":%q}`, p("missing.txt")), true, "ENOENT"},
		{"write_file", `{"path":3}`, true, `argument "path": expected string`},
	}
	for _, tc := range cases {
		t.Run(tc.tool+" "+tc.args, func(t *testing.T) {
			res := call(t, reg, "files__"+tc.tool, tc.args)
			if res.IsError != tc.isError {
				t.Fatalf("isError = %v, want %v: %s", res.IsError, tc.isError, texts(res))
			}
			all := texts(res)
			if b, err := json.Marshal(res.StructuredContent); err == nil {
				all += string(b)
			}
			if !strings.Contains(all, tc.want) {
				t.Errorf("result %s does not contain %q", all, tc.want)
			}
		})
	}
	if b, err := os.ReadFile(p("out.txt")); err != nil || string(b) != "written by toolwire" {
		t.Errorf("out.txt = %q, %v", b, err)
	}
}
