package tool_test

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"testing"

	"github.com/toolwire/toolwire/tool"
)

// TestRegistryCallArguments shows what a raw-JSON tool receives: the
// model's arguments as written when the pipeline has nothing to add, the
// completed arguments when it fills defaults, {} for none, and no call at
// all for arguments that fail the schema.
func TestRegistryCallArguments(t *testing.T) {
	plain := `{"type":"object","properties":{"a":{"type":"number"},"s":{"type":"string"}},"required":["a"]}`
	withDefault := `{"type":"object","properties":{"a":{"type":"number"},"s":{"type":"string","default":"x"}},"required":["a"]}`
	tests := []struct {
		name, schema, args string
		want               string // what the tool gets; "" means not called
	}{
		{"as written", plain, `{ "s" : "é\u00e9", "a": 1.50 }`, `{ "s" : "é\u00e9", "a": 1.50 }`},
		{"defaults filled", withDefault, `{"a":2}`, `{"a":2,"s":"x"}`},
		{"as written, white space and all", plain, " {\"a\":2}\n", " {\"a\":2}\n"},
		{"repeated key, the last valid", plain, `{"a":"x","a":1}`, `{"a":"x","a":1}`},
		{"no arguments", `{"type":"object"}`, ``, `{}`},
		{"empty object", `{"type":"object"}`, ` { } `, `{}`},
		{"null arguments", `{"type":"object"}`, `null`, `{}`},
		{"schema violation", plain, `{"a":"one"}`, ""},
		{"missing required", plain, `{}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got *string
			var reg tool.Registry
			reg.Add(tool.NewFunc(
				tool.Info{Name: "t", InputSchema: json.RawMessage(tt.schema)},
				func(_ context.Context, args json.RawMessage) (*tool.Result, error) {
					s := string(args)
					got = &s
					return tool.Text("ok"), nil
				}))
			_, err := reg.Call(context.Background(), "t", json.RawMessage(tt.args))
			if tt.want == "" {
				var ae *tool.ArgumentsError
				if !errors.As(err, &ae) || got != nil {
					t.Fatalf("Call(%s) = %v, tool called: %v; want an ArgumentsError and no call", tt.args, err, got != nil)
				}
				return
			}
			if err != nil || got == nil || *got != tt.want {
				t.Fatalf("Call(%s): err %v, tool got %v; want %s", tt.args, err, got, tt.want)
			}
		})
	}
}

type addIn struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}

// TestRegistryCallAllocs pins the cost of a typed tool's call whose
// arguments the pipeline only checks: In, filled straight from the JSON,
// and the result are all it allocates (no generic value of the
// arguments); a raw tool gets its arguments without any allocation.
func TestRegistryCallAllocs(t *testing.T) {
	var reg tool.Registry
	res := tool.Text("ok")
	err := reg.Add(
		tool.Must(tool.New("add", "Add two numbers.", func(_ context.Context, in addIn) (string, error) {
			return strconv.FormatFloat(in.A+in.B, 'f', -1, 64), nil
		})),
		tool.NewFunc(
			tool.Info{Name: "raw", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}`)},
			func(context.Context, json.RawMessage) (*tool.Result, error) { return res, nil }),
	)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	args := json.RawMessage(`{"a":2,"b":3}`)
	for name, most := range map[string]float64{"add": 2, "raw": 0} {
		var callErr error
		n := testing.AllocsPerRun(100, func() { _, callErr = reg.Call(ctx, name, args) })
		if callErr != nil {
			t.Fatal(callErr)
		}
		if n > most {
			t.Errorf("a call of %s allocates %v times, want at most %v", name, n, most)
		}
	}
}
