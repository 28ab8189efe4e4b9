package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/toolwire/toolwire/toolsets/data/demo"
	"github.com/toolwire/toolwire/workflow"
)

// planner is an OpenAI-compatible model server that follows a plan: at
// each request it calls the next tool of the plan, where {table} in the
// arguments stands for the table handle the last tool returned, and at
// the end it answers. It counts the bytes it was sent.
type planner struct {
	*httptest.Server
	mu       sync.Mutex
	sent     int
	requests int
}

func newPlanner(t *testing.T, plan [][2]string, answer string) *planner {
	t.Helper()
	p := &planner{}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var body struct {
			Messages []map[string]any `json:"messages"`
		}
		if err := json.Unmarshal(b, &body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		p.mu.Lock()
		n := p.requests
		p.requests++
		p.sent += len(b)
		p.mu.Unlock()
		table := ""
		for _, m := range body.Messages { // the handle the last tool that made a table returned
			var out struct {
				Table string `json:"table"`
			}
			if c, ok := m["content"].(string); ok && m["role"] == "tool" && json.Unmarshal([]byte(c), &out) == nil && out.Table != "" {
				table = out.Table
			}
		}
		streamPlanStep(w, plan, n, "{table}", table, answer)
	}))
	t.Cleanup(p.Close)
	return p
}

// streamPlanStep answers a streamed OpenAI chat request with step n of
// plan, a tool call (its name, and its arguments with placeholder replaced
// by value), or past the plan's end with answer.
func streamPlanStep(w http.ResponseWriter, plan [][2]string, n int, placeholder, value, answer string) {
	w.Header().Set("Content-Type", "text/event-stream")
	if n >= len(plan) {
		fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":%q},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n", answer)
		return
	}
	args := strings.ReplaceAll(plan[n][1], placeholder, value)
	chunk, _ := json.Marshal(map[string]any{"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"tool_calls": []any{
		map[string]any{"index": 0, "id": fmt.Sprintf("call_%d", n), "type": "function", "function": map[string]any{"name": plan[n][0], "arguments": args}}}}}}})
	fmt.Fprintf(w, "data: %s\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n", chunk)
}

// salesCSV writes demo.GenerateCSV's table of n rows into dir.
func salesCSV(t *testing.T, dir, name string, n int, seed uint64) string {
	t.Helper()
	var buf bytes.Buffer
	if err := demo.GenerateCSV(&buf, n, seed); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// dataServer configures toolwire serve data on stdio, on the files of dir.
func dataServer(t *testing.T, dir string) string {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"command": build(t), "args": []string{"serve", "data", "--allow-dir", dir}, "env": map[string]string{"GORACE": "atexit_sleep_ms=0"}})
	return writeConfig(t, map[string]string{"data": string(b)})
}

