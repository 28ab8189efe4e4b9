package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/toolwire/toolwire/internal/jsonvalue"
	"github.com/toolwire/toolwire/schema"
)

// Typed is a tool made from a Go function: New infers its input schema from
// In and its output schema from Out, and a call fills an In from the
// completed arguments before the function sees it.
type Typed[In, Out any] struct {
	info   Info
	fn     func(context.Context, In) (Out, error)
	assign *assigner
}

// New makes a tool of fn. Registering it is all it takes: the name routes
// calls, the schema comes from the signature, and fields of In tagged
// `tool:"inject"` are filled by the host, never by the model.
//
// In is a struct (see package schema for the tags that describe fields).
// Only its top-level fields (including fields promoted from embedded
// structs) may be tagged tool:"inject"; they are left out of the schema.
// Out is shown to the model as JSON, with its schema as the output schema;
// a string Out is plain text, and a *Result Out is returned as it is.
func New[In, Out any](name, description string, fn func(ctx context.Context, in In) (Out, error)) (*Typed[In, Out], error) {
	opts := schema.Options{Omit: injected}
	in, err := schema.ForType(reflect.TypeFor[In](), opts)
	if err != nil {
		return nil, fmt.Errorf("tool %s: input type: %w", name, err)
	}
	info := Info{Name: name, Description: description, InputSchema: in.Schema, Injected: in.Omitted}
	if out := reflect.TypeFor[Out](); out != reflect.TypeFor[string]() && out != reflect.TypeFor[*Result]() && out.Kind() == reflect.Struct ||
		out.Kind() == reflect.Pointer && out.Elem().Kind() == reflect.Struct && out != reflect.TypeFor[*Result]() {
		os, err := schema.ForType(out, opts)
		if err != nil {
			return nil, fmt.Errorf("tool %s: output type: %w", name, err)
		}
		info.OutputSchema = os.Schema
	}
	return &Typed[In, Out]{info: info, fn: fn, assign: newAssigner(reflect.TypeFor[In]())}, nil
}

// injected reports whether a field is tagged tool:"inject": the host
// fills it, never the model.
func injected(f reflect.StructField) bool {
	for _, o := range strings.Split(f.Tag.Get("tool"), ",") {
		if strings.TrimSpace(o) == "inject" {
			return true
		}
	}
	return false
}

// Must returns t, or panics on err: for tools defined at start-up.
func Must[T Tool](t T, err error) T {
	if err != nil {
		panic(err)
	}
	return t
}

// Info describes the tool. Callers may adjust it (title, annotations)
// with WithInfo.
func (t *Typed[In, Out]) Info() Info { return t.info }

// WithInfo returns a copy of t whose description is changed by edit (the
// name, the schemas and the injected parameters are kept).
func (t *Typed[In, Out]) WithInfo(edit func(*Info)) *Typed[In, Out] {
	c := *t
	edit(&c.info)
	c.info.Name, c.info.InputSchema, c.info.OutputSchema = t.info.Name, t.info.InputSchema, t.info.OutputSchema
	c.info.Injected = t.info.Injected
	return &c
}

// Call fills an In from the completed arguments and calls the function.
// Arguments that do not fit In (which the pipeline rules out for its own
// schema) are an *ArgumentsError.
func (t *Typed[In, Out]) Call(ctx context.Context, args json.RawMessage) (*Result, error) {
	var in In
	raw := bytes.TrimSpace(args)
	if noArguments(raw) {
		raw = noMembers
	}
	if t.assign.assignJSON(reflect.ValueOf(&in).Elem(), raw) {
		return t.run(ctx, in)
	}
	// A shape filled from the generic form only (an integer written 2.0).
	v, err := jsonvalue.Decode(raw)
	if err != nil {
		return nil, t.misfit(err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, t.misfit(fmt.Errorf("arguments must be a JSON object, got %s", kindOfValue(v)))
	}
	return t.callPrepared(ctx, m)
}

// callPrepared calls the function with the arguments the pipeline
// completed, decoded: what Call does with them encoded, without encoding
// them. The registry uses it when the arguments reach the tool unchanged.
//
// A number the schema accepts as an integer (2.0) reaches an int field
// as 2, as it would through its encoding. The usual shapes are filled
// directly; the rest, by encoding the map and decoding it into In.
func (t *Typed[In, Out]) callPrepared(ctx context.Context, m map[string]any) (*Result, error) {
	var in In
	if !t.assign.assign(reflect.ValueOf(&in).Elem(), m) {
		in = *new(In)
		b, err := jsonvalue.Append(make([]byte, 0, 512), m)
		if err == nil {
			err = json.Unmarshal(b, &in)
		}
		if err != nil {
			return nil, t.misfit(err)
		}
	}
	return t.run(ctx, in)
}

// misfit reports arguments that do not fit In.
func (t *Typed[In, Out]) misfit(err error) error {
	return &ArgumentsError{Tool: t.info.Name, Syntax: "arguments do not fit the tool's parameters: " + err.Error()}
}

// run calls the function with in and makes its result.
func (t *Typed[In, Out]) run(ctx context.Context, in In) (*Result, error) {
	out, err := t.fn(ctx, in)
	if err != nil {
		return nil, err
	}
	if s, ok := any(out).(string); ok { // without boxing out, unlike toResult
		return Text(s), nil
	}
	return toResult(out)
}

// toResult turns a function's output into a result.
func toResult(out any) (*Result, error) {
	switch v := out.(type) {
	case *Result:
		if v == nil {
			return &Result{}, nil
		}
		return v, nil
	case Result:
		return &v, nil
	case string:
		return Text(v), nil
	case nil:
		return &Result{}, nil
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("encoding the tool's output: %w", err)
	}
	res := &Result{Content: []Content{TextContent(string(b))}}
	if rv := reflect.ValueOf(out); rv.Kind() == reflect.Struct || rv.Kind() == reflect.Pointer && rv.Elem().Kind() == reflect.Struct || rv.Kind() == reflect.Map {
		res.StructuredContent = json.RawMessage(b)
	}
	return res, nil
}
