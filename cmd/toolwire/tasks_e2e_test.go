package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/toolwire/toolwire/internal/testpeers"
	"github.com/toolwire/toolwire/mcp"
)

// Tool calls that servers run as tasks (MCP's Tasks extension, issue 23),
// through toolwire call and toolwire run: the task's status is shown while
// it runs, its result returned, and a Ctrl-C cancels it on the server.

// startOnTerminal starts the binary on a terminal; wait returns its exit
// status, failing the test if it does not end within limit.
func startOnTerminal(t *testing.T, env []string, args ...string) (tty *os.File, scr *screen, wait func(limit time.Duration) int) {
	t.Helper()
	cmd := exec.Command(build(t), args...)
	cmd.Env = append(os.Environ(), env...)
	tty, err := pty.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); tty.Close() })
	scr = &screen{}
	go func() { _, _ = tty.WriteTo(scr) }()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	return tty, scr, func(limit time.Duration) int {
		t.Helper()
		select {
		case <-done:
			time.Sleep(100 * time.Millisecond) // the last output, through the terminal
			return cmd.ProcessState.ExitCode()
		case <-time.After(limit):
			t.Fatalf("toolwire %s did not end within %s:\n%s", args[0], limit, scr.String())
			return -1
		}
	}
}

// taskEnv is the environment of a toolwire whose kept tasks (toolwire
// tasks) go to a directory of the test's, returned.
func taskEnv(t *testing.T) ([]string, string) {
	cache := t.TempDir()
	return []string{"XDG_CACHE_HOME=" + cache, "HOME=" + t.TempDir()}, filepath.Join(cache, "toolwire", "tasks.json")
}

// keptTask waits (a bounded while) for toolwire call to keep the task its
// call became, and returns its id.
func keptTask(t *testing.T, path string, scr *screen) string {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		var entries []taskEntry
		if b, err := os.ReadFile(path); err == nil && json.Unmarshal(b, &entries) == nil && len(entries) > 0 {
			return entries[0].Task
		}
	}
	t.Fatalf("the call never became a task:\n%s", scr.String())
	return ""
}

// TestCallEverythingTask: toolwire call of server-everything's task-only
// tool shows the task's stages on the terminal and prints the report.
func TestCallEverythingTask(t *testing.T) {
	node := testpeers.Node(t)
	everything := filepath.Join(testpeers.Package(t, "@modelcontextprotocol/server-everything"), "dist", "index.js")
	cfg := writeConfig(t, map[string]string{"everything": fmt.Sprintf(`{"command": %q, "args": [%q]}`, node, everything)})
	env, _ := taskEnv(t)
	_, scr, wait := startOnTerminal(t, env, "call", "--config", cfg, "everything__simulate-research-query", `{"topic":"tasks"}`)
	if code := wait(60 * time.Second); code != 0 {
		t.Fatalf("exit %d:\n%s", code, scr.String())
	}
	out := scr.String()
	t.Logf("the terminal:\n%s", out)
	if !strings.Contains(out, "Research Report: tasks") {
		t.Errorf("no report printed:\n%s", out)
	}
	shown := 0
	for _, stage := range []string{"Gathering sources", "Analyzing content", "Synthesizing findings", "Generating report..."} {
		if strings.Contains(out, "call everything__simulate-research-query  "+stage) {
			shown++
		}
	}
	if shown < 2 {
		t.Errorf("%d of the task's 4 stages shown on its progress line, want 2 or more:\n%s", shown, out)
	}
}

