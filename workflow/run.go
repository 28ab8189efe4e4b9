package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/toolwire/toolwire/tool"
)

// DefaultParallel bounds the nodes a Runner runs at once.
const DefaultParallel = 8

// Runner replays workflows through a registry, with no model: each node's
// arguments go through the argument pipeline (defaults, injected
// parameters, validation) as any call does.
type Runner struct {
	Tools *tool.Registry
	// Parallel bounds the nodes that run at once (default
	// DefaultParallel).
	Parallel int
	// OnEvent receives each node's start and end, from the goroutine that
	// ran it.
	OnEvent func(NodeEvent)
}

// NodeStatus says how a node's run went.
type NodeStatus string

// Node statuses.
const (
	StatusStarted NodeStatus = "started"
	StatusOK      NodeStatus = "ok"
	StatusFailed  NodeStatus = "failed"
	// StatusSkipped is a node not run because a node it depends on failed.
	StatusSkipped NodeStatus = "skipped"
)

// NodeEvent reports a node's progress (toolwire workflow run --json prints
// one per line).
type NodeEvent struct {
	Node     string          `json:"node"`
	Tool     string          `json:"tool"`
	Status   NodeStatus      `json:"status"`
	Args     json.RawMessage `json:"args,omitempty"`
	Duration time.Duration   `json:"duration_ns,omitempty"`
	Output   string          `json:"output,omitempty"`
	Error    string          `json:"error,omitempty"`
}

// Report is what a run did: a NodeEvent per node, in the workflow's order
// (the last event of each).
type Report struct {
	Nodes []NodeEvent `json:"nodes"`
}

// Failed returns the failed and skipped nodes' events.
func (r *Report) Failed() []NodeEvent {
	var out []NodeEvent
	for _, n := range r.Nodes {
		if n.Status != StatusOK {
			out = append(out, n)
		}
	}
	return out
}

// Run runs the workflow with the given input values (others take their
// defaults; an input without either is an error, as is a value of the
// wrong type). Nodes run in dependency order, those that do not depend on
// each other at once. A failed node stops the nodes that depend on it, and
// only them; the error then names every failed node, its tool and why.
func (r *Runner) Run(ctx context.Context, wf *Workflow, inputs map[string]any) (*Report, error) {
	report, _, err := r.run(ctx, wf, inputs)
	return report, err
}

// run is Run, returning also each node's result (nil for a node that did
// not succeed). A node not yet started when ctx ends is not run.
func (r *Runner) run(ctx context.Context, wf *Workflow, inputs map[string]any) (*Report, []*tool.Result, error) {
	values, err := wf.inputValues(inputs)
	if err != nil {
		return nil, nil, err
	}
	if _, err := wf.order(); err != nil {
		return nil, nil, fmt.Errorf("workflow: %w", err)
	}
	index := map[string]int{}
	for i, n := range wf.Nodes {
		index[n.ID] = i
	}
	deps := wf.deps()
	report := &Report{Nodes: make([]NodeEvent, len(wf.Nodes))}
	results := make([]*tool.Result, len(wf.Nodes))
	done := make([]chan struct{}, len(wf.Nodes))
	for i := range done {
		done[i] = make(chan struct{})
	}
	sem := make(chan struct{}, orDefault(r.Parallel, DefaultParallel))
	var wg sync.WaitGroup
	for i := range wf.Nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(done[i])
			n := &wf.Nodes[i]
			for _, d := range deps[n.ID] {
				<-done[index[d]]
				if report.Nodes[index[d]].Status != StatusOK {
					report.Nodes[i] = NodeEvent{Node: n.ID, Tool: n.Tool, Status: StatusSkipped, Error: fmt.Sprintf("not run: node %s did not succeed", d)}
					r.emit(report.Nodes[i])
					return
				}
			}
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				report.Nodes[i] = NodeEvent{Node: n.ID, Tool: n.Tool, Status: StatusSkipped, Error: "not run: " + context.Cause(ctx).Error()}
				r.emit(report.Nodes[i])
				return
			}
			defer func() { <-sem }()
			if ctx.Err() != nil { // the select may take the free slot of an ended context
				report.Nodes[i] = NodeEvent{Node: n.ID, Tool: n.Tool, Status: StatusSkipped, Error: "not run: " + context.Cause(ctx).Error()}
				r.emit(report.Nodes[i])
				return
			}
			report.Nodes[i], results[i] = r.runNode(ctx, wf, n, values, results, index)
		}()
	}
	wg.Wait()
	var errs []error
	for _, n := range report.Nodes {
		if n.Status == StatusFailed {
			errs = append(errs, fmt.Errorf("node %s (tool %s) failed: %s", n.Node, n.Tool, n.Error))
		}
	}
	if len(errs) == 0 && ctx.Err() != nil && len(report.Failed()) > 0 {
		errs = append(errs, fmt.Errorf("stopped before every node ran: %w", context.Cause(ctx)))
	}
	if len(errs) > 0 {
		skipped := 0
		for _, n := range report.Nodes {
			if n.Status == StatusSkipped {
				skipped++
			}
		}
		if skipped > 0 {
			errs = append(errs, fmt.Errorf("%d node(s) depending on them were not run", skipped))
		}
		return report, results, fmt.Errorf("workflow: %w", errors.Join(errs...))
	}
	return report, results, nil
}

func orDefault(v, d int) int {
	if v > 0 {
		return v
	}
	return d
}

func (r *Runner) emit(e NodeEvent) {
	if r.OnEvent != nil {
		r.OnEvent(e)
	}
}

