package workflow_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolwire/toolwire/schema"
	"github.com/toolwire/toolwire/tool"
	"github.com/toolwire/toolwire/workflow"
)

// TestRecordInputParametersGolden: recording a call of optimize_structure
// (a tool with defaults and system parameters) gives the node of the
// golden file: the six non-system parameters with the model's values,
// then the defaults; executor and storage absent.
func TestRecordInputParametersGolden(t *testing.T) {
	// The tool's function declaration, as the tool package's tests keep it.
	optimizeSchema, err := os.ReadFile(filepath.Join("..", "tool", "testdata", "optimize_structure.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	modelSchema, err := tool.HideParameters(optimizeSchema, []string{"executor", "storage"})
	if err != nil {
		t.Fatal(err)
	}
	opt := tool.NewFunc(tool.Info{Name: "optimize_structure", Description: "Perform geometry optimization...", InputSchema: modelSchema,
		Injected:       []string{"executor", "storage"},
		InjectedValues: map[string]any{"executor": map[string]any{"type": "dispatcher"}, "storage": map[string]any{"type": "https"}}},
		func(context.Context, json.RawMessage) (*tool.Result, error) { return tool.Text("optimized"), nil })
	var reg tool.Registry
	if err := reg.Add(opt); err != nil {
		t.Fatal(err)
	}
	rec := &workflow.Recorder{}
	reg.Use(rec.Middleware())
	args := `{"input_structure":"https://bohrium.oss-cn-zhangjiakou.aliyuncs.com/.../Cu_bulk.cif","model_path":"https://bohrium.oss-cn-zhangjiakou.aliyuncs.com/.../dpa-2.4-7M.pt","relax_cell":false}`
	if _, err := reg.Call(context.Background(), "optimize_structure", json.RawMessage(args)); err != nil {
		t.Fatal(err)
	}
	wf := rec.Workflow("optimize")
	got, _ := json.MarshalIndent(wf.Nodes[0].InputParameters, "", "  ")
	want, err := os.ReadFile(filepath.Join("testdata", "input_parameters.golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(string(got)) != strings.TrimSpace(string(want)) {
		t.Errorf("input_parameters:\n%s\nwant (golden):\n%s", got, want)
	}
	if len(wf.Nodes) != 1 || wf.Nodes[0].Tool != "optimize_structure" || len(wf.Edges) != 0 {
		t.Errorf("workflow %+v", wf)
	}
}

// A small data toolset whose tables live behind handles, as the data
// toolset's do.
type store struct {
	mu     sync.Mutex
	tables map[string][][]string
	n      int
}

type pathIn struct {
	Path string `json:"path" description:"CSV file to load"`
}

type tableIn struct {
	Table string `json:"table" description:"Handle of a table"`
}

type tableOut struct {
	Table string `json:"table"`
	Rows  int    `json:"rows"`
}

func (s *store) put(rows [][]string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	h := fmt.Sprintf("tbl_%022d", s.n)
	s.tables[h] = rows
	return h
}

func (s *store) get(h string) ([][]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rows, ok := s.tables[h]
	if !ok {
		return nil, fmt.Errorf("unknown table %s: load the file again", h)
	}
	return rows, nil
}

func (s *store) tools() []tool.Tool {
	load := tool.Must(tool.New("load", "Loads a CSV file.", func(_ context.Context, in pathIn) (*tool.Result, error) {
		b, err := os.ReadFile(in.Path)
		if err != nil {
			return nil, err
		}
		var rows [][]string
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			rows = append(rows, strings.Split(line, ","))
		}
		h := s.put(rows)
		return &tool.Result{Content: []tool.Content{tool.TextContent(fmt.Sprintf("%s: %d rows", h, len(rows)))}}, nil
	}))
	drop := tool.Must(tool.New("drop_missing", "Drops rows with empty cells.", func(_ context.Context, in tableIn) (tableOut, error) {
		rows, err := s.get(in.Table)
		if err != nil {
			return tableOut{}, err
		}
		var kept [][]string
		for _, r := range rows {
			if !strings.Contains(","+strings.Join(r, ",")+",", ",,") {
				kept = append(kept, r)
			}
		}
		return tableOut{Table: s.put(kept), Rows: len(kept)}, nil
	}))
	count := tool.Must(tool.New("count", "Counts rows.", func(_ context.Context, in tableIn) (string, error) {
		rows, err := s.get(in.Table)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%d rows", len(rows)), nil
	}))
	return []tool.Tool{load, drop, count}
}

func writeCSV(t *testing.T, rows ...string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "data.csv")
	if err := os.WriteFile(p, []byte(strings.Join(rows, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestRecordAndReplay records a load → drop_missing → count run (one
// failed call the "model" repaired among them), finds the two edges the
// handles carry and the input the task names, and replays the workflow on
// another file with no model.
func TestRecordAndReplay(t *testing.T) {
	first := writeCSV(t, "a,b", "1,", "2,3", "4,5")
	s := &store{tables: map[string][][]string{}}
	var reg tool.Registry
	if err := reg.Add(s.tools()...); err != nil {
		t.Fatal(err)
	}
	rec := &workflow.Recorder{Task: "Load " + first + ", drop the rows with missing cells and count them."}
	reg.Use(rec.Middleware())
	ctx := context.Background()
	call := func(name, args string) *tool.Result {
		t.Helper()
		res, err := reg.Call(ctx, name, json.RawMessage(args))
		if err != nil {
			return tool.ErrorResult(err)
		}
		return res
	}
	loaded := call("load", fmt.Sprintf(`{"path":%q}`, first))
	h := strings.SplitN(loaded.Content[0].Text, ":", 2)[0]
	if bad := call("drop_missing", `{"table":"tbl_nope"}`); !bad.IsError {
		t.Fatal("the failed call should fail")
	}
	dropped := call("drop_missing", fmt.Sprintf(`{"table":%q}`, h))
	var out tableOut
	b, _ := json.Marshal(dropped.StructuredContent)
	_ = json.Unmarshal(b, &out)
	if res := call("count", fmt.Sprintf(`{"table":%q}`, out.Table)); res.Content[0].Text != "3 rows" {
		t.Fatalf("count: %v", res.Content[0].Text)
	}

	wf := rec.Workflow("clean")
	if len(wf.Nodes) != 3 || len(wf.Edges) != 2 || len(wf.Inputs) != 1 {
		b, _ := wf.Marshal()
		t.Fatalf("want 3 nodes, 2 edges, 1 input:\n%s", b)
	}
	wantEdges := []workflow.Edge{{From: "load", Output: "handle:tbl", To: "drop_missing", Parameter: "table"}, {From: "drop_missing", Output: "structured.table", To: "count", Parameter: "table"}}
	for i, e := range wf.Edges {
		if e != wantEdges[i] {
			t.Errorf("edge %d = %+v, want %+v", i, e, wantEdges[i])
		}
	}
	if in := wf.Inputs[0]; in.Name != "load.path" || in.Type != "str" || in.Default != first || wf.Nodes[0].InputParameters[0].Input != "load.path" {
		t.Errorf("input %+v", in)
	}

	// The file round-trips, and replays on another CSV with no model.
	data, err := wf.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	again, err := workflow.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if err := again.Check(&reg, nil); err != nil {
		t.Fatal(err)
	}
	second := writeCSV(t, "a,b", "1,", ",2", "3,4", "5,6", "7,8")
	rep, err := (&workflow.Runner{Tools: &reg}).Run(ctx, again, map[string]any{"load.path": second})
	if err != nil {
		t.Fatal(err)
	}
	if last := rep.Nodes[2]; last.Status != workflow.StatusOK || last.Output != "4 rows" {
		t.Errorf("count on the second file: %+v, want 4 rows (header and 3 complete rows)", last)
	}
}

// TestBadWorkflows: each malformed workflow is refused with a message
// that names the problem and the node.
func TestBadWorkflows(t *testing.T) {
	node := func(id, tool string, params ...string) string {
		var ps []string
		for _, p := range params {
			ps = append(ps, fmt.Sprintf(`{"name":%q,"type":"str","value":""}`, p))
		}
		return fmt.Sprintf(`{"id":%q,"tool":%q,"input_parameters":[%s]}`, id, tool, strings.Join(ps, ","))
	}
	wf := func(nodes, edges string) string {
		return fmt.Sprintf(`{"version":%q,"inputs":[],"nodes":[%s],"edges":[%s]}`, workflow.Version, nodes, edges)
	}
	tests := []struct{ name, data, want string }{
		{"malformed JSON", `{"version": "toolwire.workflow/v1", "nodes": [}`, "not valid workflow JSON: invalid character '}' looking for beginning of value at line 1, column 47"},
		{"empty file", ``, "the file is empty"},
		{"unknown key", `{"version":"toolwire.workflow/v1","nodez":[]}`, `unknown field "nodez"`},
		{"unknown version", `{"version":"toolwire.workflow/v9","inputs":[],"nodes":[],"edges":[]}`, `unknown version "toolwire.workflow/v9": this toolwire reads "toolwire.workflow/v1"`},
		{"cycle", wf(node("a", "t", "x")+","+node("b", "t", "x"), `{"from":"a","output":"","to":"b","parameter":"x"},{"from":"b","output":"","to":"a","parameter":"x"}`), "the nodes form a cycle: a → b → a"},
		{"dangling edge", wf(node("a", "t", "x"), `{"from":"ghost","output":"","to":"a","parameter":"x"}`), `no node "ghost" to come from (dangling edge)`},
		{"edge to a missing parameter", wf(node("a", "t", "x")+","+node("b", "t", "x"), `{"from":"a","output":"","to":"b","parameter":"y"}`), `node b has no parameter "y"`},
		{"duplicate id", wf(node("a", "t")+","+node("a", "t"), ``), "node a: the id is used twice"},
		{"bad output path", wf(node("a", "t", "x")+","+node("b", "t", "x"), `{"from":"a","output":"body","to":"b","parameter":"x"}`), `output "body": write "" (the whole text), "structured.FIELD" or "handle:KIND"`},
	}
	for _, tt := range tests {
		_, err := workflow.Parse([]byte(tt.data))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v\nwant an error containing %q", tt.name, err, tt.want)
		}
	}

	// Against the tools, and with the inputs given.
	s := &store{tables: map[string][][]string{}}
	var reg tool.Registry
	if err := reg.Add(s.tools()...); err != nil {
		t.Fatal(err)
	}
	check := []struct {
		name, data string
		inputs     map[string]any
		want       string
	}{
		{"unknown tool", wf(node("a", "lod", "path"), ""), nil, `node a: unknown tool "lod"; did you mean load?`},
		{"parameter gone", wf(node("a", "load", "path", "sep"), ""), nil, `node a: tool load has no parameter "sep" now (its parameters: path)`},
		{"type changed", wf(`{"id":"a","tool":"load","input_parameters":[{"name":"path","type":"int","value":1}]}`, ""), nil, `node a: parameter "path" is int in the workflow but str in tool load now`},
		{"required missing", wf(node("a", "load"), ""), nil, `node a: tool load requires "path", which the workflow does not give`},
		{"input without value", `{"version":"toolwire.workflow/v1","inputs":[{"name":"path","type":"str"}],"nodes":[{"id":"a","tool":"load","input_parameters":[{"name":"path","type":"str","value":"","input":"path"}]}],"edges":[]}`, nil, `input "path" has no value: pass --set path=VALUE`},
		{"--set of the wrong type", `{"version":"toolwire.workflow/v1","inputs":[{"name":"n","type":"int","default":1}],"nodes":[],"edges":[]}`, map[string]any{"n": "ten"}, `input "n": "ten" is not an int`},
		{"--set of an unknown input", `{"version":"toolwire.workflow/v1","inputs":[],"nodes":[],"edges":[]}`, map[string]any{"x": "1"}, `input "x": the workflow has no such input`},
		{"edge from a field the output schema lacks", wf(node("a", "drop_missing", "table")+","+node("b", "count", "table"), `{"from":"a","output":"structured.body","to":"b","parameter":"table"}`), nil,
			`edge a → b.table: tool drop_missing's output schema has no "structured.body" (its fields there: table, rows): take a field it has`},
		{"edge from a handle the recorded output lacks", wf(`{"id":"a","tool":"load","input_parameters":[{"name":"path","type":"str","value":"x.csv"}],"output":{"text":"tbl_0000000000000000000001: 3 rows"}},`+node("b", "count", "table"),
			`{"from":"a","output":"handle:img","to":"b","parameter":"table"}`), nil, `edge a → b.table: the output node a recorded has no "handle:img" (its output has no img_ handle`},
		{"edge from a field the recorded output lacks", wf(`{"id":"a","tool":"load","input_parameters":[{"name":"path","type":"str","value":"x.csv"}],"output":{"structured":{"table":"t"}}},`+node("b", "count", "table"),
			`{"from":"a","output":"structured.tabel","to":"b","parameter":"table"}`), nil, `the output node a recorded has no "structured.tabel" (its structured content has no field "structured.tabel")`},
	}
	for _, tt := range check {
		w, err := workflow.Parse([]byte(tt.data))
		if err == nil {
			err = w.Check(&reg, tt.inputs)
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v\nwant an error containing %q", tt.name, err, tt.want)
		}
	}
}

type napIn struct {
	Fail bool `json:"fail"`
	From any  `json:"from,omitempty"`
}

// staged is a workflow of stages × width nodes; each node of a stage
// takes the output of the node in the same column of the stage before.
func staged(stages, width int, failing string) *workflow.Workflow {
	wf := &workflow.Workflow{Version: workflow.Version}
	for s := range stages {
		for w := range width {
			id := fmt.Sprintf("s%d_%d", s, w)
			wf.Nodes = append(wf.Nodes, workflow.Node{ID: id, Tool: "nap", InputParameters: []workflow.Parameter{
				{Name: "fail", Type: "bool", Value: id == failing}, {Name: "from", Type: "any", Value: ""}}})
			if s > 0 {
				wf.Edges = append(wf.Edges, workflow.Edge{From: fmt.Sprintf("s%d_%d", s-1, w), Output: "", To: id, Parameter: "from"})
			}
		}
	}
	return wf
}

func napRegistry(tb testing.TB, d time.Duration) *tool.Registry {
	var reg tool.Registry
	if err := reg.Add(tool.Must(tool.New("nap", "Naps.", func(_ context.Context, in napIn) (string, error) {
		time.Sleep(d)
		if in.Fail {
			return "", errors.New("this node fails")
		}
		return "rested", nil
	}))); err != nil {
		tb.Fatal(err)
	}
	return &reg
}

// TestFailureStopsDescendants: a node failing in stage 3 stops exactly
// the nodes that depend on it; the rest run; the error names the node.
func TestFailureStopsDescendants(t *testing.T) {
	wf := staged(10, 10, "s2_4")
	rep, err := (&workflow.Runner{Tools: napRegistry(t, 0), Parallel: 10}).Run(context.Background(), wf, nil)
	if err == nil || !strings.Contains(err.Error(), "node s2_4 (tool nap) failed: this node fails") || !strings.Contains(err.Error(), "7 node(s) depending on them were not run") {
		t.Errorf("error %v", err)
	}
	for _, n := range rep.Nodes {
		var s, w int
		fmt.Sscanf(n.Node, "s%d_%d", &s, &w)
		want := workflow.StatusOK
		switch {
		case n.Node == "s2_4":
			want = workflow.StatusFailed
		case w == 4 && s > 2:
			want = workflow.StatusSkipped
		}
		if n.Status != want {
			t.Errorf("node %s: %s, want %s", n.Node, n.Status, want)
		}
	}
}

// BenchmarkParallelReplay replays 10 stages of 10 independent nodes, each
// taking 20 ms: the makespan against the critical path (10 × 20 ms).
func BenchmarkParallelReplay(b *testing.B) {
	const stages, width, nap = 10, 10, 20 * time.Millisecond
	wf := staged(stages, width, "")
	r := &workflow.Runner{Tools: napRegistry(b, nap), Parallel: width}
	for b.Loop() {
		if _, err := r.Run(context.Background(), wf, nil); err != nil {
			b.Fatal(err)
		}
	}
	perRun := b.Elapsed() / time.Duration(b.N)
	b.ReportMetric(float64(perRun)/float64(stages*nap), "makespan/critical-path")
}

// FuzzParse feeds the loader random bytes and mutations of a real
// workflow: it must return a workflow or an error, never panic, and a
// workflow it returns must marshal and parse again.
func FuzzParse(f *testing.F) {
	wf := staged(2, 2, "")
	wf.Inputs = []workflow.Input{{Name: "p", Type: "str", Default: "x"}}
	b, _ := wf.Marshal()
	f.Add(b)
	f.Add([]byte(`{"version":"toolwire.workflow/v1","inputs":[],"nodes":[{"id":"a","tool":"t","input_parameters":[]}],"edges":[{"from":"a","output":"","to":"a","parameter":"x"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		w, err := workflow.Parse(data)
		if err != nil {
			return
		}
		out, err := w.Marshal()
		if err != nil {
			t.Fatalf("a parsed workflow does not marshal: %v", err)
		}
		if _, err := workflow.Parse(out); err != nil {
			t.Fatalf("a marshalled workflow does not parse: %v\n%s", err, out)
		}
	})
}

// TestSchemaDocumentsTheFormat: a recorded workflow, as written, is valid
// against schema.json, the format's documentation; a workflow with a key
// the format lacks is not.
func TestSchemaDocumentsTheFormat(t *testing.T) {
	raw, err := os.ReadFile("schema.json")
	if err != nil {
		t.Fatal(err)
	}
	v, err := schema.Compile(raw)
	if err != nil {
		t.Fatal(err)
	}
	wf := staged(2, 2, "")
	wf.Inputs = []workflow.Input{{Name: "p", Type: "str", Default: "x", Description: "a path"}}
	wf.Nodes[0].Output = &workflow.Output{Text: "t", Structured: map[string]any{"a": 1}}
	wf.Edges[0].Output = "structured.a"
	b, err := wf.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if err := v.Validate(doc); err != nil {
		t.Errorf("a written workflow breaks schema.json: %v\n%s", err, b)
	}
	doc.(map[string]any)["extra"] = true
	if v.Validate(doc) == nil {
		t.Error("schema.json accepts an unknown key")
	}
}

// TestInputNames: a recorded input is named after the node and parameter
// it feeds, so that a directory and a file both given as "path" are told
// apart; a workflow recorded with the older names ("path", "path_2") is
// reached by NODE.PARAMETER too, and show says what each input feeds.
func TestInputNames(t *testing.T) {
	dir := t.TempDir()
	file := writeCSV(t, "a", "1")
	list := tool.Must(tool.New("list", "Lists a directory.", func(_ context.Context, in pathIn) (string, error) { return "data.csv", nil }))
	load := tool.Must(tool.New("load", "Loads a CSV file.", func(_ context.Context, in pathIn) (string, error) { return "loaded " + in.Path, nil }))
	var reg tool.Registry
	if err := reg.Add(list, load); err != nil {
		t.Fatal(err)
	}
	rec := &workflow.Recorder{Task: "look in " + dir + " then load " + file}
	reg.Use(rec.Middleware())
	for _, c := range [][2]string{{"list", dir}, {"load", file}} {
		if _, err := reg.Call(context.Background(), c[0], json.RawMessage(fmt.Sprintf(`{"path":%q}`, c[1]))); err != nil {
			t.Fatal(err)
		}
	}
	wf := rec.Workflow("two paths")
	if len(wf.Inputs) != 2 || wf.Inputs[0].Name != "list.path" || wf.Inputs[1].Name != "load.path" {
		t.Fatalf("inputs %+v, want list.path and load.path", wf.Inputs)
	}
	text := wf.Text()
	for _, want := range []string{
		fmt.Sprintf("input list.path (str) = %q: feeds list.path\n", dir),
		fmt.Sprintf("input load.path (str) = %q: feeds load.path\n", file),
		"  path = input load.path\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("Text() lacks %q:\n%s", want, text)
		}
	}

	// The same workflow as recorded before inputs were named after what
	// they feed.
	old := *wf
	old.Inputs = []workflow.Input{wf.Inputs[0], wf.Inputs[1]}
	old.Inputs[0].Name, old.Inputs[1].Name = "path", "path_2"
	old.Nodes = []workflow.Node{wf.Nodes[0], wf.Nodes[1]}
	for i, name := range []string{"path", "path_2"} {
		params := append([]workflow.Parameter(nil), old.Nodes[i].InputParameters...)
		params[0].Input = name
		old.Nodes[i].InputParameters = params
	}
	if !strings.Contains(old.Text(), "input path_2 (str) = ") || !strings.Contains(old.Text(), ": feeds load.path\n") {
		t.Errorf("Text() of the older workflow:\n%s", old.Text())
	}
	other := writeCSV(t, "b", "2")
	for _, tt := range []struct {
		name   string
		inputs map[string]any
		want   string // load's output, or the error
	}{
		{"new name", map[string]any{"load.path": other}, "loaded " + other},
		{"old name", map[string]any{"path_2": other}, "loaded " + other},
		{"old name of the other node", map[string]any{"path": other}, "loaded " + file},
		{"given twice", map[string]any{"path_2": other, "load.path": other}, `input "path_2" is given twice, as load.path and as path_2: give it once`},
		{"unknown", map[string]any{"load.sep": ","}, `input "load.sep": the workflow has no such input (inputs: path (feeds list.path), path_2 (feeds load.path))`},
	} {
		rep, err := (&workflow.Runner{Tools: &reg}).Run(context.Background(), &old, tt.inputs)
		got := ""
		if err != nil {
			got = err.Error()
		} else {
			got = rep.Nodes[1].Output
		}
		if !strings.Contains(got, tt.want) {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}
