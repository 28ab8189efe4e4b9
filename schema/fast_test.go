package schema

import (
	"encoding/json"
	"testing"
)

// fastSchemas are schemas the fast check handles; each must get one.
var fastSchemas = []string{
	`{"type": "object", "properties": {"n": {"type": "integer", "minimum": 0, "maximum": 10}, "s": {"type": "string", "minLength": 1, "maxLength": 3, "pattern": "^[a-z]+$"}}, "required": ["n"], "additionalProperties": false}`,
	`{"type": "array", "items": {"type": "number", "exclusiveMinimum": 0.1, "exclusiveMaximum": 1e3}, "minItems": 1, "maxItems": 3}`,
	`{"enum": ["a", 1, 2.5, true, null]}`,
	`{"const": 0.1}`,
	`{"type": ["string", "null"], "format": "date-time"}`,
	`{"type": "object", "additionalProperties": {"type": "boolean"}, "minProperties": 1, "maxProperties": 2}`,
	`{"$defs": {"t": {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/t"}}, "v": {"type": "integer"}}}}, "$ref": "#/$defs/t"}`,
	`{"anyOf": [{"type": "string", "maxLength": 2}, {"type": "integer"}], "allOf": [{"not_a_keyword": 1}]}`,
	`{"properties": {"x": true, "y": false}}`,
	`{"type": "integer", "maximum": 9007199254740992}`,
}

// slowSchemas use keywords the fast check leaves to the library.
var slowSchemas = []string{
	`{"not": {"type": "string"}}`,
	`{"oneOf": [{"type": "string"}, {"type": "integer"}]}`,
	`{"if": {"type": "string"}, "then": {"minLength": 1}}`,
	`{"type": "array", "uniqueItems": true}`,
	`{"type": "number", "multipleOf": 0.5}`,
	`{"patternProperties": {"^x": {"type": "string"}}}`,
	`{"enum": [[1], {"a": 1}]}`,
	`{"minimum": 0.10000000000000001}`,
	`{"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"allOf": [{"$ref": "#/$defs/a"}]}}, "$ref": "#/$defs/a"}`,
	`{"unevaluatedProperties": false}`,
	`{"type": "integer", "maximum": 9007199254740993}`,
}

var fastInstances = []string{
	`null`, `true`, `false`, `0`, `-0`, `1`, `2.5`, `0.1`, `0.30000000000000004`, `1e3`, `999.9999`, `1e308`, `9007199254740992`,
	`"a"`, `""`, `"abc"`, `"abcd"`, `"ABC"`, `"ü"`, `"2025-01-31T09:30:00Z"`, `"2025-13-31T09:30:00Z"`,
	`[]`, `[0.5]`, `[0.1]`, `[1, 2, 3, 4]`, `["a"]`,
	`{}`, `{"n": 5}`, `{"n": 5, "s": "ab"}`, `{"n": 11}`, `{"n": 5.5}`, `{"n": 5, "s": "ABC"}`, `{"n": 5, "z": 1}`, `{"s": "a"}`,
	`{"a": true}`, `{"a": true, "b": false, "c": true}`, `{"a": 1}`, `{"x": 1}`, `{"y": 1}`,
	`{"v": 1, "kids": [{"v": 2, "kids": []}, {"v": "x"}]}`, `{"kids": [{"kids": [{"v": 1.5}]}]}`,
}

func TestFastCoverage(t *testing.T) {
	for _, s := range fastSchemas {
		v, err := Compile(json.RawMessage(s))
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		if v.fast == nil {
			t.Errorf("no fast check for %s", s)
		}
	}
	for _, s := range slowSchemas {
		v, err := Compile(json.RawMessage(s))
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		if v.fast != nil {
			t.Errorf("fast check for %s, which it cannot decide", s)
		}
	}
}

// TestFastAgreesWithLibrary checks, for every schema and instance above,
// that the fast check never accepts what the library rejects, and that it
// accepts what the library accepts (so it is actually used).
func TestFastAgreesWithLibrary(t *testing.T) {
	for _, s := range fastSchemas {
		v, err := Compile(json.RawMessage(s))
		if err != nil {
			t.Fatal(err)
		}
		for _, in := range fastInstances {
			x := decode(t, in, false)
			lib := v.root.Validate(x) == nil
			fast := v.fast.accepts(x)
			if fast && !lib {
				t.Errorf("schema %s, instance %s: fast check accepts, library rejects", s, in)
			}
			if lib && !fast {
				t.Errorf("schema %s, instance %s: library accepts, fast check does not", s, in)
			}
		}
	}
}

func FuzzFastSound(f *testing.F) {
	for i := range fastSchemas {
		for _, in := range fastInstances {
			f.Add(i, in)
		}
	}
	validators := make([]*Validator, len(fastSchemas))
	for i, s := range fastSchemas {
		v, err := Compile(json.RawMessage(s))
		if err != nil {
			f.Fatal(err)
		}
		validators[i] = v
	}
	f.Fuzz(func(t *testing.T, i int, in string) {
		if i < 0 {
			i = -i
		}
		v := validators[i%len(validators)]
		var x any
		if err := json.Unmarshal([]byte(in), &x); err != nil {
			return
		}
		if v.fast.accepts(x) && v.root.Validate(x) != nil {
			t.Errorf("schema %s, instance %s: fast check accepts, library rejects", v.raw, in)
		}
	})
}