// TestCSVFlowThroughTheAgent is the CSV flow (load, drop missing,
// describe) end to end: toolwire run,
// a scripted model, the data server on MCP stdio, a generated 50,000-row
// CSV with missing cells. The model is sent under 1% of what the naive
// flow (tools return the rows, the model passes them on) would send it,
// and the cleaned table equals a direct computation, cell for cell.
func TestCSVFlowThroughTheAgent(t *testing.T) {
	dir := t.TempDir()
	csvPath := salesCSV(t, dir, "sales.csv", 50_000, 7)
	out := filepath.Join(dir, "clean.csv")
	m := newPlanner(t, [][2]string{
		{"data__load_csv", fmt.Sprintf(`{"path":%q}`, csvPath)},
		{"data__drop_missing", `{"table":"{table}"}`},
		{"data__describe", `{"table":"{table}"}`},
		{"data__save_csv", fmt.Sprintf(`{"table":"{table}","path":%q}`, out)},
	}, "Cleaned and saved.")
	r := runEnv(t, []string{"OPENAI_API_KEY=k", "OPENAI_BASE_URL=" + m.URL + "/v1"}, "",
		"run", "--config", dataServer(t, dir), "--toolsets=", "--yes", "-m", "openai:test", "Load "+csvPath+", drop the rows with missing cells, describe it and save it.")
	if r.code != 0 || !strings.Contains(r.stdout, "Cleaned and saved.") {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}

	raw, err := os.ReadFile(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	want, err := demo.DropMissing(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if diff, err := demo.SameCells(bytes.NewReader(got), bytes.NewReader(want)); err != nil || diff != "" {
		t.Fatalf("the saved table differs from the direct computation: %s %v", diff, err)
	}

	// The naive flow: load returns the rows, the model passes them to
	// drop_missing, which returns the cleaned rows, passed to describe:
	// each request re-sends the history, so the rows go 2×, then 4× the
	// original and 2× the cleaned, then that and the cleaned once more.
	s, c := len(raw), len(want)
	naive := s + (2*s + c) + (2*s + 2*c) + (2*s + 2*c)
	m.mu.Lock()
	sent := m.sent
	m.mu.Unlock()
	t.Logf("sent to the model: %d bytes (~%d tokens), naive flow: %d bytes (~%d tokens): %.3f%%", sent, demo.Tokens(int64(sent)), naive, demo.Tokens(int64(naive)), 100*float64(sent)/float64(naive))
	if demo.Tokens(int64(sent)) > demo.Tokens(int64(naive))/100 {
		t.Errorf("the model was sent %d tokens, more than 1%% of the naive flow's %d", demo.Tokens(int64(sent)), demo.Tokens(int64(naive)))
	}
}

// TestCSVFlowWorkflow records the CSV flow (load, drop missing,
// describe) through the agent, and replays the workflow on another CSV
// with no model: three nodes, two edges carried by table handles, one
// input (the CSV's path); the replay's description counts the rows a
// direct computation keeps.
func TestCSVFlowWorkflow(t *testing.T) {
	dir := t.TempDir()
	first := salesCSV(t, dir, "january.csv", 2_000, 1)
	m := newPlanner(t, [][2]string{
		{"data__load_csv", fmt.Sprintf(`{"path":%q}`, first)},
		{"data__drop_missing", `{"table":"{table}"}`},
		{"data__describe", `{"table":"{table}"}`},
	}, "Described.")
	cfg := dataServer(t, dir)
	wfPath := filepath.Join(dir, "csvflow.json")
	r := runEnv(t, []string{"OPENAI_API_KEY=k", "OPENAI_BASE_URL=" + m.URL + "/v1"}, "",
		"run", "--config", cfg, "--toolsets=", "--yes", "-m", "openai:test", "--record", wfPath, "Load "+first+", drop the rows with missing cells and describe it.")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	wf, err := workflow.Load(wfPath)
	if err != nil {
		t.Fatal(err)
	}
	if len(wf.Nodes) != 3 || len(wf.Edges) != 2 || len(wf.Inputs) != 1 || wf.Inputs[0].Default != first {
		b, _ := wf.Marshal()
		t.Fatalf("want 3 nodes, 2 edges and the CSV's path as the input:\n%s", b)
	}
	for _, e := range wf.Edges {
		if e.Output != "structured.table" && !strings.HasPrefix(e.Output, "handle:") {
			t.Errorf("edge %+v is not carried by a table handle", e)
		}
	}

	second := salesCSV(t, dir, "february.csv", 3_000, 2)
	raw, _ := os.ReadFile(second)
	kept, err := demo.DropMissing(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	rows := bytes.Count(kept, []byte("\n")) - 1 // without the header
	// No model: neither key nor base URL.
	r = runEnv(t, []string{"OPENAI_API_KEY=", "OPENAI_BASE_URL=http://127.0.0.1:1/v1"}, "",
		"workflow", "run", "--config", cfg, "--toolsets=", wfPath, "--json", "--set", "data__load_csv.path="+second)
	if r.code != 0 {
		t.Fatalf("replay: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	var last workflow.NodeEvent
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var e workflow.NodeEvent
		if err := json.Unmarshal([]byte(line), &e); err == nil && e.Status == workflow.StatusOK {
			last = e
		}
	}
	var d struct {
		Rows    int `json:"rows"`
		Columns []struct {
			Name    string `json:"name"`
			Count   int    `json:"count"`
			Missing int    `json:"missing"`
			Min     string `json:"min"`
			Max     string `json:"max"`
		} `json:"columns"`
	}
	if err := json.Unmarshal([]byte(last.Output), &d); err != nil || last.Node != "data__describe" || d.Rows != rows {
		t.Fatalf("the replay described %q: %d rows, want %d (a direct computation on %s)", last.Node, d.Rows, rows, second)
	}
	// Each column, as a direct computation on the cleaned rows finds it.
	recs, err := csv.NewReader(bytes.NewReader(kept)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range d.Columns {
		if c.Name != recs[0][i] || c.Count != rows || c.Missing != 0 {
			t.Errorf("column %s: %+v, want %s with %d values, none missing", c.Name, c, recs[0][i], rows)
		}
		if c.Name != "units" && c.Name != "date" && c.Name != "region" {
			continue
		}
		lo, hi := recs[1][i], recs[1][i]
		for _, r := range recs[2:] {
			lo, hi = minOf(c.Name, lo, r[i]), maxOf(c.Name, hi, r[i])
		}
		if c.Min != lo || c.Max != hi {
			t.Errorf("column %s: min %s, max %s; a direct computation finds %s and %s", c.Name, c.Min, c.Max, lo, hi)
		}
	}
}

// minOf and maxOf compare cells of a column: units as integers, the rest
// as text (ISO dates order as text).
func minOf(col, a, b string) string {
	if less(col, b, a) {
		return b
	}
	return a
}

func maxOf(col, a, b string) string {
	if less(col, a, b) {
		return b
	}
	return a
}

func less(col, a, b string) bool {
	if col == "units" {
		x, _ := strconv.Atoi(a)
		y, _ := strconv.Atoi(b)
		return x < y
	}
	return a < b
}
