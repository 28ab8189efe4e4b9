package workflow

import (
	"fmt"
	"strings"
)

// Inputs are named NODE.PARAMETER by the Recorder, after the parameter
// they feed. Workflows recorded before took the parameter's name alone
// ("path", "path_2"); their inputs keep those names, and are reached by
// the NODE.PARAMETER of the parameter they feed too.

// Feeds lists the parameters an input gives its value to, as
// NODE.PARAMETER, in the nodes' order.
func (wf *Workflow) Feeds(input string) []string {
	var out []string
	for _, n := range wf.Nodes {
		for _, p := range n.InputParameters {
			if p.Input == input {
				out = append(out, n.ID+"."+p.Name)
			}
		}
	}
	return out
}

// inputNamed returns the input a name given to run (--set NAME=VALUE)
// means: the input of that name, else the input that feeds the parameter
// NODE.PARAMETER.
func (wf *Workflow) inputNamed(name string) (string, bool) {
	if hasInput(wf.Inputs, name) {
		return name, true
	}
	for _, n := range wf.Nodes {
		node, param, ok := strings.Cut(name, n.ID+".")
		if !ok || node != "" {
			continue
		}
		for _, p := range n.InputParameters {
			if p.Name == param && p.Input != "" {
				return p.Input, true
			}
		}
	}
	return "", false
}

// inputList names the inputs for a message, each with the parameters it
// feeds when its name does not say.
func (wf *Workflow) inputList() string {
	if len(wf.Inputs) == 0 {
		return "none"
	}
	var names []string
	for _, in := range wf.Inputs {
		feeds := wf.Feeds(in.Name)
		if len(feeds) == 1 && feeds[0] == in.Name || len(feeds) == 0 {
			names = append(names, in.Name)
		} else {
			names = append(names, fmt.Sprintf("%s (feeds %s)", in.Name, strings.Join(feeds, ", ")))
		}
	}
	return strings.Join(names, ", ")
}
