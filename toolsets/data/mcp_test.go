package data

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/testredis"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/toolsets/data/demo"
)

// toolwireBin is the toolwire binary TestMain built, with the data
// toolset, for the tests that run it as a server process.
var toolwireBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "toolwire-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	toolwireBin = filepath.Join(dir, "toolwire")
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// buildToolwire builds the toolwire binary once, for the tests that need
// it.
var buildOnce = sync.OnceValue(func() error {
	cmd := exec.Command("go", "build", "-o", toolwireBin, "./cmd/toolwire")
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("building toolwire: %v\n%s", err, out)
	}
	return nil
})

func toolwire(t *testing.T) string {
	t.Helper()
	if err := buildOnce(); err != nil {
		t.Fatal(err)
	}
	return toolwireBin
}

func callTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (string, bool) {
	t.Helper()
	b, _ := json.Marshal(args)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, name, b)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res.ToolResult().ForModel().Text, res.IsError
}

func mustTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) string {
	t.Helper()
	text, isErr := callTool(t, cs, name, args)
	if isErr {
		t.Fatalf("%s(%v): %s", name, args, text)
	}
	return text
}

// TestCSVFlowOverStdio is the CSV flow (load, drop missing, describe)
// through `toolwire serve data`
// over stdio on a generated 50,000-row CSV with missing cells: what the
// model reads and writes is under 1% of the naive flow's, and the cleaned
// table equals a direct computation on the file, cell for cell.
func TestCSVFlowOverStdio(t *testing.T) {
	dir := t.TempDir()
	var csvText bytes.Buffer
	must(t, demo.GenerateCSV(&csvText, 50000, 1))
	must(t, os.WriteFile(filepath.Join(dir, "sales.csv"), csvText.Bytes(), 0o644))
	var progress []string
	var mu sync.Mutex
	c := &mcp.Client{Info: mcp.Implementation{Name: "csvflow-test", Version: "1"}, Notify: func(method string, params json.RawMessage) {
		if method == "notifications/progress" {
			mu.Lock()
			progress = append(progress, string(params))
			mu.Unlock()
		}
	}}
	ctx := context.Background()
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: toolwire(t), Args: []string{"serve", "data"}, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	r, err := demo.Run(ctx, cs, "sales.csv", filepath.Join(dir, "sales.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Handle*100 > r.Naive {
		t.Errorf("with handles the model handles %d bytes, more than 1%% of the naive flow's %d", r.Handle, r.Naive)
	}
	t.Logf("CSV flow over stdio: %d bytes (~%d tokens) with handles, %d (~%d tokens) naive: %.3f%%",
		r.Handle, demo.Tokens(r.Handle), r.Naive, demo.Tokens(r.Naive), 100*float64(r.Handle)/float64(r.Naive))
	var loaded TableInfo
	must(t, json.Unmarshal([]byte(r.Steps[0].Result), &loaded))
	if loaded.Rows != 50000 || loaded.Missing == 0 {
		t.Fatalf("load_csv: %s", r.Steps[0].Result)
	}

	mustTool(t, cs, "save_csv", map[string]any{"table": r.Cleaned, "path": "cleaned.csv"})
	want, err := demo.DropMissing(bytes.NewReader(csvText.Bytes()))
	must(t, err)
	got, err := os.ReadFile(filepath.Join(dir, "cleaned.csv"))
	must(t, err)
	diff, err := demo.SameCells(bytes.NewReader(want), bytes.NewReader(got))
	must(t, err)
	if diff != "" {
		t.Fatalf("the cleaned table differs from the direct computation: %s", diff)
	}

	// A long load reports progress: the client asked for it with a token.
	var res mcp.CallToolResult
	params := &mcp.CallToolParams{Name: "load_csv", Arguments: json.RawMessage(`{"path":"sales.csv"}`)}
	params.Meta = &mcp.RequestMeta{ProgressToken: json.RawMessage(`"load-1"`)}
	must(t, cs.Call(ctx, mcp.MethodToolsCall, params, &res))
	mu.Lock()
	defer mu.Unlock()
	if len(progress) < 2 || !strings.Contains(progress[0], `"message":"reading sales.csv (`) ||
		!strings.Contains(progress[len(progress)-1], `"message":"loaded sales.csv: 50000 rows"`) {
		t.Fatalf("progress notifications: %v", progress)
	}
}

// server is a `toolwire serve data --http` process.
type server struct {
	cmd *exec.Cmd
	url string
}

func startServer(t *testing.T, dir string, args ...string) *server {
	t.Helper()
	return startServerEnv(t, dir, nil, args...)
}

// startServerEnv starts a server with variables added to its environment
// ("NAME=value").
func startServerEnv(t *testing.T, dir string, env []string, args ...string) *server {
	t.Helper()
	cmd := exec.Command(toolwire(t), append([]string{"serve", "data", "--http", "127.0.0.1:0"}, args...)...)
	cmd.Dir = dir
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	s := &server{cmd: cmd}
	t.Cleanup(s.kill)
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("the server printed no address: %v", err)
	}
	// toolwire: serving 12 tools at http://127.0.0.1:PORT/mcp (...)
	_, rest, _ := strings.Cut(line, " at ")
	s.url, _, _ = strings.Cut(rest, " ")
	if !strings.HasPrefix(s.url, "http://127.0.0.1:") {
		t.Fatalf("server said %q", line)
	}
	return s
}

