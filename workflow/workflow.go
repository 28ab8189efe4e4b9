// Package workflow turns an agent's tool calls into a workflow that runs
// again without a model: one node per call, listing every
// parameter of the tool's schema with the value the call used; edges where
// a later call's parameter was fed by an earlier call's output; inputs for
// what the user typed in the task.
//
// A Recorder (registry middleware) writes a run's calls as a Workflow; a
// Runner replays one through a registry, independent nodes at once, or
// serves it as one tool (Runner.Tool); Check
// finds what no longer fits the tools; Mermaid, Dot and Text draw it. The
// file format is JSON, described by schema.json beside this file, with
// keys in a fixed order so that diffs stay small.
package workflow

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// Version is the version of the file format this package reads and
// writes.
const Version = "toolwire.workflow/v1"

// Workflow is a DAG of tool calls.
type Workflow struct {
	Version     string  `json:"version"`
	Name        string  `json:"name,omitempty"`
	Description string  `json:"description,omitempty"`
	Inputs      []Input `json:"inputs"`
	Nodes       []Node  `json:"nodes"`
	Edges       []Edge  `json:"edges"`
}

// Input is a value given when the workflow runs (toolwire workflow run
// --set NAME=VALUE), with the value the recorded run used as its default.
// A Recorder names it NODE.PARAMETER, after the parameter it feeds (see
// Feeds).
type Input struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Default     any    `json:"default,omitempty"`
	Description string `json:"description,omitempty"`
}

// Node is one tool call.
type Node struct {
	ID string `json:"id"`
	// Server names the MCP server or built-in toolset the tool is from
	// ("" when unknown); Tool is its name in the registry.
	Server string `json:"server,omitempty"`
	Tool   string `json:"tool"`
	// InputParameters lists every parameter of the tool's schema but
	// those the host injects, in the schema's order.
	InputParameters []Parameter `json:"input_parameters"`
	// Output is what the recorded call returned, for reference.
	Output *Output `json:"output,omitempty"`
}

// Parameter is one parameter of a node: its value; or, when Input is set,
// the workflow input of that name; or, when an edge leads to it, the
// output of another node (Value is then "").
type Parameter struct {
	Name  string `json:"name"`
	Type  string `json:"type"`
	Value any    `json:"value"`
	Input string `json:"input,omitempty"`
	// Unset marks a parameter the recorded call did not give and whose
	// schema has no default: Value is the type's empty value, listed for
	// completeness, and a run leaves the parameter out, as the
	// call did.
	Unset bool `json:"unset,omitempty"`
}

// Output is a recorded result.
type Output struct {
	Text       string `json:"text,omitempty"`
	Structured any    `json:"structured,omitempty"`
}

// Edge feeds a node's parameter with another node's output. Output says
// which part: "" for the whole text, "structured.a.b" for a field of the
// structured content, "handle:KIND" for the first handle of that kind in
// the text (tbl_… for tables).
type Edge struct {
	From      string `json:"from"`
	Output    string `json:"output"`
	To        string `json:"to"`
	Parameter string `json:"parameter"`
}

// Parse reads a workflow from JSON, checking its form: the version, the
// node ids, the edges' ends, and that the graph has no cycle. It does not
// look at the tools (see Check).
func Parse(data []byte) (*Workflow, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	var wf Workflow
	if err := dec.Decode(&wf); err != nil {
		return nil, fmt.Errorf("workflow: not valid workflow JSON: %s", describeJSONError(data, err))
	}
	if dec.More() {
		return nil, fmt.Errorf("workflow: text after the workflow's JSON object")
	}
	normalize(&wf)
	if err := wf.checkForm(); err != nil {
		return nil, err
	}
	return &wf, nil
}

// normalize turns json.Numbers back into float64 or int64 values.
func normalize(wf *Workflow) {
	for i := range wf.Inputs {
		wf.Inputs[i].Default = number(wf.Inputs[i].Default)
	}
	for i := range wf.Nodes {
		for j := range wf.Nodes[i].InputParameters {
			p := &wf.Nodes[i].InputParameters[j]
			p.Value = number(p.Value)
		}
	}
}

// number makes the numbers in v plain Go numbers: int64 when whole.
func number(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case []any:
		for i := range x {
			x[i] = number(x[i])
		}
	case map[string]any:
		for k := range x {
			x[k] = number(x[k])
		}
	}
	return v
}

// describeJSONError says where JSON went wrong.
func describeJSONError(data []byte, err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		line, col := position(data, se.Offset-1) // the offset is past the byte at fault
		return fmt.Sprintf("%v at line %d, column %d", se, line, col)
	case errors.As(err, &te):
		line, col := position(data, te.Offset)
		return fmt.Sprintf("%s must be %s, not a JSON %s (line %d, column %d)", te.Field, te.Type, te.Value, line, col)
	case err == io.EOF:
		return "the file is empty"
	}
	return err.Error()
}

// position turns a byte offset into a line and column.
func position(data []byte, offset int64) (line, col int) {
	line, col = 1, 1
	for i := 0; i < int(offset) && i < len(data); i++ {
		if data[i] == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return line, col
}

// Load reads a workflow file.
func Load(path string) (*Workflow, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("workflow: %w", err)
	}
	wf, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return wf, nil
}

// Marshal writes the workflow as indented JSON, keys in a fixed order.
func (wf *Workflow) Marshal() ([]byte, error) {
	c := *wf
	if c.Version == "" {
		c.Version = Version
	}
	for _, s := range []*[]Input{&c.Inputs} {
		if *s == nil {
			*s = []Input{}
		}
	}
	if c.Nodes == nil {
		c.Nodes = []Node{}
	}
	if c.Edges == nil {
		c.Edges = []Edge{}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(&c); err != nil {
		return nil, fmt.Errorf("workflow: %w", err)
	}
	return buf.Bytes(), nil
}

// Save writes the workflow to a file.
func (wf *Workflow) Save(path string) error {
	b, err := wf.Marshal()
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}
