package workflow

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/toolwire/toolwire/tool"
)

// Tool makes a tool named name that replays wf through the runner's
// registry, as Run does, so that an MCP client calls a recorded run as one
// tool. Its input schema has a property per workflow input (its name, type,
// default and description), required only when the input has no default.
// It may run as a task of the Tasks extension (tool.TaskOptional), and
// reports its progress per node, with the node's name, through the call's
// tool.Client; the progress the nodes' own tools report is dropped, so
// that the call's stays monotonic.
//
// The result is the last node's content, with each node's status and
// duration as structured content (Summary); a node that fails
// makes an error result naming the node and its error. A call whose
// context ends stops: the nodes not yet started are not run.
//
// A workflow whose form is wrong (see Parse), one with no nodes, and one
// whose node calls a tool of the same name (the workflow would call
// itself) are refused. Check the workflow against the registry first
// (Check): Tool does not look at the tools.
func (r *Runner) Tool(name string, wf *Workflow) (tool.Tool, error) {
	if err := wf.checkForm(); err != nil {
		return nil, err
	}
	if len(wf.Nodes) == 0 {
		return nil, fmt.Errorf("workflow %s has no nodes: there is nothing to replay (record one with toolwire run --record)", name)
	}
	for _, n := range wf.Nodes {
		if n.Tool == name {
			return nil, fmt.Errorf("workflow %s: node %s calls the tool %s, which would be this workflow itself: serve it under another name", name, n.ID, name)
		}
	}
	in, err := wf.inputSchema()
	if err != nil {
		return nil, fmt.Errorf("workflow %s: %w", name, err)
	}
	info := tool.Info{
		Name:        name,
		Description: wf.toolDescription(),
		InputSchema: in,
		Execution:   &tool.Execution{TaskSupport: tool.TaskOptional},
	}
	return &workflowTool{runner: r, wf: wf, info: info}, nil
}

// Summary is the structured content of a workflow tool's result:
// how each node's run went, in the workflow's order.
type Summary struct {
	Workflow string        `json:"workflow"`
	Nodes    []NodeSummary `json:"nodes"`
}

// NodeSummary is how one node's run went.
type NodeSummary struct {
	Node       string     `json:"node"`
	Tool       string     `json:"tool"`
	Status     NodeStatus `json:"status"`
	DurationMs float64    `json:"duration_ms"`
	Error      string     `json:"error,omitempty"`
}

type workflowTool struct {
	runner *Runner
	wf     *Workflow
	info   tool.Info
}

func (t *workflowTool) Info() tool.Info { return t.info }

func (t *workflowTool) Call(ctx context.Context, args json.RawMessage) (*tool.Result, error) {
	inputs := map[string]any{}
	if len(bytes.TrimSpace(args)) > 0 {
		dec := json.NewDecoder(bytes.NewReader(args))
		dec.UseNumber()
		if err := dec.Decode(&inputs); err != nil {
			return nil, fmt.Errorf("workflow %s: the arguments are not a JSON object: %w", t.info.Name, err)
		}
		for k, v := range inputs {
			inputs[k] = number(v)
		}
	}
	p := &nodeProgress{ctx: ctx, total: len(t.wf.Nodes), started: map[string]bool{}}
	run := *t.runner
	run.OnEvent = func(e NodeEvent) {
		if t.runner.OnEvent != nil {
			t.runner.OnEvent(e)
		}
		p.event(e)
	}
	nodeCtx := ctx
	if c, ok := tool.ClientFrom(ctx); ok {
		nodeCtx = tool.WithClient(ctx, quietClient{c})
	}
	report, results, err := run.run(nodeCtx, t.wf, inputs)
	if report == nil {
		return nil, err // the inputs: said as the model can repair them
	}
	summary := Summary{Workflow: t.info.Name, Nodes: make([]NodeSummary, len(report.Nodes))}
	for i, n := range report.Nodes {
		summary.Nodes[i] = NodeSummary{Node: n.Node, Tool: n.Tool, Status: n.Status, DurationMs: float64(n.Duration.Microseconds()) / 1000, Error: n.Error}
	}
	if err != nil {
		res := tool.ErrorResult(err)
		res.StructuredContent = summary
		return res, nil
	}
	last := results[len(results)-1]
	return &tool.Result{Content: last.Content, StructuredContent: summary}, nil
}

