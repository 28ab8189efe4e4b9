package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/workflow"
)

// A recorded workflow served as a tool (toolwire serve --workflow): called
// with toolwire call, over stdio and, as a task, over HTTP; refused at
// start when it cannot be served.

// workflowDir is a directory holding two CSV files (sales.csv, the
// recorded one, and other.csv) and the README's recorded workflow,
// seed000.json, whose input defaults to sales.csv there.
func workflowDir(t *testing.T) (dir, file string) {
	t.Helper()
	dir = t.TempDir()
	for name, from := range map[string]string{"sales.csv": "../../testdata/data/sales.csv", "other.csv": "../../examples/sales-2024.csv"} {
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	wf, err := workflow.Load("../../examples/seed000.json")
	if err != nil {
		t.Fatal(err)
	}
	wf.Inputs[0].Default = filepath.Join(dir, "sales.csv")
	file = filepath.Join(dir, "seed000.json")
	if err := wf.Save(file); err != nil {
		t.Fatal(err)
	}
	return dir, file
}

// slowWorkflow puts before the nodes of the workflow in file one that
// counts the rows of a recursive query up to rows (about 25 µs a row
// here) and one that describes its result; it returns the new file.
func slowWorkflow(t *testing.T, file string, rows int) string {
	t.Helper()
	wf, err := workflow.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	sql := fmt.Sprintf("WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < %d) SELECT count(*) AS n FROM r", rows)
	wf.Nodes = append([]workflow.Node{
		{ID: "count", Tool: "query", InputParameters: []workflow.Parameter{
			{Name: "sql", Type: "str", Value: sql}, {Name: "tables", Type: "dict", Value: map[string]any{}}}},
		{ID: "describe_count", Tool: "describe", InputParameters: []workflow.Parameter{{Name: "table", Type: "str", Value: ""}}},
	}, wf.Nodes...)
	wf.Edges = append(wf.Edges, workflow.Edge{From: "count", Output: "handle:tbl", To: "describe_count", Parameter: "table"})
	slow := filepath.Join(filepath.Dir(file), "slow.json")
	if err := wf.Save(slow); err != nil {
		t.Fatal(err)
	}
	return slow
}

// TestServeWorkflow: toolwire call of a workflow served over stdio prints
// what toolwire workflow run prints for the same inputs, the defaults or
// one given as key=value; an input of the wrong type is the argument
// pipeline's error; a node failing makes a tool error naming it.
func TestServeWorkflow(t *testing.T) {
	dir, file := workflowDir(t)
	bin := build(t)
	call := func(args ...string) result {
		return runEnv(t, nil, "", append(append([]string{"call", "toolwire__clean"}, args...), "--", bin, "serve", "data", "--allow-dir", dir, "--workflow", "clean="+file)...)
	}
	for _, tc := range []struct {
		name string
		set  []string
	}{
		{"defaults", nil},
		{"an input given", []string{"path=" + filepath.Join(dir, "other.csv")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"workflow", "run", file, "--allow-dir", dir}
			for _, s := range tc.set {
				args = append(args, "--set", s)
			}
			want := runEnv(t, nil, "", args...)
			if want.code != 0 || !strings.HasPrefix(want.stdout, `{"rows":`) {
				t.Fatalf("workflow run: exit %d\n%s%s", want.code, want.stdout, want.stderr)
			}
			got := call(tc.set...)
			if got.code != 0 || got.stdout != want.stdout {
				t.Errorf("call: exit %d, printed\n%s\nwant what workflow run printed:\n%s\nstderr: %s", got.code, got.stdout, want.stdout, got.stderr)
			}
		})
	}
	if want := `"rows":941,`; !strings.Contains(call("path="+filepath.Join(dir, "other.csv")).stdout, want) {
		t.Errorf("other.csv's rows are not %s", want)
	}

	t.Run("an input without a default", func(t *testing.T) {
		wf, err := workflow.Load(file)
		if err != nil {
			t.Fatal(err)
		}
		wf.Inputs[0].Default = nil
		bare := filepath.Join(dir, "bare.json")
		if err := wf.Save(bare); err != nil {
			t.Fatal(err)
		}
		serve := []string{"--", bin, "serve", "data", "--allow-dir", dir, "--workflow", bare}
		r := runEnv(t, nil, "", append([]string{"call", "toolwire__bare", "path=" + filepath.Join(dir, "other.csv")}, serve...)...)
		if r.code != 0 || !strings.Contains(r.stdout, `"rows":941,`) {
			t.Errorf("exit %d, stdout %q, stderr %q: want other.csv described", r.code, r.stdout, r.stderr)
		}
		r = runEnv(t, nil, "", append([]string{"call", "toolwire__bare"}, serve...)...)
		if r.code != 1 || !strings.Contains(r.stderr, "path") {
			t.Errorf("without the input: exit %d, stderr %q: want 1 and an error naming path", r.code, r.stderr)
		}
	})
	t.Run("wrong type", func(t *testing.T) {
		r := call("path:=5")
		if want := `argument "path": expected string, got number 5`; r.code != 1 || !strings.Contains(r.stderr, want) {
			t.Errorf("exit %d, stderr %q: want 1 and %q", r.code, r.stderr, want)
		}
	})
	t.Run("a node fails", func(t *testing.T) {
		r := call("path=" + filepath.Join(dir, "missing.csv"))
		for _, want := range []string{"node load_csv (tool load_csv) failed:", "missing.csv", "2 node(s) depending on them were not run"} {
			if r.code != 1 || !strings.Contains(r.stderr, want) {
				t.Errorf("exit %d, stderr %q: want 1 and %q", r.code, r.stderr, want)
			}
		}
	})
}

