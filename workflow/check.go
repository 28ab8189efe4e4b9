package workflow

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/toolwire/toolwire/schema"
	"github.com/toolwire/toolwire/tool"
)

// Check checks the workflow against the tools it would run with: each
// node's tool exists, its parameters are the tool's (no unknown one, none
// of another type, none required missing), what each edge takes exists
// in its node's output (the tool's output schema, or the recorded
// output), and each input has a value (inputs names those given). Every problem is listed with its node.
func (wf *Workflow) Check(reg *tool.Registry, inputs map[string]any) error {
	var errs []error
	if err := wf.checkForm(); err != nil {
		errs = append(errs, err)
	}
	if _, err := wf.inputValues(inputs); err != nil {
		errs = append(errs, err)
	}
	var names []string
	for _, t := range reg.Tools() {
		names = append(names, t.Info().Name)
	}
	for _, n := range wf.Nodes {
		t, ok := reg.Lookup(n.Tool)
		if !ok {
			msg := fmt.Sprintf("node %s: unknown tool %q", n.ID, n.Tool)
			if n.Server != "" {
				msg += fmt.Sprintf(" (from %s: is that server configured and up?)", n.Server)
			}
			if s := tool.Suggest(n.Tool, names); len(s) > 0 {
				msg += fmt.Sprintf("; did you mean %s?", strings.Join(s, " or "))
			}
			errs = append(errs, errors.New(msg))
			continue
		}
		errs = append(errs, checkParameters(n, t.Info())...)
	}
	errs = append(errs, wf.checkEdgeOutputs(reg)...)
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	return nil
}

// checkParameters compares a node's parameters with its tool's schema.
func checkParameters(n Node, info tool.Info) []error {
	props := properties(info.InputSchema)
	var errs []error
	known := map[string]schema.Property{}
	for _, p := range props {
		known[p.Name] = p
	}
	for _, p := range n.InputParameters {
		prop, ok := known[p.Name]
		if !ok {
			var list []string
			for _, q := range props {
				list = append(list, q.Name)
			}
			errs = append(errs, fmt.Errorf("node %s: tool %s has no parameter %q now (its parameters: %s)", n.ID, n.Tool, p.Name, strings.Join(list, ", ")))
			continue
		}
		if want := typeName(prop); want != "any" && p.Type != want {
			errs = append(errs, fmt.Errorf("node %s: parameter %q is %s in the workflow but %s in tool %s now", n.ID, p.Name, p.Type, want, n.Tool))
		}
	}
	for _, r := range required(info.InputSchema) {
		if !slices.ContainsFunc(n.InputParameters, func(p Parameter) bool { return p.Name == r }) {
			errs = append(errs, fmt.Errorf("node %s: tool %s requires %q, which the workflow does not give", n.ID, n.Tool, r))
		}
	}
	return errs
}

// required lists an object schema's required properties.
func required(schema []byte) []string {
	var s struct {
		Required []string `json:"required"`
	}
	_ = json.Unmarshal(schema, &s)
	return s.Required
}
