package schema

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/internal/jsonvalue"
)

// acceptsJSONCases pairs schemas with JSON texts and what AcceptsJSON
// says of them: true for what it must see is valid, false for what is
// invalid and for what it leaves to Validate (marked "uncertain").
var acceptsJSONCases = []struct {
	schema string
	cases  map[string]bool
}{
	{`{"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"], "additionalProperties": false}`, map[string]bool{
		`{"a":2,"b":3}`:            true,
		" {\"b\":-0,\n\"a\":1e3} ": true,
		`{"a":2,"\u0062":3}`:       true,  // the key unescaped is "b"
		`{"a":2,"b":3,"a":4}`:      true,  // the last "a" counts, and it is checked
		`{"a":"x","a":4,"b":1}`:    false, // uncertain: the first "a" fails its check
		`{"a":2}`:                  false,
		`{"a":2,"b":3,"c":1}`:      false,
		`{"a":2,"b":"3"}`:          false,
		`{"a":1e400,"b":3}`:        false, // out of range: does not decode
		`{"a":2,"b":3} x`:          false,
		`{"a":2,"b":3`:             false,
		`{"a":2,"b":03}`:           false,
		``:                         false,
		`null`:                     false,
		`[]`:                       false,
	}},
	{`{"type": "integer", "minimum": 0}`, map[string]bool{
		`2`: true, `2.0`: true, `-0`: true, `1e2`: true, `1e-400`: true,
		`2.5`: false, `-1`: false, `"2"`: false, `-`: false,
	}},
	{`{"type": "string", "minLength": 2, "maxLength": 3, "pattern": "^[a-zé]+$"}`, map[string]bool{
		`"ab"`: true, `"éé"`: true, `"abc"`: true,
		`"a"`: false, `"abcd"`: false, `"AB"`: false,
		`"\u00e9\u00e9"`:    false, // uncertain: an escape where the content matters
		"\"a\xff\"":         false, // uncertain: invalid UTF-8 decodes to U+FFFD
		"\"\xed\xa0\x80a\"": false, // uncertain: so does an encoded surrogate
	}},
	{`{"type": "string"}`, map[string]bool{
		`"\u00e9\n\"x\""`: true, // nothing reads the content
		"\"\xff\"":        true,
		`"\x"`:            false,
		"\"a\tb\"":        false,
	}},
	{`{"enum": ["a", "b c", 1, true, null]}`, map[string]bool{
		`"a"`: true, `"b c"`: true, `1`: true, `1.0`: true, `10e-1`: true, `true`: true, `null`: true,
		`"c"`: false, `false`: false, `2`: false, `[1]`: false, `{}`: false,
		`"\u0061"`: false, // uncertain
	}},
	{`{"type": "object", "properties": {"o": {"type": "object", "properties": {"xs": {"type": "array", "items": {"type": "integer"}, "maxItems": 2}}, "required": ["xs"]}}}`, map[string]bool{
		`{"o":{"xs":[1,2]}}`: true,
		`{"o":{"xs":[]},"z":{"deep":[true,null,"\u0000",{"k":-1.5e-3}]}}`: true,
		`{"o":{"xs":[1,2,3]}}`: false,
		`{"o":{"xs":[1.5]}}`:   false,
		`{"o":{}}`:             false,
		`{"o":{"xs":[1e999]}}`: false,
		`{"z":[1e999]}`:        false, // nothing constrains z, but it does not decode
		`{"z":[1,]}`:           false,
	}},
	{`{"type": "object", "minProperties": 2, "maxProperties": 3}`, map[string]bool{
		`{"a":1,"b":2}`:             true,
		`{"a":1,"a":2}`:             false, // one distinct key
		`{"a":1}`:                   false,
		`{"a":1,"b":2,"c":3,"d":4}`: false,
		`{"a":1,"b":2,"c":3,"a":4}`: false, // uncertain
		`{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7}`: false,
	}},
	{`{"type": "object", "properties": {"when": {"type": "string", "format": "date-time"}}}`, map[string]bool{
		`{"when":"2025-01-31T09:30:00Z"}`: true,
		`{"when":"2025-13-31T09:30:00Z"}`: false,
		`{"when":1}`:                      false,
	}},
	{`{"anyOf": [{"type": "string", "maxLength": 2}, {"type": "integer"}], "allOf": [{"minimum": 1}]}`, map[string]bool{
		`"ab"`: true, `3`: true,
		`"abc"`: false, `2.5`: false, `0`: false,
	}},
	{`{"properties": {"x": true, "y": false}, "additionalProperties": {"type": "boolean"}}`, map[string]bool{
		`{"x":[1e3]}`: true, `{"z":false}`: true, `1`: true,
		`{"y":1}`: false, `{"z":1}`: false, `{"x":[1e400]}`: false,
	}},
	{`{"not": {"type": "string"}}`, map[string]bool{
		`1`: false, // uncertain: no fast check for this schema
	}},
}