// quietClient is the tool.Client of a workflow's nodes: the call's, but
// for progress, which the workflow reports per node.
type quietClient struct{ tool.Client }

func (quietClient) Progress(context.Context, float64, float64, string) error { return nil }

// nodeProgress reports a workflow call's progress: half a node when it
// starts, the whole when it ends, so that it only grows.
type nodeProgress struct {
	ctx     context.Context
	total   int
	mu      sync.Mutex
	halves  int
	done    int
	started map[string]bool
}

func (p *nodeProgress) event(e NodeEvent) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var what string
	switch e.Status {
	case StatusStarted:
		p.halves++
		p.started[e.Node] = true
		what = "running"
	default:
		p.halves, p.done = p.halves+1, p.done+1
		if !p.started[e.Node] {
			p.halves++
		}
		what = string(e.Status)
		if e.Status == StatusSkipped {
			what = "not run"
		}
	}
	msg := fmt.Sprintf("%s: %s (%d of %d nodes done)", e.Node, what, p.done, p.total)
	_ = tool.Progress(p.ctx, float64(p.halves)/2, float64(p.total), msg)
}

// inputSchema is the JSON Schema of the workflow's inputs as a tool's
// arguments.
func (wf *Workflow) inputSchema() (json.RawMessage, error) {
	props := map[string]any{}
	required := []string{}
	for _, in := range wf.Inputs {
		p := map[string]any{}
		typ, ok := jsonType(in.Type)
		if !ok {
			return nil, fmt.Errorf("input %q has type %q: use one of str, int, float, bool, list, dict, any", in.Name, in.Type)
		}
		if typ != "" {
			p["type"] = typ
		}
		if in.Default != nil {
			p["default"] = in.Default
		} else {
			required = append(required, in.Name)
		}
		desc := in.Description
		if feeds := wf.Feeds(in.Name); len(feeds) > 0 && !(len(feeds) == 1 && feeds[0] == in.Name) {
			desc = strings.TrimSpace(desc + " (feeds " + strings.Join(feeds, ", ") + ")")
		}
		if desc != "" {
			p["description"] = desc
		}
		props[in.Name] = p
	}
	s := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		s["required"] = required
	}
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("the inputs' defaults: %w", err)
	}
	return b, nil
}

// jsonType is the JSON Schema type of an input's type ("" for any).
func jsonType(typ string) (string, bool) {
	switch typ {
	case "str":
		return "string", true
	case "int":
		return "integer", true
	case "float":
		return "number", true
	case "bool":
		return "boolean", true
	case "list":
		return "array", true
	case "dict":
		return "object", true
	case "any", "":
		return "", true
	}
	return "", false
}

// toolDescription says what the workflow tool does.
func (wf *Workflow) toolDescription() string {
	var b strings.Builder
	if wf.Description != "" {
		b.WriteString(strings.TrimSpace(wf.Description))
		b.WriteString("\n\n")
	}
	ids, _ := wf.order() // checked by checkForm
	tools := make([]string, 0, len(ids))
	for _, id := range ids {
		for _, n := range wf.Nodes {
			if n.ID == id {
				tools = append(tools, n.Tool)
			}
		}
	}
	name := wf.Name
	if name == "" {
		name = "a recorded workflow"
	}
	fmt.Fprintf(&b, "Replays %s with no model: %d tool calls (%s), each fed by the inputs and the outputs of the calls before it. ", name, len(wf.Nodes), strings.Join(tools, " → "))
	fmt.Fprintf(&b, "The result is the last call's (%s), with each call's status and duration as structured content; a failing call makes an error naming it.", wf.Nodes[len(wf.Nodes)-1].Tool)
	var required []string
	for _, in := range wf.Inputs {
		if in.Default == nil {
			required = append(required, in.Name)
		}
	}
	switch {
	case len(required) > 0:
		fmt.Fprintf(&b, " Give %s; the other inputs default to the recorded run's values.", strings.Join(required, ", "))
	case len(wf.Inputs) > 0:
		b.WriteString(" Every input is optional: its default is the recorded run's value.")
	}
	return b.String()
}