// kill stops the server process by its PID, at once.
func (s *server) kill() {
	if s.cmd.Process != nil && s.cmd.ProcessState == nil {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
	}
}

func connect(t *testing.T, url, token string) *mcp.ClientSession {
	t.Helper()
	c := &mcp.Client{Info: mcp.Implementation{Name: "replica-test", Version: "1"}}
	cs, err := c.Connect(context.Background(), &mcp.HTTPTransport{URL: url, Header: http.Header{"Authorization": {"Bearer " + token}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestReplicas: two `toolwire serve data --http` processes share one real
// Redis and one data directory. A table loaded through the first is
// described, filtered and saved through the second; after the first is
// killed nothing is lost; another client reaches none of it.
func TestReplicas(t *testing.T) {
	rds := testredis.Start(t)
	work, dataDir := t.TempDir(), t.TempDir()
	must(t, os.WriteFile(filepath.Join(work, "sales.csv"), []byte(sales), 0o644))
	flags := []string{"--data-dir", dataDir, "--redis", rds.Addr}
	s1 := startServer(t, work, flags...)
	s2 := startServer(t, work, flags...)
	a1, a2 := connect(t, s1.url, "alice"), connect(t, s2.url, "alice")
	if a1.ProtocolVersion() != "2026-07-28" {
		t.Fatalf("protocol %s: replicas are for the stateless 2026-07-28 protocol", a1.ProtocolVersion())
	}

	h, _ := tableOf(t, mustTool(t, a1, "load_csv", map[string]any{"path": "sales.csv"}))
	var d Description
	must(t, json.Unmarshal([]byte(mustTool(t, a2, "describe", map[string]any{"table": h})), &d))
	if d.Rows != 5 || len(d.Columns) != 5 {
		t.Fatalf("describe through the second replica: %+v", d)
	}
	north, fi := tableOf(t, mustTool(t, a2, "filter", map[string]any{"table": h, "column": "region", "op": "eq", "value": "north"}))
	if fi.Rows != 2 {
		t.Fatalf("filter through the second replica: %+v", fi)
	}
	mustTool(t, a2, "save_csv", map[string]any{"table": north, "path": "north.csv"})

	s1.kill()
	clean, ci := tableOf(t, mustTool(t, a2, "drop_missing", map[string]any{"table": h}))
	if ci.Rows != 3 {
		t.Fatalf("drop_missing after the first replica died: %+v", ci)
	}
	mustTool(t, a2, "save_csv", map[string]any{"table": clean, "path": "clean.csv"})
	for file, want := range map[string]string{
		"north.csv": "date,region,product,units,price\n2024-01-02,north,apple,3,1.5\n2024-01-03,north,pear,5,2.0\n",
		"clean.csv": "date,region,product,units,price\n2024-01-02,north,apple,3,1.5\n2024-01-03,north,pear,5,2.0\n2024-01-04,south,apple,7,1.25\n",
	} {
		got, err := os.ReadFile(filepath.Join(work, file))
		if err != nil || string(got) != want {
			t.Errorf("%s: %q, %v; want %q", file, got, err, want)
		}
	}

	// Another caller, on either replica, reaches none of Alice's tables.
	b2 := connect(t, s2.url, "bob")
	text, isErr := callTool(t, b2, "describe", map[string]any{"table": h})
	if !isErr || text != "handle "+h+" is unknown to this server: it may belong to another session or user, the server may have restarted since it was made, or it expired; if you still need the table, load the file again (load_csv)" {
		t.Fatalf("Bob describing Alice's table: %q", text)
	}
	if text, isErr := callTool(t, b2, "release", map[string]any{"table": clean}); !isErr || !strings.Contains(text, "expired") {
		t.Fatalf("Bob releasing Alice's table: %q", text)
	}
	mustTool(t, a2, "head", map[string]any{"table": clean})

	// Redis goes away: a clear error, the server stays up; it comes back,
	// and so does the table.
	rds.Stop()
	text, isErr = callTool(t, a2, "head", map[string]any{"table": clean})
	if !isErr || !strings.Contains(text, "handle store unavailable") || !strings.Contains(text, "try again shortly") {
		t.Fatalf("with Redis down: %q", text)
	}
	rds.Restart()
	mustTool(t, a2, "head", map[string]any{"table": clean})
}

// TestTwoClientsOneServer: on one `toolwire serve data --http` server, a
// table belongs to the client that loaded it, whether clients speak the
// legacy protocol (a session each) or 2026-07-28 (credentials each): no
// other client reads, describes or releases it, and to them its handle
// reads exactly like one that never existed.
func TestTwoClientsOneServer(t *testing.T) {
	work := t.TempDir()
	must(t, os.WriteFile(filepath.Join(work, "sales.csv"), []byte(sales), 0o644))
	s := startServer(t, work)
	legacy := func(token string) *mcp.ClientSession {
		c := &mcp.Client{Info: mcp.Implementation{Name: "legacy", Version: "1"}, ProtocolVersion: "2025-06-18"}
		cs, err := c.Connect(context.Background(), &mcp.HTTPTransport{URL: s.url, Header: http.Header{"Authorization": {"Bearer " + token}}})
		must(t, err)
		t.Cleanup(func() { cs.Close() })
		if cs.ProtocolVersion() != "2025-06-18" {
			t.Fatalf("legacy client got %s", cs.ProtocolVersion())
		}
		return cs
	}
	for _, c := range []struct {
		name string
		a, b *mcp.ClientSession
	}{
		{"legacy sessions", legacy("same"), legacy("same")}, // one token, two sessions: still two callers
		{"2026-07-28 requests", connect(t, s.url, "alice"), connect(t, s.url, "bob")},
		{"legacy and 2026-07-28", legacy("alice"), connect(t, s.url, "alice")},
	} {
		t.Run(c.name, func(t *testing.T) {
			h, _ := tableOf(t, mustTool(t, c.a, "load_csv", map[string]any{"path": "sales.csv"}))
			unknown := "tbl_" + strings.Repeat("A", 22)
			for _, tool := range []string{"head", "describe", "release"} {
				got, isErr := callTool(t, c.b, tool, map[string]any{"table": h})
				never, _ := callTool(t, c.b, tool, map[string]any{"table": unknown})
				if !isErr || strings.ReplaceAll(got, h, unknown) != never {
					t.Errorf("B's %s on A's table: %q (on a handle that never existed: %q)", tool, got, never)
				}
			}
			mustTool(t, c.a, "describe", map[string]any{"table": h})
		})
	}
}