// dataTaskServer serves the data toolset over HTTP (-v) with a table of
// 2,000 numbers loaded, for queries long enough to become tasks; it
// returns the server's process and log, a configuration naming it
// "data", and the table's handle.
func dataTaskServer(t *testing.T) (srv *exec.Cmd, addr string, log *syncBuffer, cfg, table string) {
	t.Helper()
	dir := t.TempDir()
	var csv strings.Builder
	csv.WriteString("i\n")
	for i := range 2000 {
		fmt.Fprintln(&csv, i)
	}
	if err := os.WriteFile(filepath.Join(dir, "nums.csv"), []byte(csv.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	// A call becomes a task after 100 ms, so that a query of a second
	// or so is one on any machine.
	srv, addr, log = serveHTTPProcess(t, "data", "-v", "--allow-dir", dir, "--task-after", "100ms")
	cfg = writeConfig(t, map[string]string{"data": fmt.Sprintf(`{"url": "http://%s/mcp"}`, addr)})
	out, errOut, code := run(t, build(t), "call", "--config", cfg, "data__load_csv", fmt.Sprintf(`{"path": %q}`, filepath.Join(dir, "nums.csv")))
	var loaded struct{ Table string }
	if code != 0 || json.Unmarshal([]byte(out), &loaded) != nil || loaded.Table == "" {
		t.Fatalf("load_csv: exit %d\n%s%s", code, out, errOut)
	}
	return srv, addr, log, cfg, loaded.Table
}

// endless is a query that runs until cancelled: a count of 2000^4 rows.
const endless = "SELECT count(*) AS n FROM t a, t b, t c, t d"

// cpuRate returns the CPU time a process takes per second of wall time,
// measured over d (Linux).
func cpuRate(t *testing.T, pid int, d time.Duration) float64 {
	t.Helper()
	cpu := func() time.Duration {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			t.Skipf("no /proc to measure the server's CPU time: %v", err)
		}
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
		utime, _ := strconv.ParseInt(f[11], 10, 64)
		stime, _ := strconv.ParseInt(f[12], 10, 64)
		return time.Duration(utime+stime) * 10 * time.Millisecond // USER_HZ 100
	}
	before, start := cpu(), time.Now()
	time.Sleep(d)
	return float64(cpu()-before) / float64(time.Since(start))
}

// stopsWorking checks, on the server's side, that the query of a
// cancelled task stopped: its CPU use, high while it ran (busy), falls
// to a quarter of it within 10 s.
func stopsWorking(t *testing.T, pid int, busy float64) {
	t.Helper()
	if busy < 0.1 {
		t.Fatalf("the server took %.2f s of CPU per second while the query ran: not running, so its stop cannot be seen", busy)
	}
	rate := 0.0
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		if rate = cpuRate(t, pid, 500*time.Millisecond); rate < busy/4 {
			t.Logf("the server's CPU: %.2f s/s while the query ran, %.2f after the cancellation", busy, rate)
			return
		}
	}
	t.Errorf("the server still takes %.2f s of CPU per second after the cancellation (%.2f while the query ran): the query goes on", rate, busy)
}

// TestCallTaskInterrupted: toolwire call of the data toolset's query,
// long enough to become a task, on a terminal: the task's status shows
// while it runs; a Ctrl-C cancels the task on the server (tasks/get there
// says cancelled, and the server stops working), and call exits at once
// with status 130 saying so.
func TestCallTaskInterrupted(t *testing.T) {
	srv, addr, log, cfg, table := dataTaskServer(t)
	env, kept := taskEnv(t)
	args, _ := json.Marshal(map[string]any{"sql": endless, "tables": map[string]string{"t": table}})
	tty, scr, wait := startOnTerminal(t, env, "call", "--config", cfg, "data__query", string(args))
	id := keptTask(t, kept, scr)
	scr.waitFor(t, "call data__query  working")
	busy := cpuRate(t, srv.Process.Pid, time.Second)

	if _, err := tty.Write([]byte{3}); err != nil { // Ctrl-C
		t.Fatal(err)
	}
	interrupted := time.Now()
	code := wait(10 * time.Second)
	took := time.Since(interrupted)
	out := scr.String()
	t.Logf("call exited %d, %s after the Ctrl-C:\n%s", code, took.Round(time.Millisecond), out)
	if code != 130 {
		t.Errorf("exit status %d after a Ctrl-C, want 130", code)
	}
	if want := "task " + id + ": interrupt signal received (cancelled on the server)"; !strings.Contains(out, want) {
		t.Errorf("the terminal does not say %q:\n%s", want, out)
	}
	if took > 5*time.Second {
		t.Errorf("call took %s to exit after the Ctrl-C", took)
	}

	// The server's side: the task reads as cancelled, and its query
	// stopped.
	taskCancelledOnServer(t, addr, id, log.String())
	stopsWorking(t, srv.Process.Pid, busy)
	if b, _ := os.ReadFile(kept); strings.Contains(string(b), id) {
		t.Errorf("the cancelled task is still kept for toolwire tasks: %s", b)
	}
}

