package workflow_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/toolwire/toolwire/tool"
	"github.com/toolwire/toolwire/workflow"
)

// progressLog is a tool.Client that keeps the progress it is sent.
type progressLog struct {
	mu       sync.Mutex
	progress []float64
	total    []float64
	messages []string
}

func (p *progressLog) Progress(_ context.Context, progress, total float64, message string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.progress, p.total, p.messages = append(p.progress, progress), append(p.total, total), append(p.messages, message)
	return nil
}

func (p *progressLog) Log(context.Context, tool.LogLevel, string, any) error { return nil }

func (p *progressLog) Elicit(context.Context, *tool.Elicitation) (*tool.ElicitResult, error) {
	return nil, errors.ErrUnsupported
}

func (p *progressLog) Sample(context.Context, *tool.Sampling) (*tool.SamplingResult, error) {
	return nil, errors.ErrUnsupported
}

type nameIn struct {
	Name string `json:"name"`
}

type textIn struct {
	Text string `json:"text"`
}

// greetWorkflow is greet(name) → shout(greet's text), in a registry
// holding both tools.
func greetWorkflow() (*tool.Registry, *workflow.Workflow) {
	var reg tool.Registry
	_ = reg.Add(
		tool.Must(tool.New("greet", "Greets.", func(ctx context.Context, in nameIn) (string, error) {
			_ = tool.Progress(ctx, 1, 0, "a node's own progress, which the workflow drops")
			return "hello, " + in.Name, nil
		})),
		tool.Must(tool.New("shout", "Shouts.", func(_ context.Context, in textIn) (string, error) {
			return strings.ToUpper(in.Text) + "!", nil
		})))
	wf := &workflow.Workflow{Version: workflow.Version, Name: "greeting",
		Inputs: []workflow.Input{{Name: "greet.name", Type: "str", Default: "ada", Description: "Who to greet"}},
		Nodes: []workflow.Node{
			{ID: "greet", Tool: "greet", InputParameters: []workflow.Parameter{{Name: "name", Type: "str", Value: "ada", Input: "greet.name"}}},
			{ID: "shout", Tool: "shout", InputParameters: []workflow.Parameter{{Name: "text", Type: "str", Value: ""}}},
		},
		Edges: []workflow.Edge{{From: "greet", To: "shout", Parameter: "text"}},
	}
	return &reg, wf
}

// A recorded workflow served as one tool, beside the tools it replays
// through: its inputs are its arguments; it reports progress per node.
func ExampleRunner_Tool() {
	reg, wf := greetWorkflow()
	t, err := (&workflow.Runner{Tools: reg}).Tool("greeting", wf)
	if err != nil {
		panic(err)
	}
	if err := reg.Add(t); err != nil {
		panic(err)
	}
	fmt.Println(string(t.Info().InputSchema))

	progress := &progressLog{}
	ctx := tool.WithClient(context.Background(), progress)
	res, err := reg.Call(ctx, "greeting", json.RawMessage(`{"greet.name": "grace"}`))
	if err != nil {
		panic(err)
	}
	for i, m := range progress.messages {
		fmt.Printf("%.1f/%.0f %s\n", progress.progress[i], progress.total[i], m)
	}
	fmt.Println(res.Content[0].Text)
	for _, n := range res.StructuredContent.(workflow.Summary).Nodes {
		fmt.Println(n.Node, n.Status)
	}
	// Output:
	// {"properties":{"greet.name":{"default":"ada","description":"Who to greet","type":"string"}},"type":"object"}
	// 0.5/2 greet: running (0 of 2 nodes done)
	// 1.0/2 greet: ok (1 of 2 nodes done)
	// 1.5/2 shout: running (1 of 2 nodes done)
	// 2.0/2 shout: ok (2 of 2 nodes done)
	// HELLO, GRACE!
	// greet ok
	// shout ok
}

