package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/toolwire/toolwire/internal/fastpath"
	"github.com/toolwire/toolwire/internal/jsonvalue"
	"github.com/toolwire/toolwire/schema"
)

// pipeline completes and checks the arguments of calls to one tool, the same
// way for every caller (an agent, the MCP server, `toolwire call`, workflow
// replay):
//
//	parse the model's JSON → drop injected parameters the model sent →
//	fill defaults from the schema → validate → add the injected values
//
// Injected parameters are those the host fills, never the model: they are
// absent from the schema the model sees, anything the model sends for them
// is dropped, and the host's value is used.
//
// Arguments the schema does not name: where a model writes the arguments
// (an agent), an argument the schema refuses (as an inferred schema's
// "additionalProperties": false does) is an *ArgumentsError, with the
// known names and a did-you-mean for a misspelling, so that the model
// repairs its call. Where a host sends them (the MCP server, see
// Registry.IgnoreUnknownArguments), top-level arguments the schema does
// not name are dropped before validation and the tool never sees them, as
// the ecosystem's servers do: hosts add arguments of their own to every
// tool (Gemini CLI's wait_for_previous), and a call must not fail for
// them. Arguments the schema accepts without naming them (no
// "additionalProperties": false) reach the tool either way.
type pipeline struct {
	tool      string
	validator *schema.Validator
	injected  []string
	values    map[string]any // static injected values (host configuration)
	// hasDefaults: the schema declares defaults Prepare fills in.
	hasDefaults bool
}

// newPipeline compiles the pipeline of a tool described by info: its
// model-facing input schema (empty means an object with no declared
// properties), the parameters the host injects and the values known for
// them now (others come from the call's context, see WithInjected).
func newPipeline(info Info) (*pipeline, error) {
	inputSchema := info.InputSchema
	if len(bytes.TrimSpace(inputSchema)) == 0 {
		inputSchema = emptyObjectSchema
	}
	v, err := schema.Compile(inputSchema)
	if err != nil {
		return nil, fmt.Errorf("tool %s: input schema: %w", info.Name, err)
	}
	return &pipeline{tool: info.Name, validator: v, injected: info.Injected, values: info.InjectedValues, hasDefaults: fastpath.HasDefaults(v)}, nil
}

// names returns the names of the tool's top-level arguments.
func (p *pipeline) names() []string {
	props, _ := schema.Properties(p.validator.Schema()) // compiled, so an object
	out := make([]string, len(props))
	for i, prop := range props {
		out[i] = prop.Name
	}
	return out
}

// Injected lists the parameters the host fills.
func (p *pipeline) Injected() []string { return p.injected }

// changesNothing reports whether Prepare only checks arguments: it fills no
// defaults and injects nothing, so a tool may be given the arguments as the
// model wrote them once they pass.
func (p *pipeline) changesNothing() bool { return len(p.injected) == 0 && !p.hasDefaults }

// noMembers is the object that stands for no arguments.
var noMembers = json.RawMessage(`{}`)

// maxAsWritten is the size of the largest arguments asWritten takes.
// Checking arguments as written and then filling a typed input from them
// reads each string twice more than decoding them once into the generic
// form does: that saves allocations on the usual small arguments, and
// costs time on long ones (a 1 MiB text: 5.3 ms instead of 4.3 ms per
// call, measured by bench's StdioEchoLarge).
const maxAsWritten = 64 << 10

// asWritten reports whether the model's arguments raw may reach the tool
// as written: Prepare would change nothing in them (see changesNothing)
// and the schema certainly accepts them, which Prepare would then find
// too. It returns them trimmed of white space, {} for no arguments. When
// it reports false, only Prepare can tell: it decodes and validates.
// Arguments over maxAsWritten bytes always go to Prepare.
func (p *pipeline) asWritten(raw json.RawMessage) (json.RawMessage, bool) {
	if !p.changesNothing() || len(raw) > maxAsWritten {
		return nil, false
	}
	raw = bytes.TrimSpace(raw)
	if noArguments(raw) {
		raw = noMembers
	}
	return raw, raw[0] == '{' && fastpath.AcceptsJSON(p.validator, raw)
}

