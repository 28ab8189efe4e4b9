package tool_test

import (
	"context"
	"encoding/json"
	"errors"
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
		{"no arguments", `{"type":"object"}`, ``, `{}`},
		{"null arguments", `{"type":"object"}`, `null`, `{}`},
		{"schema violation", plain, `{"a":"one"}`, ""},
		{"missing required", plain, `{}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got *string
			var reg tool.Registry
			reg.Add(tool.Func{
				Def: tool.Info{Name: "t", InputSchema: json.RawMessage(tt.schema)},
				Fn: func(_ context.Context, args json.RawMessage) (*tool.Result, error) {
					s := string(args)
					got = &s
					return tool.Text("ok"), nil
				},
			})
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
