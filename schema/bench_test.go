package schema

import (
	"encoding/json"
	"testing"
)

// benchArgs has 10 properties, two defaults and one nested object.
type benchArgs struct {
	Path    string   `json:"path" jsonschema:"minLength=1"`
	Count   int      `json:"count" jsonschema:"default=10,minimum=0"`
	Mode    string   `json:"mode,omitempty" jsonschema:"enum=fast|slow,default=fast"`
	Name    string   `json:"name,omitempty"`
	Verbose bool     `json:"verbose,omitempty"`
	Limit   int      `json:"limit,omitempty" jsonschema:"maximum=1000"`
	Tags    []string `json:"tags,omitempty"`
	Ratio   float64  `json:"ratio,omitempty"`
	Format  string   `json:"format,omitempty" jsonschema:"pattern=^[a-z]+$"`
	Opts    struct {
		Depth  int  `json:"depth"`
		Follow bool `json:"follow,omitempty"`
	} `json:"opts"`
}

// benchCall leaves out the two properties that have defaults.
const benchCall = `{"path":"/tmp/data.csv","name":"run","verbose":true,"limit":50,"tags":["a","b"],"ratio":0.5,"format":"csv","opts":{"depth":2,"follow":false}}`

func benchValidator(b *testing.B) *Validator {
	info, err := For[benchArgs]()
	if err != nil {
		b.Fatal(err)
	}
	if info.Validator.fast == nil || info.Validator.defaults == nil {
		b.Fatal("benchmark schema lost its fast check or its defaults")
	}
	return info.Validator
}

// BenchmarkValidateAndDefaults is one call's argument work: decode the
// model's JSON, fill defaults, validate.
func BenchmarkValidateAndDefaults(b *testing.B) {
	v := benchValidator(b)
	raw := []byte(benchCall)
	b.ReportAllocs()
	for b.Loop() {
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			b.Fatal(err)
		}
		v.ApplyDefaults(m)
		if err := v.Validate(m); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeOnly is the encoding/json part of the above.
func BenchmarkDecodeOnly(b *testing.B) {
	raw := []byte(benchCall)
	b.ReportAllocs()
	for b.Loop() {
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDefaultsAndValidate is the schema package's part, on an
// already decoded value whose defaults are already filled.
func BenchmarkDefaultsAndValidate(b *testing.B) {
	v := benchValidator(b)
	var m map[string]any
	if err := json.Unmarshal([]byte(benchCall), &m); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		v.ApplyDefaults(m)
		if err := v.Validate(m); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLibraryValidate is validation by the library alone, without the
// fast check, for comparison.
func BenchmarkLibraryValidate(b *testing.B) {
	v := benchValidator(b)
	var m map[string]any
	if err := json.Unmarshal([]byte(benchCall), &m); err != nil {
		b.Fatal(err)
	}
	v.ApplyDefaults(m)
	b.ReportAllocs()
	for b.Loop() {
		if err := v.root.Validate(m); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkValidateInvalid is a rejected call: three problems reported.
func BenchmarkValidateInvalid(b *testing.B) {
	v := benchValidator(b)
	raw := []byte(`{"path":"","count":"ten","mode":"medium","opts":{"depth":2}}`)
	b.ReportAllocs()
	for b.Loop() {
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			b.Fatal(err)
		}
		v.ApplyDefaults(m)
		if err := v.Validate(m); err == nil {
			b.Fatal("no error")
		}
	}
}

// BenchmarkCompile is compiling the schema once, at registration.
func BenchmarkCompile(b *testing.B) {
	v := benchValidator(b)
	raw := v.Schema()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Compile(raw); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFor is inference plus compilation.
func BenchmarkFor(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := For[benchArgs](); err != nil {
			b.Fatal(err)
		}
	}
}