// TestServeWorkflowRefused: a workflow that cannot be served stops the
// server before it serves anything (exit status 2), saying which file and
// what to do.
func TestServeWorkflowRefused(t *testing.T) {
	dir, file := workflowDir(t)
	invalid := filepath.Join(dir, "invalid.json")
	if err := os.WriteFile(invalid, []byte(`{"version": "toolwire.workflow/v1", "nodes": [`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"a tool not served", []string{"--toolset", "calc", "--workflow", file},
			[]string{"--workflow " + file + " does not fit the tools served", `node load_csv: unknown tool "load_csv"`, "serve the toolsets and --servers it calls"}},
		{"a served tool's name", []string{"data", "--workflow", "query=" + file},
			[]string{"--workflow query=" + file + ": the server already has a tool named query: name the workflow's tool, as in --workflow query_workflow="}},
		{"twice the same name", []string{"data", "--workflow", file, "--workflow", file},
			[]string{"the server already has a tool named seed000"}},
		{"an invalid file", []string{"data", "--workflow", invalid},
			[]string{"--workflow " + invalid + ": " + invalid + ": workflow: not valid workflow JSON"}},
		{"no file", []string{"data", "--workflow", filepath.Join(dir, "nope.json")},
			[]string{"nope.json: no such file or directory (record one with toolwire run --record FILE)"}},
		{"no name", []string{"data", "--workflow", "=" + file},
			[]string{"write FILE or NAME=FILE"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Over stdio with a request waiting: a server that served
			// would answer it.
			r := runEnv(t, nil, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n", append([]string{"serve"}, tc.args...)...)
			if r.code != 2 || r.stdout != "" {
				t.Errorf("exit %d, stdout %q: want 2 and nothing served", r.code, r.stdout)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr does not say %q:\n%s", w, r.stderr)
				}
			}
		})
	}
}