// runNode runs one node whose dependencies succeeded. Every node's own
// result slot in results is written by its goroutine only, and read by
// dependents after it is done.
func (r *Runner) runNode(ctx context.Context, wf *Workflow, n *Node, values map[string]any, results []*tool.Result, index map[string]int) (NodeEvent, *tool.Result) {
	ev := NodeEvent{Node: n.ID, Tool: n.Tool}
	args := map[string]any{}
	for _, p := range n.InputParameters {
		switch {
		case p.Input != "":
			args[p.Name] = values[p.Input]
		case !p.Unset:
			args[p.Name] = p.Value
		}
	}
	for _, e := range wf.Edges {
		if e.To != n.ID {
			continue
		}
		v, err := extract(results[index[e.From]], e.Output)
		if err != nil {
			ev.Status, ev.Error = StatusFailed, fmt.Sprintf("parameter %s from node %s: %v", e.Parameter, e.From, err)
			r.emit(ev)
			return ev, nil
		}
		args[e.Parameter] = v
	}
	raw, err := json.Marshal(args)
	if err != nil {
		ev.Status, ev.Error = StatusFailed, fmt.Sprintf("encoding the arguments: %v", err)
		r.emit(ev)
		return ev, nil
	}
	ev.Args, ev.Status = raw, StatusStarted
	r.emit(ev)
	start := time.Now()
	if r.Tools == nil {
		err = errors.New("the runner has no tools")
	}
	var res *tool.Result
	if err == nil {
		res, err = r.Tools.Call(ctx, n.Tool, raw)
	}
	ev.Duration = time.Since(start)
	switch {
	case err != nil:
		ev.Status, ev.Error = StatusFailed, err.Error()
	case res.IsError:
		ev.Status, ev.Error = StatusFailed, res.ForModel().Text
	default:
		ev.Status, ev.Output = StatusOK, res.ForModel().Text
	}
	r.emit(ev)
	if ev.Status != StatusOK {
		return ev, nil
	}
	return ev, res
}

// extract takes the part of a result an edge names.
func extract(res *tool.Result, output string) (any, error) {
	if res == nil {
		return nil, errors.New("no result")
	}
	text := res.ForModel().Text
	switch {
	case output == "":
		return text, nil
	case strings.HasPrefix(output, "handle:"):
		kind := strings.TrimPrefix(output, "handle:")
		for _, m := range handlePattern.FindAllStringSubmatch(text, -1) {
			if m[1] == kind {
				return m[0], nil
			}
		}
		return nil, fmt.Errorf("its output has no %s_ handle: %.200q", kind, text)
	}
	var v any = res.StructuredContent
	if raw, ok := v.(json.RawMessage); ok {
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, err
		}
	} else if v != nil {
		b, err := json.Marshal(v)
		if err == nil {
			err = json.Unmarshal(b, &v)
		}
		if err != nil {
			return nil, err
		}
	}
	for _, field := range strings.Split(strings.TrimPrefix(output, "structured."), ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("its structured content has no field %q", output)
		}
		if v, ok = m[field]; !ok {
			return nil, fmt.Errorf("its structured content has no field %q", output)
		}
	}
	return v, nil
}

// inputValues resolves the inputs: given values, converted to the input's
// type, else defaults.
func (wf *Workflow) inputValues(given map[string]any) (map[string]any, error) {
	out := map[string]any{}
	var errs []error
	byInput := map[string]any{}
	givenAs := map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(given)) {
		in, ok := wf.inputNamed(name)
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("input %q: the workflow has no such input (inputs: %s)", name, wf.inputList()))
		case givenAs[in] != "":
			errs = append(errs, fmt.Errorf("input %q is given twice, as %s and as %s: give it once", in, givenAs[in], name))
		default:
			byInput[in], givenAs[in] = given[name], name
		}
	}
	given = byInput
	for _, in := range wf.Inputs {
		v, ok := given[in.Name]
		if !ok {
			if in.Default == nil {
				errs = append(errs, fmt.Errorf("input %q has no value: pass --set %s=VALUE", in.Name, in.Name))
				continue
			}
			out[in.Name] = in.Default
			continue
		}
		cv, err := convert(v, in.Type)
		if err != nil {
			errs = append(errs, fmt.Errorf("input %q: %w", in.Name, err))
			continue
		}
		out[in.Name] = cv
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("workflow: %w", errors.Join(errs...))
	}
	return out, nil
}

// convert makes a value given as text (--set) of the input's type.
func convert(v any, typ string) (any, error) {
	s, isString := v.(string)
	if !isString {
		return v, nil
	}
	switch typ {
	case "int":
		i, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not an int", s)
		}
		return i, nil
	case "float":
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", s)
		}
		return f, nil
	case "bool":
		b, err := strconv.ParseBool(s)
		if err != nil {
			return nil, fmt.Errorf("%q is not a bool: use true or false", s)
		}
		return b, nil
	case "list", "dict":
		var x any
		if err := json.Unmarshal([]byte(s), &x); err != nil {
			return nil, fmt.Errorf("%q is not a JSON %s", s, typ)
		}
		if _, ok := x.([]any); typ == "list" && !ok {
			return nil, fmt.Errorf("%q is not a JSON list", s)
		}
		if _, ok := x.(map[string]any); typ == "dict" && !ok {
			return nil, fmt.Errorf("%q is not a JSON object", s)
		}
		return x, nil
	}
	return s, nil
}
