package workflow

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// checkForm checks what needs no tools: the version, ids, references and
// the absence of cycles. Every problem is listed, each naming its node.
func (wf *Workflow) checkForm() error {
	var errs []error
	if wf.Version != Version {
		errs = append(errs, fmt.Errorf("unknown version %q: this toolwire reads %q", wf.Version, Version))
	}
	nodes := map[string]*Node{}
	for i := range wf.Nodes {
		n := &wf.Nodes[i]
		switch {
		case n.ID == "":
			errs = append(errs, fmt.Errorf("node %d has no id", i+1))
			continue
		case nodes[n.ID] != nil:
			errs = append(errs, fmt.Errorf("node %s: the id is used twice", n.ID))
		case n.Tool == "":
			errs = append(errs, fmt.Errorf("node %s: no tool", n.ID))
		}
		nodes[n.ID] = n
		seen := map[string]bool{}
		for _, p := range n.InputParameters {
			if seen[p.Name] {
				errs = append(errs, fmt.Errorf("node %s: parameter %q is listed twice", n.ID, p.Name))
			}
			seen[p.Name] = true
			if p.Input != "" && !slices.ContainsFunc(wf.Inputs, func(in Input) bool { return in.Name == p.Input }) {
				errs = append(errs, fmt.Errorf("node %s: parameter %q takes input %q, which the workflow does not declare", n.ID, p.Name, p.Input))
			}
		}
	}
	inputs := map[string]bool{}
	for _, in := range wf.Inputs {
		if in.Name == "" || inputs[in.Name] {
			errs = append(errs, fmt.Errorf("input %q: an input needs a name of its own", in.Name))
		}
		inputs[in.Name] = true
	}
	for _, e := range wf.Edges {
		from, to := nodes[e.From], nodes[e.To]
		switch {
		case from == nil:
			errs = append(errs, fmt.Errorf("edge %s → %s.%s: no node %q to come from (dangling edge)", e.From, e.To, e.Parameter, e.From))
		case to == nil:
			errs = append(errs, fmt.Errorf("edge %s → %s.%s: no node %q to lead to (dangling edge)", e.From, e.To, e.Parameter, e.To))
		case !slices.ContainsFunc(to.InputParameters, func(p Parameter) bool { return p.Name == e.Parameter }):
			errs = append(errs, fmt.Errorf("edge %s → %s.%s: node %s has no parameter %q", e.From, e.To, e.Parameter, e.To, e.Parameter))
		}
		if err := checkOutputPath(e.Output); err != nil {
			errs = append(errs, fmt.Errorf("edge %s → %s.%s: %w", e.From, e.To, e.Parameter, err))
		}
	}
	if len(errs) == 0 {
		if _, err := wf.order(); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("workflow: %w", errors.Join(errs...))
	}
	return nil
}

// checkOutputPath checks the form of an edge's output.
func checkOutputPath(p string) error {
	switch {
	case p == "":
	case strings.HasPrefix(p, "structured."):
		for _, part := range strings.Split(strings.TrimPrefix(p, "structured."), ".") {
			if part == "" {
				return fmt.Errorf("output %q has an empty field name", p)
			}
		}
	case strings.HasPrefix(p, "handle:") && len(p) > len("handle:"):
	default:
		return fmt.Errorf(`output %q: write "" (the whole text), "structured.FIELD" or "handle:KIND"`, p)
	}
	return nil
}

// deps returns, by node id, the ids of the nodes it takes outputs from.
func (wf *Workflow) deps() map[string][]string {
	d := map[string][]string{}
	for _, e := range wf.Edges {
		if !slices.Contains(d[e.To], e.From) {
			d[e.To] = append(d[e.To], e.From)
		}
	}
	return d
}

// order returns the node ids in an order where each node comes after the
// nodes it takes outputs from, or an error naming a cycle.
func (wf *Workflow) order() ([]string, error) {
	deps := wf.deps()
	state := map[string]int{} // 0 unseen, 1 on the path, 2 done
	var out []string
	var path []string
	var visit func(id string) error
	visit = func(id string) error {
		switch state[id] {
		case 1:
			i := slices.Index(path, id)
			return fmt.Errorf("the nodes form a cycle: %s → %s", strings.Join(path[i:], " → "), id)
		case 2:
			return nil
		}
		state[id] = 1
		path = append(path, id)
		for _, d := range deps[id] {
			if err := visit(d); err != nil {
				return err
			}
		}
		path = path[:len(path)-1]
		state[id] = 2
		out = append(out, id)
		return nil
	}
	for _, n := range wf.Nodes {
		if err := visit(n.ID); err != nil {
			return nil, err
		}
	}
	return out, nil
}
