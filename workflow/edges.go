package workflow

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/toolwire/toolwire/schema"
	"github.com/toolwire/toolwire/tool"
)

// checkEdgeOutputs checks that what each edge takes exists in what its
// node gives: a field in the tool's output schema or in the recorded
// structured content, a handle of the kind in the recorded text. An edge
// that neither can tell about (no output schema, nothing recorded) is
// left to the run.
func (wf *Workflow) checkEdgeOutputs(reg *tool.Registry) []error {
	nodes := map[string]*Node{}
	for i := range wf.Nodes {
		nodes[wf.Nodes[i].ID] = &wf.Nodes[i]
	}
	var errs []error
	for _, e := range wf.Edges {
		n := nodes[e.From]
		if n == nil || e.Output == "" {
			continue // a dangling edge is checkForm's; the whole text always is
		}
		var recorded *tool.Result
		switch {
		case n.Output == nil:
		case strings.HasPrefix(e.Output, "handle:") && n.Output.Text != "":
			recorded = &tool.Result{Content: []tool.Content{tool.TextContent(n.Output.Text)}}
		case strings.HasPrefix(e.Output, "structured.") && n.Output.Structured != nil:
			recorded = &tool.Result{StructuredContent: n.Output.Structured}
		}
		var recordedErr error
		if recorded != nil {
			if _, recordedErr = extract(recorded, e.Output); recordedErr == nil {
				continue
			}
		}
		has, known, fields := true, false, []string(nil)
		if t, ok := reg.Lookup(n.Tool); ok && strings.HasPrefix(e.Output, "structured.") {
			has, known, fields = schemaHas(t.Info().OutputSchema, strings.Split(strings.TrimPrefix(e.Output, "structured."), "."))
		}
		switch {
		case known && has:
			// The schema has it, though the recorded result had not.
		case known:
			errs = append(errs, fmt.Errorf("edge %s → %s.%s: tool %s's output schema has no %q (its fields there: %s): take a field it has", e.From, e.To, e.Parameter, n.Tool, e.Output, strings.Join(fields, ", ")))
		case recorded != nil:
			errs = append(errs, fmt.Errorf("edge %s → %s.%s: the output node %s recorded has no %q (%v): take a part it has", e.From, e.To, e.Parameter, e.From, e.Output, recordedErr))
		}
	}
	return errs
}

// schemaHas reports whether an object schema has the nested field path;
// known is false when the schema does not list its properties down to
// the path (then it may have any field); fields are the names at the
// level that lacks it.
func schemaHas(doc json.RawMessage, path []string) (has, known bool, fields []string) {
	for _, name := range path {
		props, err := schema.Properties(doc)
		if len(doc) == 0 || err != nil || len(props) == 0 {
			return false, false, nil
		}
		doc, fields = nil, nil
		for _, p := range props {
			fields = append(fields, p.Name)
			if p.Name == name {
				doc = p.Schema
			}
		}
		if doc == nil {
			return false, true, fields
		}
	}
	return true, true, nil
}