// TestWorkflowToolInfo: the schema has a property per input, required
// when it has no default, typed after the input; the description names
// the tools in order; the tool may run as a task.
func TestWorkflowToolInfo(t *testing.T) {
	_, wf := greetWorkflow()
	wf.Inputs = append(wf.Inputs, workflow.Input{Name: "times", Type: "int"}, workflow.Input{Name: "opts", Type: "dict", Default: map[string]any{"a": int64(1)}})
	tl, err := (&workflow.Runner{}).Tool("greeting", wf)
	if err != nil {
		t.Fatal(err)
	}
	info := tl.Info()
	var s struct {
		Properties map[string]struct {
			Type    string
			Default any
		}
		Required []string
	}
	if err := json.Unmarshal(info.InputSchema, &s); err != nil {
		t.Fatal(err)
	}
	if s.Properties["times"].Type != "integer" || s.Properties["opts"].Type != "object" || s.Properties["greet.name"].Default != "ada" {
		t.Errorf("schema %s", info.InputSchema)
	}
	if len(s.Required) != 1 || s.Required[0] != "times" {
		t.Errorf("required %v, want [times] (the only input without a default)", s.Required)
	}
	if !strings.Contains(info.Description, "2 tool calls (greet → shout)") || !strings.Contains(info.Description, "Give times;") {
		t.Errorf("description %q", info.Description)
	}
	if info.Execution == nil || info.Execution.TaskSupport != tool.TaskOptional {
		t.Errorf("execution %+v, want task support optional", info.Execution)
	}
}

