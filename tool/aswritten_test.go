package tool

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/toolwire/toolwire/internal/fastpath"
	"github.com/toolwire/toolwire/internal/jsonvalue"
)

// writtenIn is the input of a typed tool whose pipeline changes nothing
// (no defaults, nothing injected), so that its calls may take the way
// that skips the generic value.
type writtenIn struct {
	N   float64            `json:"n"`
	I   int8               `json:"i,omitempty" jsonschema:"minimum=-5"`
	S   string             `json:"s,omitempty" jsonschema:"maxLength=4"`
	E   string             `json:"e,omitempty" jsonschema:"enum=x|y"`
	B   *bool              `json:"b,omitempty"`
	L   []uint             `json:"l,omitempty" jsonschema:"maxItems=3"`
	Sub *writtenSub        `json:"sub,omitempty"`
	M   map[string]float64 `json:"m,omitempty"`
	Any any                `json:"any,omitempty"`
}

type writtenSub struct {
	K string   `json:"k"`
	F []string `json:"f,omitempty"`
}

// writtenSeeds are calls of the writtenIn tool: accepted as written, or
// not (escapes where a keyword reads the string, a repeated key, numbers
// the schema or the field refuses, bad JSON).
var writtenSeeds = []string{
	`{"n":2}`, ` {"n":-0.5e1, "i":-5, "s":"abcd", "e":"y"} `, `{"n":1,"b":true,"l":[0,1,2],"sub":{"k":"x","f":["a"]}}`,
	`{"n":1,"m":{"a":1,"b":-2.5},"any":{"x":[1,"y",null]}}`, `{"n":1,"any":null,"sub":null}`, `{"n":1e308}`,
	`{"n":1,"s":"\u00e9"}`, `{"n":1,"s":"éééé"}`, `{"n":1,"s":"ééééé"}`, `{"n":1,"e":"\u0078"}`, `{"n":1,"n":"x"}`,
	`{"n":"x","n":1}`, `{"n":1,"sub":{"k":"a"},"sub":{"f":[]}}`, `{"n":1,"i":300}`, `{"n":1,"i":2.5}`, `{"n":1,"i":2.0}`,
	`{"n":1,"l":[-1]}`, `{"n":1,"l":[1,2,3,4]}`, `{"n":1e400}`, `{"n":1,"x":1}`, `{"N":1}`, `{}`, ``, `null`, `[]`, `{"n":1`,
	`{"n":1,"sub":{"k":"\ud800"}}`, "{\"n\":1,\"s\":\"\xff\"}",
}

// checkAsWritten calls a typed tool and a raw tool with the schema of
// writtenIn through a registry, as the MCP server does, and checks that
// the results and errors are those of the way through the generic value
// (Prepare, then the map), which was the only one before.
func checkAsWritten(t *testing.T, reg *Registry, typed *Typed[writtenIn, writtenIn], raw **[]byte, data []byte) {
	t.Helper()
	ctx := context.Background()
	got, gotErr := reg.Call(ctx, "typed", data)
	var want *Result
	m, wantErr := pipelineOf(typed).Prepare(ctx, data)
	if wantErr == nil {
		want, wantErr = typed.callPrepared(ctx, m)
	}
	if !sameOutcome(got, gotErr, want, wantErr) {
		t.Fatalf("typed tool, Call(%q) = %v, %v; by the map: %v, %v", data, got, gotErr, want, wantErr)
	}

	*raw = nil
	_, gotErr = reg.Call(ctx, "raw", data)
	var wantArgs []byte
	m, wantErr = reg.entries["raw"].pipe.Prepare(ctx, data)
	if wantErr == nil {
		wantArgs = data
		if len(m) == 0 {
			wantArgs, wantErr = jsonvalue.Append(nil, m)
		}
	}
	if !sameOutcome(nil, gotErr, nil, wantErr) || (*raw == nil) != (wantErr != nil) ||
		*raw != nil && string(**raw) != string(wantArgs) {
		t.Fatalf("raw tool, Call(%q): got %q, %v; by the map: %q, %v", data, derefBytes(*raw), gotErr, wantArgs, wantErr)
	}
}

func derefBytes(b *[]byte) []byte {
	if b == nil {
		return nil
	}
	return *b
}

// sameOutcome reports whether two calls gave equal results and errors
// with the same message.
func sameOutcome(got *Result, gotErr error, want *Result, wantErr error) bool {
	if (gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error() {
		return false
	}
	return reflect.DeepEqual(got, want)
}

// writtenSetup registers the typed tool "typed" and the raw tool "raw"
// with the same schema; the raw tool stores the arguments it gets in the
// returned place.
func writtenSetup(tb testing.TB) (*Registry, *Typed[writtenIn, writtenIn], **[]byte) {
	tb.Helper()
	typed, err := New("typed", "Echo the input.", func(_ context.Context, in writtenIn) (writtenIn, error) { return in, nil })
	if err != nil {
		tb.Fatal(err)
	}
	if !pipelineOf(typed).changesNothing() || fastpath.AcceptsJSON(pipelineOf(typed).validator, []byte(`{"n":1}`)) == false {
		tb.Fatal("the typed tool's pipeline cannot take arguments as written")
	}
	raw := new(*[]byte)
	var reg Registry
	err = reg.Add(typed, NewFunc(
		Info{Name: "raw", InputSchema: typed.Info().InputSchema},
		func(_ context.Context, args json.RawMessage) (*Result, error) {
			b := []byte(args)
			*raw = &b
			return Text("ok"), nil
		}))
	if err != nil {
		tb.Fatal(err)
	}
	return &reg, typed, raw
}

// TestCallAsWritten checks the seeds, and that the usual calls do take
// the way that skips the generic value.
func TestCallAsWritten(t *testing.T) {
	reg, typed, raw := writtenSetup(t)
	for _, s := range writtenSeeds {
		checkAsWritten(t, reg, typed, raw, []byte(s))
	}
	for _, s := range []string{`{"n":2}`, ` {"n":1,"m":{"a":1},"any":{"x":[1]},"sub":{"k":"é"}} `} {
		args, ok := pipelineOf(typed).asWritten([]byte(s))
		var in writtenIn
		if !ok || !typed.assign.assignJSON(reflect.ValueOf(&in).Elem(), args) {
			t.Errorf("Call(%q) does not take the arguments as written", s)
		}
	}
	none := Must(New("none", "No arguments.", func(context.Context, struct{}) (string, error) { return "ok", nil }))
	for _, s := range []string{``, `null`, ` { } `} {
		args, ok := pipelineOf(none).asWritten([]byte(s))
		var in struct{}
		if !ok || !none.assign.assignJSON(reflect.ValueOf(&in).Elem(), args) {
			t.Errorf("Call(%q) of a tool without arguments does not take them as written", s)
		}
	}
}

// FuzzCallAsWritten checks that taking arguments as written changes
// nothing a caller sees: the same result, or the same error.
func FuzzCallAsWritten(f *testing.F) {
	for _, s := range writtenSeeds {
		f.Add([]byte(s))
	}
	reg, typed, raw := writtenSetup(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		checkAsWritten(t, reg, typed, raw, data)
	})
}

// pipelineOf compiles the pipeline a registry would run for t.
func pipelineOf(t Tool) *pipeline {
	p, err := newPipeline(t.Info())
	if err != nil {
		panic(err)
	}
	return p
}