// TestRunTask: toolwire run with a model that calls the data toolset's
// query, long enough to become a task: the task's status is shown while
// it runs and its result reaches the model; and a call that runs on is
// cancelled on the server by a SIGINT, run exiting with status 130.
func TestRunTask(t *testing.T) {
	srv, _, log, cfg, table := dataTaskServer(t)
	callQuery := func(sql string) string {
		args, _ := json.Marshal(map[string]any{"sql": sql, "tables": map[string]string{"t": table}})
		fn, _ := json.Marshal(map[string]any{"name": "data__query", "arguments": string(args)})
		return `{"choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":` + string(fn) + `}]}}]}
{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`
	}
	env, _ := taskEnv(t)

	t.Run("completed", func(t *testing.T) {
		// 2000^3 rows: from half a second to a few here, past the
		// 100 ms after which this server makes the call a task.
		m := newScriptedModel(t, callQuery("SELECT count(*) AS n FROM t a, t b, t c"),
			`{"choices":[{"index":0,"delta":{"content":"8 billion."}}]}
{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`)
		r := runEnv(t, append(env, "OPENAI_API_KEY=test-key", "OPENAI_BASE_URL="+m.URL+"/v1"), "",
			"run", "--config", cfg, "--toolsets=", "--yes", "-m", "openai:test-model", "--timeout", "60s", "How many?")
		t.Logf("stderr:\n%s", r.stderr)
		if r.code != 0 || r.stdout != "8 billion.\n" {
			t.Fatalf("exit %d, stdout %q", r.code, r.stdout)
		}
		if !strings.Contains(r.stderr, "toolwire: … data__query: working") {
			t.Errorf("no progress of the task shown:\n%s", r.stderr)
		}
		if len(m.requests) != 2 {
			t.Fatalf("%d model requests, want 2", len(m.requests))
		}
		second := m.messages(1)
		if last := second[len(second)-1]; last["role"] != "tool" || !strings.Contains(fmt.Sprint(last["content"]), "8000000000") {
			t.Errorf("the result sent to the model: %v", last)
		}
	})

	t.Run("interrupted", func(t *testing.T) {
		m := newScriptedModel(t, callQuery(endless))
		cancels := strings.Count(log.String(), "method=tasks/cancel")
		cmd := exec.Command(build(t), "run", "--config", cfg, "--toolsets=", "--yes", "-m", "openai:test-model", "How many?")
		cmd.Env = append(append(os.Environ(), env...), "OPENAI_API_KEY=test-key", "OPENAI_BASE_URL="+m.URL+"/v1")
		var stderr syncBuffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill() })
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		waitFor(t, stderr.String, "… data__query: working")
		if !strings.Contains(stderr.String(), "… data__query: working") {
			_ = cmd.Process.Kill()
			t.Fatalf("no progress of the task shown:\n%s", stderr.String())
		}
		busy := cpuRate(t, srv.Process.Pid, time.Second)
		if err := cmd.Process.Signal(os.Interrupt); err != nil {
			t.Fatal(err)
		}
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("run did not end within 10s of SIGINT:\n%s", stderr.String())
		}
		t.Logf("stderr:\n%s", stderr.String())
		if code := cmd.ProcessState.ExitCode(); code != 130 {
			t.Errorf("exit status %d after SIGINT, want 130", code)
		}
		if !strings.Contains(stderr.String(), "cancelled on the server") {
			t.Errorf("run does not say the task was cancelled:\n%s", stderr.String())
		}
		if n := strings.Count(log.String(), "method=tasks/cancel"); n != cancels+1 {
			t.Errorf("the server logged %d tasks/cancel, want 1:\n%s", n-cancels, log)
		}
		stopsWorking(t, srv.Process.Pid, busy)
	})
}

