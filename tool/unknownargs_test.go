package tool_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/tool"
)

// TestUnknownArguments: arguments a schema does not name fail the call
// with the known names and a did-you-mean where a model writes them (the
// default), and are dropped before the tool sees them where a host sends
// them (IgnoreUnknownArguments, as the MCP server does); a schema that
// takes unnamed arguments gets them either way.
func TestUnknownArguments(t *testing.T) {
	strict := `{"type":"object","properties":{"path":{"type":"string"},"n":{"type":"integer"},"opts":{"type":"object","properties":{"depth":{"type":"integer"}},"additionalProperties":false}},"additionalProperties":false}`
	open := `{"type":"object","properties":{"path":{"type":"string"}}}`
	nested := `{"type":"object","properties":{"description_text":{"type":"string"},"o":{"type":"object","properties":{"depth":{"type":"integer"}},"additionalProperties":false}},"additionalProperties":false}`
	tests := []struct {
		name, schema, args string
		lenient            bool
		want               string // what the tool gets; "" means not called
		wantErr            string // the error's text, when not called
	}{
		{"agent: host argument refused", strict, `{"path":"a","wait_for_previous":true}`, false, "",
			`invalid arguments for tool t: unknown argument "wait_for_previous" (known arguments: n, opts, path)`},
		{"agent: misspelling gets a did-you-mean", strict, `{"pth":"a"}`, false, "",
			`invalid arguments for tool t: unknown argument "pth": did you mean "path"? (known arguments: n, opts, path)`},
		{"agent: nested unknown refused", strict, `{"opts":{"dpth":1}}`, false, "",
			`invalid arguments for tool t: unknown argument "opts/dpth" (known arguments in "opts": depth)`},
		{"served: host argument dropped", strict, `{"path":"a","wait_for_previous":true}`, true, `{"path":"a"}`, ""},
		{"served: every unnamed argument dropped", strict, `{"wait_for_previous":true,"a/b~c":1}`, true, `{}`, ""},
		{"served: named arguments still checked", strict, `{"n":"x","wait_for_previous":true}`, true, "",
			`invalid arguments for tool t: argument "n": expected integer, got string "x"`},
		{"served: nested unknown still refused", strict, `{"opts":{"dpth":1},"wait_for_previous":true}`, true, "",
			`invalid arguments for tool t: unknown argument "opts/dpth" (known arguments in "opts": depth)`},
		{"served: a nested argument is not taken for a top-level one", nested, `{"o":{"description_text":"x"}}`, true, "",
			`invalid arguments for tool t: unknown argument "o/description_text" (known arguments in "o": depth)`},
		{"served: known arguments as written", strict, `{"path":"a"}`, true, `{"path":"a"}`, ""},
		{"agent: open schema passes them on", open, `{"path":"a","wait_for_previous":true}`, false, `{"path":"a","wait_for_previous":true}`, ""},
		{"served: open schema passes them on", open, `{"path":"a","wait_for_previous":true}`, true, `{"path":"a","wait_for_previous":true}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got *string
			var reg tool.Registry
			reg.IgnoreUnknownArguments(tt.lenient)
			if err := reg.Add(tool.NewFunc(tool.Info{Name: "t", InputSchema: json.RawMessage(tt.schema)},
				func(_ context.Context, args json.RawMessage) (*tool.Result, error) {
					s := string(args)
					got = &s
					return tool.Text("ok"), nil
				})); err != nil {
				t.Fatal(err)
			}
			_, err := reg.Call(context.Background(), "t", json.RawMessage(tt.args))
			if tt.want == "" {
				var ae *tool.ArgumentsError
				if !errors.As(err, &ae) || got != nil || err.Error() != tt.wantErr {
					t.Fatalf("Call(%s) = %v, tool called: %v;\nwant %s", tt.args, err, got != nil, tt.wantErr)
				}
				return
			}
			if err != nil || got == nil || *got != tt.want {
				t.Fatalf("Call(%s): err %v, tool got %v; want %s", tt.args, err, got, tt.want)
			}
		})
	}
}

// A typed tool served to hosts gets its input without the arguments its
// struct does not name; for a model, the same call is refused.
func TestUnknownArgumentsTyped(t *testing.T) {
	type in struct {
		Path string `json:"path"`
	}
	echo := tool.Must(tool.New("echo", "Echoes the path.", func(_ context.Context, in in) (string, error) { return in.Path, nil }))
	for _, lenient := range []bool{false, true} {
		var reg tool.Registry
		reg.IgnoreUnknownArguments(lenient)
		if err := reg.Add(echo); err != nil {
			t.Fatal(err)
		}
		res, err := reg.Call(context.Background(), "echo", json.RawMessage(`{"path":"a.csv","wait_for_previous":true}`))
		switch {
		case lenient && (err != nil || res.Content[0].Text != "a.csv"):
			t.Errorf("served: %v, %+v; want a.csv", err, res)
		case !lenient && (err == nil || !strings.Contains(err.Error(), `unknown argument "wait_for_previous"`)):
			t.Errorf("for a model: %v, want unknown argument", err)
		}
	}
}
