package workflow

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/toolwire/toolwire/schema"
	"github.com/toolwire/toolwire/tool"
)

// Recorder records the calls a registry makes, as middleware, and writes
// them as a workflow. Only calls that succeeded are kept, so a call the
// model repaired appears in its final form only. Use one Recorder per run.
type Recorder struct {
	// Task is the user's request: a value a call used that the user typed
	// in it (a file path, a date) becomes an input of the workflow, with
	// the value as its default.
	Task string

	mu    sync.Mutex
	seq   int
	calls []recordedCall
}

type recordedCall struct {
	seq    int
	name   string
	server string
	info   tool.Info
	args   map[string]any
	result *tool.Result
}

// Middleware returns the middleware that records; add it with
// Registry.Use.
func (r *Recorder) Middleware() tool.Middleware {
	return func(next tool.Handler) tool.Handler {
		return func(ctx context.Context, c *tool.Call) (*tool.Result, error) {
			r.mu.Lock()
			r.seq++
			seq := r.seq
			r.mu.Unlock()
			res, err := next(ctx, c)
			if err != nil || res == nil || res.IsError {
				return res, err
			}
			info := c.Tool.Info()
			args := map[string]any{}
			dec := json.NewDecoder(bytes.NewReader(c.Args()))
			dec.UseNumber()
			if dec.Decode(&args) != nil {
				return res, err
			}
			for _, name := range info.Injected {
				delete(args, name) // system parameters stay out
			}
			server := ""
			if s, ok := c.Tool.(interface{ Server() string }); ok {
				server = s.Server()
			}
			r.mu.Lock()
			r.calls = append(r.calls, recordedCall{seq: seq, name: c.Name, server: server, info: info, args: args, result: res})
			r.mu.Unlock()
			return res, err
		}
	}
}

// Reset forgets the calls recorded so far, and the task.
func (r *Recorder) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls, r.Task = nil, ""
}

// Len returns the number of calls recorded.
func (r *Recorder) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.calls)
}

// handlePattern matches a handle: a short kind, '_', and at least 22
// URL-safe characters (128 bits).
var handlePattern = regexp.MustCompile(`\b([a-z][a-z0-9]{1,7})_[A-Za-z0-9_-]{22,}`)

// Workflow writes the recorded calls as a workflow, in the order they
// started. Edges are found, not guessed: a parameter whose value is a
// handle an earlier call returned, or equals an earlier call's whole text
// or a field of its structured content, is fed by that call.
func (r *Recorder) Workflow(name string) *Workflow {
	r.mu.Lock()
	calls := append([]recordedCall(nil), r.calls...)
	r.mu.Unlock()
	sort.Slice(calls, func(i, j int) bool { return calls[i].seq < calls[j].seq })
	wf := &Workflow{Version: Version, Name: name, Inputs: []Input{}, Nodes: []Node{}, Edges: []Edge{}}
	ids := map[string]int{}
	var nodeIDs []string
	for i, c := range calls {
		id := nodeID(c.name, ids)
		nodeIDs = append(nodeIDs, id)
		node := Node{ID: id, Server: c.server, Tool: c.name}
		v := c.result.ForModel()
		node.Output = &Output{Text: v.Text, Structured: c.result.StructuredContent}
		for _, prop := range properties(c.info.InputSchema) {
			p := Parameter{Name: prop.Name, Type: typeName(prop)}
			val, given := c.args[prop.Name]
			def := defaultOf(prop)
			switch {
			case given:
				p.Value = number(val)
			case def != nil:
				p.Value = def
			default:
				p.Value, p.Unset = zero(p.Type), true
			}
			if from, out, ok := feeder(p.Value, calls[:i]); ok {
				wf.Edges = append(wf.Edges, Edge{From: nodeIDs[from], Output: out, To: id, Parameter: p.Name})
				p.Value = ""
			} else if s, ok := p.Value.(string); ok && len(s) >= 3 && strings.Contains(r.Task, s) {
				p.Input = inputFor(wf, id, p, prop.Description)
			}
			node.InputParameters = append(node.InputParameters, p)
		}
		if node.InputParameters == nil {
			node.InputParameters = []Parameter{}
		}
		wf.Nodes = append(wf.Nodes, node)
	}
	return wf
}