// ArgumentsError reports arguments a model must repair: JSON it could not
// parse, required arguments it left out, and every other problem with the
// path, what was expected and what came. Its message is written for the
// model.
type ArgumentsError struct {
	Tool string
	// Syntax describes unparsable JSON, quoting the position.
	Syntax string
	// Missing lists required arguments that are absent ("model_path",
	// "opts/depth").
	Missing []string
	// Problems lists the other failures.
	Problems []schema.Problem

	// known lists the top-level argument names, for a did-you-mean.
	known []string
	// ignored lists the arguments dropped for not being named (see
	// Registry.IgnoreUnknownArguments): one close to a known name is
	// told, as a likely cause of the failure.
	ignored []string
}

func (e *ArgumentsError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "invalid arguments for tool %s", e.Tool)
	sep := ": "
	if e.Syntax != "" {
		b.WriteString(sep + e.Syntax)
		sep = "; "
	}
	if len(e.Missing) > 0 {
		quoted := make([]string, len(e.Missing))
		for i, m := range e.Missing {
			quoted[i] = fmt.Sprintf("%q", m)
		}
		fmt.Fprintf(&b, "%smissing required argument%s %s", sep, plural(len(e.Missing)), strings.Join(quoted, ", "))
		sep = "; "
	}
	for _, pr := range e.Problems {
		b.WriteString(sep + problemText(pr, e.known))
		sep = "; "
	}
	for _, name := range e.ignored {
		if s := Suggest(name, e.known); len(s) > 0 {
			fmt.Fprintf(&b, "%sargument %q was ignored, as the tool has none of that name: did you mean %q?", sep, name, s[0])
		}
	}
	return b.String()
}

// problemText says what is wrong in one problem, with a did-you-mean for
// a top-level argument the schema does not name that is close to one of
// known, those it names.
func problemText(pr schema.Problem, known []string) string {
	if pr.Keyword != "additionalProperties" || strings.Contains(pr.Path, "/") {
		return pr.String()
	}
	s := Suggest(unescapePointer.Replace(pr.Path), known)
	if len(s) == 0 {
		return pr.String()
	}
	return fmt.Sprintf("unknown argument %q: did you mean %q? (%s)", pr.Path, s[0], pr.Expected)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

type injectedKey struct{}

// WithInjected returns a context carrying values for injected parameters,
// by parameter name, for every tool called with it. They take precedence
// over values given when the tool was set up.
func WithInjected(ctx context.Context, values map[string]any) context.Context {
	if prev, ok := ctx.Value(injectedKey{}).(map[string]any); ok {
		merged := make(map[string]any, len(prev)+len(values))
		for k, v := range prev {
			merged[k] = v
		}
		for k, v := range values {
			merged[k] = v
		}
		values = merged
	}
	return context.WithValue(ctx, injectedKey{}, values)
}

// noArguments reports whether the model's arguments, white space trimmed,
// are none at all: empty or null, which mean {}.
func noArguments(raw []byte) bool { return len(raw) == 0 || bytes.Equal(raw, []byte("null")) }

// parse reads the model's arguments: an empty string means {}.
func (p *pipeline) parse(raw json.RawMessage) (map[string]any, error) {
	raw = bytes.TrimSpace(raw)
	if noArguments(raw) {
		return map[string]any{}, nil
	}
	v, err := jsonvalue.Decode(raw)
	if err != nil {
		return nil, &ArgumentsError{Tool: p.tool, Syntax: describeSyntax(raw, err)}
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, &ArgumentsError{Tool: p.tool, Syntax: fmt.Sprintf("arguments must be a JSON object, got %s", kindOfValue(v))}
	}
	return m, nil
}

// describeSyntax tells the model what is wrong with the JSON raw, and
// where.
func describeSyntax(raw []byte, err error) string {
	var syn *jsonvalue.SyntaxError
	if !errors.As(err, &syn) {
		return "arguments are not valid JSON: " + err.Error()
	}
	if syn.Msg == jsonvalue.UnexpectedEnd {
		return fmt.Sprintf("arguments are not valid JSON: they end early (after %d bytes): close every string, array and object", len(raw))
	}
	start := max(0, int(syn.Offset)-20)
	end := min(len(raw), int(syn.Offset)+10)
	return fmt.Sprintf("arguments are not valid JSON: %s at byte %d, near %q", syn.Msg, syn.Offset, raw[start:end])
}

func kindOfValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case float64:
		return "a number"
	case string:
		return fmt.Sprintf("a string %q", x)
	case []any:
		return "an array"
	}
	return fmt.Sprintf("%T", v)
}