// TestWorkflowToolRefuses: what cannot be served as a tool is refused,
// saying why.
func TestWorkflowToolRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*workflow.Workflow)
		want string
	}{
		{"no nodes", func(wf *workflow.Workflow) { wf.Nodes, wf.Edges = nil, nil }, "has no nodes"},
		{"calls itself", func(wf *workflow.Workflow) { wf.Nodes[1].Tool = "greeting" }, "node shout calls the tool greeting, which would be this workflow itself"},
		{"unknown input type", func(wf *workflow.Workflow) { wf.Inputs[0].Type = "string" }, `input "greet.name" has type "string": use one of str`},
		{"bad form", func(wf *workflow.Workflow) { wf.Edges[0].From = "nowhere" }, "dangling edge"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, wf := greetWorkflow()
			tc.edit(wf)
			_, err := (&workflow.Runner{}).Tool("greeting", wf)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
}

// TestWorkflowToolErrors: an argument of the wrong type is the argument
// pipeline's error; a failing node makes an error result naming it, its
// dependents not run.
func TestWorkflowToolErrors(t *testing.T) {
	reg := napRegistry(t, 0)
	wf := staged(3, 1, "s1_0")
	wf.Inputs = []workflow.Input{{Name: "fail_first", Type: "bool", Default: false}}
	wf.Nodes[0].InputParameters[0].Input = "fail_first"
	tl, err := (&workflow.Runner{Tools: reg}).Tool("naps", wf)
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.Add(tl); err != nil {
		t.Fatal(err)
	}
	res, err := reg.Call(context.Background(), "naps", json.RawMessage(`{"fail_first": "yes"}`))
	if err == nil && !res.IsError {
		t.Errorf("a string for a bool input was taken: %+v", res)
	} else if msg := fmt.Sprint(err, res); !strings.Contains(msg, "fail_first") {
		t.Errorf("the error does not name the input: %s", msg)
	}

	p := &progressLog{}
	res, err = reg.Call(tool.WithClient(context.Background(), p), "naps", nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(p.progress); n == 0 || p.progress[n-1] != 3 {
		t.Errorf("progress %v, want it to end at 3: the skipped node counts", p.progress)
	}
	if !res.IsError || !strings.Contains(res.Content[0].Text, "node s1_0 (tool nap) failed: this node fails") {
		t.Errorf("result %+v, want an error naming node s1_0", res)
	}
	sum := res.StructuredContent.(workflow.Summary)
	got := []workflow.NodeStatus{sum.Nodes[0].Status, sum.Nodes[1].Status, sum.Nodes[2].Status}
	if got[0] != workflow.StatusOK || got[1] != workflow.StatusFailed || got[2] != workflow.StatusSkipped {
		t.Errorf("statuses %v, want ok, failed, skipped", got)
	}
}

// TestWorkflowToolCancel: a call whose context ends mid-run runs no
// further node, each reported not run (none failed), and says it
// stopped: nodes in a chain, and independent nodes waiting for their turn.
func TestWorkflowToolCancel(t *testing.T) {
	for _, tc := range []struct {
		name     string
		wf       *workflow.Workflow
		parallel int
		cancelAt int32 // the call that ends the context
		// runs: in the chain, the node after the cancelling one finds a
		// free slot and an ended context at once, and select takes either
		// at random, so one run shows a node started late only half the
		// time.
		runs int
	}{
		{"a chain", staged(20, 1, ""), 0, 2, 40},
		{"nodes waiting their turn", staged(1, 20, ""), 1, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for range tc.runs {
				runCancelled(t, tc.wf, tc.parallel, tc.cancelAt)
			}
		})
	}
}

// runCancelled runs wf as a tool whose nap calls end the run's context at
// call cancelAt, and checks that no node started after that.
func runCancelled(t *testing.T, wf *workflow.Workflow, parallel int, cancelAt int32) {
	t.Helper()
	var calls atomic.Int32
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var reg tool.Registry
	if err := reg.Add(tool.Must(tool.New("nap", "Naps.", func(context.Context, napIn) (string, error) {
		if calls.Add(1) == cancelAt {
			cancel() // ends the call's context, and returns
		}
		return "rested", nil
	}))); err != nil {
		t.Fatal(err)
	}
	tl, err := (&workflow.Runner{Tools: &reg, Parallel: parallel}).Tool("naps", wf)
	if err != nil {
		t.Fatal(err)
	}
	res, err := tl.Call(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := calls.Load(); n != cancelAt {
		t.Errorf("%d nodes ran, want %d: the call was cancelled in the last", n, cancelAt)
	}
	if !res.IsError || !strings.Contains(res.Content[0].Text, "stopped before every node ran: context canceled") {
		t.Errorf("result %+v, want an error saying the run stopped", res)
	}
	skipped := 0
	for _, n := range res.StructuredContent.(workflow.Summary).Nodes {
		switch n.Status {
		case workflow.StatusSkipped:
			skipped++
		case workflow.StatusFailed:
			t.Errorf("node %s failed (%s): a node not started when the context ended is not run", n.Node, n.Error)
		}
	}
	if want := 20 - int(cancelAt); skipped != want {
		t.Errorf("%d nodes not run, want %d", skipped, want)
	}
}

// TestWorkflowToolProgress: with nodes running at once, the progress
// only grows, ends at the node count, and carries none of the nodes' own.
func TestWorkflowToolProgress(t *testing.T) {
	reg, wf := greetWorkflow()
	for i := range 6 { // six greetings beside the chain, at once
		wf.Nodes = append(wf.Nodes, workflow.Node{ID: fmt.Sprintf("g%d", i), Tool: "greet",
			InputParameters: []workflow.Parameter{{Name: "name", Type: "str", Value: "x"}}})
	}
	tl, err := (&workflow.Runner{Tools: reg}).Tool("greeting", wf)
	if err != nil {
		t.Fatal(err)
	}
	p := &progressLog{}
	res, err := tl.Call(tool.WithClient(context.Background(), p), nil)
	if err != nil || res.IsError {
		t.Fatalf("%v %+v", err, res)
	}
	for i, v := range p.progress {
		if i > 0 && v <= p.progress[i-1] {
			t.Errorf("progress %v after %v: it must grow", v, p.progress[i-1])
		}
		if strings.Contains(p.messages[i], "own progress") {
			t.Errorf("a node's own progress reached the caller: %q", p.messages[i])
		}
	}
	if n := len(p.progress); n != 16 || p.progress[n-1] != 8 {
		t.Errorf("progress %v, want 16 steps ending at 8", p.progress)
	}
	if res.Content[0].Text != "hello, x" {
		t.Errorf("result %q, want the last node's", res.Content[0].Text)
	}
}