// nodeID names a node after its tool, numbered from the second on.
func nodeID(tool string, used map[string]int) string {
	used[tool]++
	if used[tool] == 1 {
		return tool
	}
	return fmt.Sprintf("%s_%d", tool, used[tool])
}

// inputFor declares the workflow input a parameter of a node takes, named
// NODE.PARAMETER so that a user can tell which it feeds, and returns its
// name.
func inputFor(wf *Workflow, node string, p Parameter, description string) string {
	base := node + "." + p.Name
	name := base
	for n := 2; hasInput(wf.Inputs, name); n++ { // a node id or parameter with a dot in it
		name = fmt.Sprintf("%s_%d", base, n)
	}
	wf.Inputs = append(wf.Inputs, Input{Name: name, Type: p.Type, Default: p.Value, Description: description})
	return name
}

func hasInput(inputs []Input, name string) bool {
	for _, in := range inputs {
		if in.Name == name {
			return true
		}
	}
	return false
}

// feeder finds the latest earlier call whose output value came from: a
// handle in its text, a field of its structured content, or its whole
// text. It returns the call's index and the edge's output.
func feeder(value any, earlier []recordedCall) (int, string, bool) {
	s, isString := value.(string)
	if isString && s == "" {
		return 0, "", false
	}
	if _, isBool := value.(bool); isBool || value == nil {
		return 0, "", false
	}
	for i := len(earlier) - 1; i >= 0; i-- {
		res := earlier[i].result
		if path, ok := findField(res.StructuredContent, value, "structured"); ok {
			return i, path, true
		}
		text := res.ForModel().Text
		if isString && text == s {
			return i, "", true
		}
		if isString {
			if m := handlePattern.FindStringSubmatch(s); m != nil && m[0] == s && strings.Contains(text, s) {
				return i, "handle:" + m[1], true
			}
		}
	}
	return 0, "", false
}

// findField finds value among the fields of structured content (objects
// within objects), returning its path.
func findField(content, value any, path string) (string, bool) {
	var m map[string]any
	switch c := content.(type) {
	case map[string]any:
		m = c
	case json.RawMessage:
		if json.Unmarshal(c, &m) != nil {
			return "", false
		}
	default:
		if content == nil {
			return "", false
		}
		b, err := json.Marshal(content)
		if err != nil || json.Unmarshal(b, &m) != nil {
			return "", false
		}
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if same(m[k], value) {
			return path + "." + k, true
		}
	}
	for _, k := range keys {
		if sub, ok := m[k].(map[string]any); ok {
			if p, ok := findField(sub, value, path+"."+k); ok {
				return p, true
			}
		}
	}
	return "", false
}

// same reports whether two JSON values are equal, numbers by value.
func same(a, b any) bool {
	if fa, ok := toFloat(a); ok {
		fb, ok := toFloat(b)
		return ok && fa == fb
	}
	return reflect.DeepEqual(a, b)
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int64:
		return float64(x), true
	case int:
		return float64(x), true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}

// properties lists an input schema's properties in the schema's order
// (none when the schema is not an object).
func properties(inputSchema json.RawMessage) []schema.Property {
	props, _ := schema.Properties(inputSchema)
	return props
}

// defaultOf is a property's default as a workflow holds it, or nil (for
// none and for null).
func defaultOf(p schema.Property) any {
	dec := json.NewDecoder(bytes.NewReader(p.Default))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil
	}
	return number(v)
}

// typeName names a JSON Schema type as recorded workflows do: str, int,
// float, bool, list, dict ("any" when the schema says nothing).
func typeName(p schema.Property) string {
	switch p.MainType() {
	case "string":
		return "str"
	case "integer":
		return "int"
	case "number":
		return "float"
	case "boolean":
		return "bool"
	case "array":
		return "list"
	case "object":
		return "dict"
	}
	return "any"
}

// zero is the empty value of a type.
func zero(typ string) any {
	switch typ {
	case "str":
		return ""
	case "int":
		return int64(0)
	case "float":
		return 0.0
	case "bool":
		return false
	case "list":
		return []any{}
	case "dict":
		return map[string]any{}
	}
	return nil
}