// checkAcceptsJSON fails t if v accepts raw and either jsonvalue.Decode
// fails on it or Validate rejects what it gives, or the library does.
func checkAcceptsJSON(t *testing.T, v *Validator, raw []byte) bool {
	t.Helper()
	if !v.acceptsJSON(raw) {
		return false
	}
	x, err := jsonvalue.Decode(raw)
	if err != nil {
		t.Fatalf("schema %s: AcceptsJSON(%q), but it does not decode: %v", v.raw, raw, err)
	}
	if err := v.Validate(x); err != nil {
		t.Fatalf("schema %s: AcceptsJSON(%q), but Validate rejects it: %v", v.raw, raw, err)
	}
	if err := v.root.Validate(x); err != nil {
		t.Fatalf("schema %s: AcceptsJSON(%q), but the library rejects it: %v", v.raw, raw, err)
	}
	return true
}

func TestAcceptsJSON(t *testing.T) {
	for _, c := range acceptsJSONCases {
		v, err := Compile(json.RawMessage(c.schema))
		if err != nil {
			t.Fatal(err)
		}
		for in, want := range c.cases {
			if got := checkAcceptsJSON(t, v, []byte(in)); got != want {
				t.Errorf("schema %s: AcceptsJSON(%q) = %v, want %v", c.schema, in, got, want)
			}
		}
	}
}

// TestAcceptsJSONAgreesWithFast checks that on texts without escapes
// AcceptsJSON is as complete as the fast check over the decoded value.
func TestAcceptsJSONAgreesWithFast(t *testing.T) {
	for _, s := range fastSchemas {
		v, err := Compile(json.RawMessage(s))
		if err != nil {
			t.Fatal(err)
		}
		for _, in := range fastInstances {
			x, err := jsonvalue.Decode([]byte(in))
			if err != nil {
				t.Fatal(err)
			}
			if got, want := checkAcceptsJSON(t, v, []byte(in)), v.fast.accepts(x); got != want {
				t.Errorf("schema %s: AcceptsJSON(%s) = %v, the fast check says %v", s, in, got, want)
			}
		}
	}
}

// TestAcceptsJSONNesting shows how deep AcceptsJSON reads: past
// maxNesting, it leaves the value to Validate.
func TestAcceptsJSONNesting(t *testing.T) {
	v, err := Compile(json.RawMessage(`{"type": "object", "properties": {"x": {"$ref": "#"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	nested := func(depth int, inner string) []byte {
		return []byte(strings.Repeat(`{"x":`, depth-1) + inner + strings.Repeat("}", depth-1))
	}
	for depth, want := range map[int]bool{1: true, maxNesting: true, maxNesting + 1: false, 9000: false} {
		if got := checkAcceptsJSON(t, v, nested(depth, `{"y":1}`)); got != want {
			t.Errorf("AcceptsJSON of objects nested %d deep = %v, want %v", depth, got, want)
		}
	}
	if checkAcceptsJSON(t, v, nested(maxNesting, `{"x":1}`)) {
		t.Error("AcceptsJSON accepts an x that is not an object")
	}
}

func TestAcceptsJSONAllocs(t *testing.T) {
	info, err := For[benchArgs]()
	if err != nil {
		t.Fatal(err)
	}
	raw := []byte(`{"mode":"slow",` + benchCall[1:]) // with an enum, a pattern, a nested object
	if !info.Validator.acceptsJSON(raw) {
		t.Fatalf("AcceptsJSON(%s) = false", raw)
	}
	if n := testing.AllocsPerRun(100, func() { info.Validator.acceptsJSON(raw) }); n != 0 {
		t.Errorf("AcceptsJSON allocates %v times, want 0", n)
	}
}

// FuzzAcceptsJSON checks that AcceptsJSON is sound: what it accepts
// decodes, and Validate and the library accept it.
func FuzzAcceptsJSON(f *testing.F) {
	var schemas []string
	for _, c := range acceptsJSONCases {
		schemas = append(schemas, c.schema)
		for in := range c.cases {
			f.Add(len(schemas)-1, []byte(in))
		}
	}
	for _, s := range fastSchemas {
		schemas = append(schemas, s)
		for _, in := range fastInstances {
			f.Add(len(schemas)-1, []byte(in))
		}
	}
	validators := make([]*Validator, len(schemas))
	for i, s := range schemas {
		v, err := Compile(json.RawMessage(s))
		if err != nil {
			f.Fatal(err)
		}
		validators[i] = v
	}
	f.Fuzz(func(t *testing.T, i int, in []byte) {
		if i < 0 {
			i = -i
		}
		checkAcceptsJSON(t, validators[i%len(validators)], in)
	})
}

func BenchmarkAcceptsJSON(b *testing.B) {
	v := benchValidator(b)
	raw := []byte(benchCall)
	b.ReportAllocs()
	for b.Loop() {
		if !v.acceptsJSON(raw) {
			b.Fatal("rejected")
		}
	}
}
