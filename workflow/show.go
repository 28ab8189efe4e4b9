package workflow

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Mermaid draws the workflow as a Mermaid flowchart.
func (wf *Workflow) Mermaid() string {
	var b strings.Builder
	b.WriteString("flowchart TD\n")
	for _, in := range wf.Inputs {
		fmt.Fprintf(&b, "  in_%s([%s])\n", mermaidID(in.Name), mermaidText("input "+in.Name))
	}
	for _, n := range wf.Nodes {
		fmt.Fprintf(&b, "  %s[%s]\n", mermaidID(n.ID), mermaidText(n.ID+": "+n.Tool))
	}
	for _, n := range wf.Nodes {
		for _, p := range n.InputParameters {
			if p.Input != "" {
				fmt.Fprintf(&b, "  in_%s -->|%s| %s\n", mermaidID(p.Input), mermaidText(p.Name), mermaidID(n.ID))
			}
		}
	}
	for _, e := range wf.Edges {
		fmt.Fprintf(&b, "  %s -->|%s| %s\n", mermaidID(e.From), mermaidText(edgeLabel(e)), mermaidID(e.To))
	}
	return b.String()
}

// Dot draws the workflow in Graphviz's dot language.
func (wf *Workflow) Dot() string {
	var b strings.Builder
	name := wf.Name
	if name == "" {
		name = "workflow"
	}
	fmt.Fprintf(&b, "digraph %q {\n  rankdir=TB;\n  node [shape=box];\n", name)
	for _, in := range wf.Inputs {
		fmt.Fprintf(&b, "  %q [shape=ellipse, label=%q];\n", "input:"+in.Name, "input "+in.Name)
	}
	for _, n := range wf.Nodes {
		fmt.Fprintf(&b, "  %q [label=%q];\n", n.ID, n.ID+"\n"+n.Tool)
	}
	for _, n := range wf.Nodes {
		for _, p := range n.InputParameters {
			if p.Input != "" {
				fmt.Fprintf(&b, "  %q -> %q [label=%q];\n", "input:"+p.Input, n.ID, p.Name)
			}
		}
	}
	for _, e := range wf.Edges {
		fmt.Fprintf(&b, "  %q -> %q [label=%q];\n", e.From, e.To, edgeLabel(e))
	}
	b.WriteString("}\n")
	return b.String()
}

// Text lists the nodes in the order they can run, with what feeds each.
func (wf *Workflow) Text() string {
	var b strings.Builder
	if wf.Name != "" {
		fmt.Fprintf(&b, "%s\n", wf.Name)
	}
	for _, in := range wf.Inputs {
		value := "no value: pass --set " + in.Name + "=VALUE"
		if in.Default != nil {
			v, _ := json.Marshal(in.Default)
			value = string(v)
		}
		feeds := "feeds no parameter"
		if f := wf.Feeds(in.Name); len(f) > 0 {
			feeds = "feeds " + strings.Join(f, ", ")
		}
		fmt.Fprintf(&b, "input %s (%s) = %s: %s\n", in.Name, in.Type, value, feeds)
	}
	order, err := wf.order()
	if err != nil {
		return b.String() + err.Error() + "\n"
	}
	byID := map[string]Node{}
	for _, n := range wf.Nodes {
		byID[n.ID] = n
	}
	for _, id := range order {
		n := byID[id]
		fmt.Fprintf(&b, "%s: %s\n", n.ID, n.Tool)
		for _, p := range n.InputParameters {
			switch {
			case p.Input != "":
				fmt.Fprintf(&b, "  %s = input %s\n", p.Name, p.Input)
			case p.Unset:
				fmt.Fprintf(&b, "  %s (not given)\n", p.Name)
			case wf.fedBy(n.ID, p.Name) != nil:
				e := wf.fedBy(n.ID, p.Name)
				fmt.Fprintf(&b, "  %s = %s %s\n", p.Name, e.From, edgeLabel(*e))
			default:
				fmt.Fprintf(&b, "  %s = %v\n", p.Name, p.Value)
			}
		}
	}
	return b.String()
}

// fedBy returns the edge that feeds a node's parameter, if any.
func (wf *Workflow) fedBy(node, param string) *Edge {
	for i, e := range wf.Edges {
		if e.To == node && e.Parameter == param {
			return &wf.Edges[i]
		}
	}
	return nil
}

func edgeLabel(e Edge) string {
	out := e.Output
	if out == "" {
		out = "text"
	}
	return out + " → " + e.Parameter
}

// mermaidID makes an id Mermaid takes.
func mermaidID(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' {
			return r
		}
		return '_'
	}, s)
}

// mermaidText quotes a label for Mermaid.
func mermaidText(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, "#quot;") + `"`
}
