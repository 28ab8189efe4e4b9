package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/toolwire/toolwire/internal/jsonvalue"
	"github.com/toolwire/toolwire/schema"
)

// Typed is a tool made from a Go function: New infers its input schema from
// In and its output schema from Out, and every call goes through the
// argument pipeline before the function sees a typed In.
type Typed[In, Out any] struct {
	info   Info
	fn     func(context.Context, In) (Out, error)
	pipe   *Pipeline
	assign *assigner
}

// New makes a tool of fn. Registering it is all it takes: the name routes
// calls, the schema comes from the signature, and fields of In tagged
// `tool:"inject"` are filled by the host, never by the model.
//
// In is a struct (see package schema for the tags that describe fields).
// Out is shown to the model as JSON, with its schema as the output schema;
// a string Out is plain text, and a *Result Out is returned as it is.
func New[In, Out any](name, description string, fn func(ctx context.Context, in In) (Out, error)) (*Typed[In, Out], error) {
	in, err := schema.For[In]()
	if err != nil {
		return nil, fmt.Errorf("tool %s: input type: %w", name, err)
	}
	info := Info{Name: name, Description: description, InputSchema: in.Schema}
	if out := reflect.TypeFor[Out](); out != reflect.TypeFor[string]() && out != reflect.TypeFor[*Result]() && out.Kind() == reflect.Struct ||
		out.Kind() == reflect.Pointer && out.Elem().Kind() == reflect.Struct && out != reflect.TypeFor[*Result]() {
		os, err := schema.ForType(out)
		if err != nil {
			return nil, fmt.Errorf("tool %s: output type: %w", name, err)
		}
		info.OutputSchema = os.Schema
	}
	pipe, err := NewPipeline(name, in.Schema, in.Injected, nil)
	if err != nil {
		return nil, err
	}
	return &Typed[In, Out]{info: info, fn: fn, pipe: pipe, assign: newAssigner(reflect.TypeFor[In]())}, nil
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
// name and schemas are kept).
func (t *Typed[In, Out]) WithInfo(edit func(*Info)) *Typed[In, Out] {
	c := *t
	edit(&c.info)
	c.info.Name, c.info.InputSchema, c.info.OutputSchema = t.info.Name, t.info.InputSchema, t.info.OutputSchema
	return &c
}

// Pipeline returns the tool's argument pipeline.
func (t *Typed[In, Out]) Pipeline() *Pipeline { return t.pipe }

// Call runs the argument pipeline over args, then the function.
//
// When the pipeline has nothing to add to args (no defaults, nothing
// injected) and the schema certainly accepts them as written, In is
// filled straight from the JSON, exactly as from the map Prepare would
// return, and no map is built; otherwise, or when In cannot be filled
// that way, Prepare runs.
func (t *Typed[In, Out]) Call(ctx context.Context, args json.RawMessage) (*Result, error) {
	if raw, ok := t.pipe.asWritten(args); ok {
		var in In
		if t.assign.assignJSON(reflect.ValueOf(&in).Elem(), raw) {
			return t.run(ctx, in)
		}
	}
	m, err := t.pipe.Prepare(ctx, args)
	if err != nil {
		return nil, err
	}
	return t.callPrepared(ctx, m)
}

// callPrepared calls the function with arguments the pipeline completed.
//
// In is filled from the completed map, not from the model's JSON: that is
// what the pipeline checked, defaults and injected values included, and a
// number the schema accepts as an integer (2.0) reaches an int field as 2.
// The usual shapes are filled directly; the rest, by encoding the map and
// decoding it into In, which the direct way matches.
func (t *Typed[In, Out]) callPrepared(ctx context.Context, m map[string]any) (*Result, error) {
	var in In
	if !t.assign.assign(reflect.ValueOf(&in).Elem(), m) {
		in = *new(In)
		b, err := jsonvalue.Append(make([]byte, 0, 512), m)
		if err == nil {
			err = json.Unmarshal(b, &in)
		}
		if err != nil {
			return nil, &ArgumentsError{Tool: t.info.Name, Syntax: "arguments do not fit the tool's parameters: " + err.Error()}
		}
	}
	return t.run(ctx, in)
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
