package mcp

import (
	"encoding/json"
	"testing"
)

func TestCheckHeaderAnnotations(t *testing.T) {
	tests := []struct {
		name, schema string
		valid        bool
	}{
		{"none", `{"type":"object","properties":{"a":{"type":"string"}}}`, true},
		{"string", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"Region"}}}`, true},
		{"integer and boolean", `{"properties":{"a":{"type":"integer","x-mcp-header":"A"},"b":{"type":"boolean","x-mcp-header":"B"}}}`, true},
		{"nullable", `{"properties":{"a":{"type":["string","null"],"x-mcp-header":"A"}}}`, true},
		{"nested", `{"properties":{"o":{"type":"object","properties":{"id":{"type":"string","x-mcp-header":"Id"}}}}}`, true},
		{"property named x-mcp-header", `{"properties":{"x-mcp-header":{"type":"string"}}}`, true},
		{"empty", `{"properties":{"a":{"type":"string","x-mcp-header":""}}}`, false},
		{"object", `{"properties":{"a":{"type":"object","x-mcp-header":"A"}}}`, false},
		{"array", `{"properties":{"a":{"type":"array","x-mcp-header":"A"}}}`, false},
		{"null", `{"properties":{"a":{"type":"null","x-mcp-header":"A"}}}`, false},
		{"number", `{"properties":{"a":{"type":"number","x-mcp-header":"A"}}}`, false},
		{"duplicate", `{"properties":{"a":{"type":"string","x-mcp-header":"R"},"b":{"type":"string","x-mcp-header":"R"}}}`, false},
		{"duplicate case", `{"properties":{"a":{"type":"string","x-mcp-header":"MyField"},"b":{"type":"string","x-mcp-header":"myfield"}}}`, false},
		{"space", `{"properties":{"a":{"type":"string","x-mcp-header":"My Region"}}}`, false},
		{"colon", `{"properties":{"a":{"type":"string","x-mcp-header":"Region:Primary"}}}`, false},
		{"non-ASCII", `{"properties":{"a":{"type":"string","x-mcp-header":"Région"}}}`, false},
		{"tab", `{"properties":{"a":{"type":"string","x-mcp-header":"Region\t1"}}}`, false},
		{"not a string", `{"properties":{"a":{"type":"string","x-mcp-header":1}}}`, false},
		{"root", `{"type":"object","x-mcp-header":"Root"}`, false},
		{"in items", `{"properties":{"a":{"type":"array","items":{"type":"string","x-mcp-header":"A"}}}}`, false},
		{"in anyOf", `{"properties":{"a":{"anyOf":[{"type":"string","x-mcp-header":"A"}]}}}`, false},
		{"in $defs", `{"$defs":{"d":{"type":"string","x-mcp-header":"A"}},"properties":{"a":{"$ref":"#/$defs/d"}}}`, false},
		{"under items properties", `{"properties":{"a":{"type":"array","items":{"properties":{"b":{"type":"string","x-mcp-header":"B"}}}}}}`, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := checkHeaderAnnotations(json.RawMessage(tc.schema))
			if (err == nil) != tc.valid {
				t.Errorf("checkHeaderAnnotations(%s) = %v, want valid=%v", tc.schema, err, tc.valid)
			}
		})
	}
}