// Prepare runs the pipeline over the model's arguments and returns the
// completed arguments, or an *ArgumentsError the model can act on. An
// argument the schema refuses is an error (see pipeline).
func (p *pipeline) Prepare(ctx context.Context, raw json.RawMessage) (map[string]any, error) {
	m, _, err := p.prepare(ctx, raw, false)
	return m, err
}

// prepare is Prepare; with dropUnknown, top-level arguments the schema
// refuses for not naming them are dropped instead, and dropped reports
// whether there were any.
func (p *pipeline) prepare(ctx context.Context, raw json.RawMessage, dropUnknown bool) (_ map[string]any, dropped bool, _ error) {
	m, err := p.parse(raw)
	if err != nil {
		return nil, false, err
	}
	for _, name := range p.injected {
		delete(m, name) // never trust the model with these
	}
	p.validator.ApplyDefaults(m)
	err = p.validator.Validate(m)
	var ignored []string
	if err != nil && dropUnknown {
		if ignored = dropUnnamed(m, err); len(ignored) > 0 {
			dropped = true
			err = p.validator.Validate(m)
		}
	}
	if err != nil {
		var ve *schema.ValidationError
		if errors.As(err, &ve) {
			return nil, false, &ArgumentsError{Tool: p.tool, Missing: ve.Missing, Problems: ve.Problems, known: p.names(), ignored: ignored}
		}
		return nil, false, fmt.Errorf("tool %s: validating arguments: %w", p.tool, err)
	}
	if len(p.injected) > 0 {
		ctxValues, _ := ctx.Value(injectedKey{}).(map[string]any)
		var unset []string
		for _, name := range p.injected {
			if v, ok := ctxValues[name]; ok {
				m[name] = v
			} else if v, ok := p.values[name]; ok {
				m[name] = v
			} else {
				unset = append(unset, name)
			}
		}
		if len(unset) > 0 {
			sort.Strings(unset)
			return nil, false, &InjectionError{Tool: p.tool, Unset: unset}
		}
	}
	return m, dropped, nil
}

// dropUnnamed deletes from the arguments m the top-level members that err,
// their validation error, refuses for not being named by the schema, and
// returns their names.
func dropUnnamed(m map[string]any, err error) []string {
	var ve *schema.ValidationError
	if !errors.As(err, &ve) {
		return nil
	}
	var dropped []string
	for _, pr := range ve.Problems {
		if pr.Keyword != "additionalProperties" || strings.Contains(pr.Path, "/") {
			continue // another problem, or one inside an argument
		}
		name := unescapePointer.Replace(pr.Path)
		delete(m, name)
		dropped = append(dropped, name)
	}
	return dropped
}

// unescapePointer turns a JSON Pointer token back into a member name.
var unescapePointer = strings.NewReplacer("~1", "/", "~0", "~")

// Parameter is one parameter of a call, as a workflow records it.
type Parameter struct {
	Name  string `json:"name"`
	Type  string `json:"type"`
	Value any    `json:"value"`
}

// Parameters returns every parameter of the tool's schema for a call with
// the model's arguments raw: the model's value, else the default, else the
// typed zero value. Injected (system) parameters are left out.
func (p *pipeline) Parameters(raw json.RawMessage) ([]Parameter, error) {
	m, err := p.parse(raw)
	if err != nil {
		return nil, err
	}
	for _, name := range p.injected {
		delete(m, name)
	}
	p.validator.ApplyDefaults(m)
	props, _ := schema.Properties(p.validator.Schema()) // compiled, so an object
	out := make([]Parameter, 0, len(props))
	for _, prop := range props {
		typ := prop.MainType()
		if typ == "" {
			typ = "any"
		}
		v, ok := m[prop.Name]
		if !ok {
			v = zeroOf(typ)
		}
		out = append(out, Parameter{Name: prop.Name, Type: typ, Value: v})
	}
	return out, nil
}

func zeroOf(typ string) any {
	switch typ {
	case "string":
		return ""
	case "integer", "number":
		return 0
	case "boolean":
		return false
	case "array":
		return []any{}
	case "object":
		return map[string]any{}
	}
	return nil
}