// TestCallEverythingTaskInterrupted: a Ctrl-C during toolwire call of
// server-everything's task-only tool reaches toolwire only (the server, on
// stdio, runs in a process group of its own: it gets no SIGINT), which
// sends the server tasks/cancel (seen in what the server read) and exits with status 130
// (after the server's own ~2.5 s shutdown once its stdin closes).
func TestCallEverythingTaskInterrupted(t *testing.T) {
	node := testpeers.Node(t)
	everything := filepath.Join(testpeers.Package(t, "@modelcontextprotocol/server-everything"), "dist", "index.js")
	dir := t.TempDir()
	// The server, keeping a copy of what it reads, and noting a SIGINT
	// (server-everything closes itself on one).
	read, preload := filepath.Join(dir, "stdin.log"), filepath.Join(dir, "keep-stdin.cjs")
	if err := os.WriteFile(preload, []byte(`const keep = d => require("fs").appendFileSync(process.env.STDIN_LOG, d);
process.stdin.on("data", keep);
process.on("SIGINT", () => keep("\n<SIGINT>\n"));`), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, map[string]string{"everything": fmt.Sprintf(`{"command": %q, "args": ["--require", %q, %q], "env": {"STDIN_LOG": %q}}`, node, preload, everything, read)})
	env, kept := taskEnv(t)
	tty, scr, wait := startOnTerminal(t, env, "call", "--config", cfg, "everything__simulate-research-query", `{"topic":"tasks"}`)
	id := keptTask(t, kept, scr)
	// Interrupted mid-task: once a stage shows, two or three are left.
	for deadline := time.Now().Add(20 * time.Second); !regexp.MustCompile(`simulate-research-query  (Gathering|Analyzing|Synthesizing)`).MatchString(scr.String()); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no stage of the task shown:\n%s", scr.String())
		}
	}
	if _, err := tty.Write([]byte{3}); err != nil {
		t.Fatal(err)
	}
	interrupted := time.Now()
	code := wait(10 * time.Second)
	took := time.Since(interrupted)
	t.Logf("call exited %d, %s after the Ctrl-C:\n%s", code, took.Round(time.Millisecond), scr.String())
	if code != 130 || took > 5*time.Second || strings.Contains(scr.String(), "Research Report") {
		t.Errorf("exit %d after %s, want 130 at once and no report", code, took)
	}
	if want := "task " + id + ": interrupt signal received (cancelled on the server)"; !strings.Contains(scr.String(), want) {
		t.Errorf("the terminal does not say %q", want)
	}
	b, err := os.ReadFile(read)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "<SIGINT>") {
		t.Errorf("the terminal's Ctrl-C reached the server: it is in toolwire's process group")
	}
	if !regexp.MustCompile(`"method":"tasks/cancel","params":\{[^}]*"taskId":"` + id + `"`).Match(b) {
		t.Errorf("the server was not sent tasks/cancel for %s; it read:\n%s", id, b)
	}
}

// taskCancelledOnServer checks, on the server at addr (HTTP), that task id
// reads as cancelled and that the server's log shows the tasks/cancel.
func taskCancelledOnServer(t *testing.T, addr, id, log string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := (&mcp.Client{Info: mcp.Implementation{Name: "check", Version: "1"}}).Connect(ctx, &mcp.HTTPTransport{URL: "http://" + addr + "/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var task mcp.Task
	if err := s.Call(ctx, mcp.MethodTasksGet, &mcp.TaskParams{TaskID: id}, &task); err != nil {
		t.Fatalf("tasks/get %s: %v", id, err)
	}
	if task.Status != mcp.TaskCancelled {
		t.Errorf("the server has task %s %s, want cancelled", id, task.Status)
	}
	if !strings.Contains(log, "method=tasks/cancel") {
		t.Errorf("the server logged no tasks/cancel:\n%s", log)
	}
}