// TestServeWorkflowTask: over HTTP, a call of a served workflow longer
// than --task-after becomes a task: toolwire call shows its progress per
// node on the terminal and prints the result workflow run gives; a
// Ctrl-C cancels it on the server, whose query stops (that the nodes
// after it are not run is TestWorkflowToolCancel's, in package workflow).
func TestServeWorkflowTask(t *testing.T) {
	dir, file := workflowDir(t)

	t.Run("completed", func(t *testing.T) {
		slow := slowWorkflow(t, file, 40000) // about a second
		_, addr, log := serveHTTPProcess(t, "data", "-v", "--allow-dir", dir, "--task-after", "100ms", "--workflow", "clean="+slow)
		cfg := writeConfig(t, map[string]string{"data": fmt.Sprintf(`{"url": "http://%s/mcp"}`, addr)})
		other := "path=" + filepath.Join(dir, "other.csv")
		want := runEnv(t, nil, "", "workflow", "run", slow, "--allow-dir", dir, "--set", other)
		if want.code != 0 {
			t.Fatalf("workflow run: exit %d\n%s", want.code, want.stderr)
		}
		env, kept := taskEnv(t)
		_, scr, wait := startOnTerminal(t, env, "call", "--config", cfg, "data__clean", other)
		keptTask(t, kept, scr)
		scr.waitFor(t, "call data__clean  ")
		code := wait(60 * time.Second)
		out := strings.ReplaceAll(scr.String(), "\r", "")
		t.Logf("the terminal:\n%s", out)
		if code != 0 || !strings.Contains(out, want.stdout) {
			t.Errorf("exit %d; the terminal does not show what workflow run printed:\n%s", code, want.stdout)
		}
		if !strings.Contains(out, "nodes done)") {
			t.Errorf("no progress per node shown")
		}

		// With the defaults, off a terminal: a task too, the same output.
		want = runEnv(t, nil, "", "workflow", "run", slow, "--allow-dir", dir)
		polls := strings.Count(log.String(), "method=tasks/get")
		got := runEnv(t, env, "", "call", "--config", cfg, "data__clean")
		if want.code != 0 || got.code != 0 || got.stdout != want.stdout {
			t.Errorf("call with the defaults: exit %d, printed\n%s\nwant (workflow run, exit %d):\n%s", got.code, got.stdout, want.code, want.stdout)
		}
		if strings.Count(log.String(), "method=tasks/get") == polls {
			t.Errorf("the call with the defaults was not a task: no tasks/get in the server's log")
		}
	})

	t.Run("interrupted", func(t *testing.T) {
		slow := slowWorkflow(t, file, 1_000_000_000) // hours
		srv, addr, log := serveHTTPProcess(t, "data", "-v", "--allow-dir", dir, "--task-after", "100ms", "--workflow", "clean="+slow)
		cfg := writeConfig(t, map[string]string{"data": fmt.Sprintf(`{"url": "http://%s/mcp"}`, addr)})
		env, kept := taskEnv(t)
		tty, scr, wait := startOnTerminal(t, env, "call", "--config", cfg, "data__clean")
		id := keptTask(t, kept, scr)
		scr.waitFor(t, "(3 of 5 nodes done)") // the CSV described; count runs on
		busy := cpuRate(t, srv.Process.Pid, time.Second)
		if _, err := tty.Write([]byte{3}); err != nil { // Ctrl-C
			t.Fatal(err)
		}
		if code := wait(10 * time.Second); code != 130 {
			t.Errorf("exit status %d after a Ctrl-C, want 130:\n%s", code, scr.String())
		}
		if want := "task " + id + ": interrupt signal received (cancelled on the server)"; !strings.Contains(scr.String(), want) {
			t.Errorf("the terminal does not say %q:\n%s", want, scr.String())
		}
		taskCancelledOnServer(t, addr, id, log.String())
		stopsWorking(t, srv.Process.Pid, busy)
	})
}

// TestServeWorkflowRecord: a gateway that records (--record) and serves a
// workflow over its servers' tools records the calls the workflow made,
// not the workflow's own call, so that the file replays each call once.
func TestServeWorkflowRecord(t *testing.T) {
	dir, file := workflowDir(t)
	bin := build(t)
	wf, err := workflow.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	for i := range wf.Nodes {
		wf.Nodes[i].Tool = "data__" + wf.Nodes[i].Tool
	}
	gw := filepath.Join(dir, "gw.json")
	if err := wf.Save(gw); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, map[string]string{"data": fmt.Sprintf(`{"command": %q, "args": ["serve", "data", "--allow-dir", %q]}`, bin, dir)})
	record := filepath.Join(dir, "calls.json")
	r := runEnv(t, nil, "", "call", "toolwire__clean", "--", bin, "serve", "--servers", "data", "--config", cfg, "--record", record, "--workflow", "clean="+gw)
	if r.code != 0 || !strings.Contains(r.stdout, `{"rows":`) {
		t.Fatalf("call: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	got, err := workflow.Load(record)
	if err != nil {
		t.Fatal(err)
	}
	var tools []string
	for _, n := range got.Nodes {
		tools = append(tools, n.Tool)
	}
	if want := "data__load_csv data__drop_missing data__describe"; strings.Join(tools, " ") != want {
		t.Errorf("recorded %v, want %s: the workflow's calls, once each", tools, want)
	}
}
