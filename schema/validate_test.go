package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

type validateOpts struct {
	Depth  int  `json:"depth" jsonschema:"minimum=0,maximum=10"`
	Follow bool `json:"follow,omitempty"`
}

type validateArgs struct {
	ModelPath string            `json:"model_path"`
	Count     int               `json:"count,omitempty" jsonschema:"exclusiveMinimum=0"`
	Mode      string            `json:"mode,omitempty" jsonschema:"enum=fast|slow"`
	Name      string            `json:"name,omitempty" jsonschema:"minLength=2,maxLength=5,pattern=^[a-z]+$"`
	When      time.Time         `json:"when,omitzero"`
	Ratio     float64           `json:"ratio,omitempty" jsonschema:"exclusiveMaximum=1"`
	Tags      []string          `json:"tags,omitempty" jsonschema:"maxItems=2"`
	Opts      validateOpts      `json:"opts"`
	Files     []validateFile    `json:"files,omitempty"`
	Labels    map[string]string `json:"labels,omitempty"`
}

type validateFile struct {
	Name string `json:"name"`
	Size int    `json:"size,omitempty" jsonschema:"minimum=0"`
}

func decode(t testing.TB, s string, useNumber bool) any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	if useNumber {
		dec.UseNumber()
	}
	var x any
	if err := dec.Decode(&x); err != nil {
		t.Fatal(err)
	}
	return x
}

func TestValidateMessages(t *testing.T) {
	info, err := For[validateArgs]()
	if err != nil {
		t.Fatal(err)
	}
	v := info.Validator
	const ok = `"model_path": "m.bin", "opts": {"depth": 1}`
	tests := []struct {
		name    string
		in      string
		want    string // Error(); "" means valid
		missing []string
	}{
		{"valid", `{` + ok + `}`, "", nil},
		{"valid full", `{` + ok + `, "count": 3, "mode": "fast", "name": "abc", "when": "2025-01-31T09:30:00Z", "ratio": 0.5, "tags": ["a"], "files": [{"name": "x", "size": 0}], "labels": {"k": "v"}}`, "", nil},
		{"integer as string", `{` + ok + `, "count": "ten"}`,
			`argument "count": expected integer, got string "ten"`, nil},
		{"fraction for integer", `{` + ok + `, "count": 2.5}`,
			`argument "count": expected integer, got number 2.5`, nil},
		{"missing top", `{"opts": {"depth": 1}}`,
			`missing required argument "model_path"`, []string{"model_path"}},
		{"missing nested", `{"model_path": "m", "opts": {}}`,
			`missing required argument "opts/depth"`, []string{"opts/depth"}},
		{"missing several", `{"files": [{"size": 1}]}`,
			`missing required arguments "model_path", "opts", "files/0/name"`, []string{"model_path", "opts", "files/0/name"}},
		{"unknown top", `{` + ok + `, "verbose": true}`,
			`unknown argument "verbose" (known arguments: count, files, labels, mode, model_path, name, opts, ratio, tags, when)`, nil},
		{"unknown nested", `{` + ok + `, "files": [{"name": "a", "mode": 1}]}`,
			`unknown argument "files/0/mode" (known arguments in "files/0": name, size)`, nil},
		{"enum", `{` + ok + `, "mode": "medium"}`,
			`argument "mode": expected one of "fast", "slow", got string "medium"`, nil},
		{"exclusive minimum", `{` + ok + `, "count": 0}`,
			`argument "count": expected a number > 0, got number 0`, nil},
		{"exclusive maximum", `{` + ok + `, "ratio": 1}`,
			`argument "ratio": expected a number < 1, got number 1`, nil},
		{"minimum nested", `{"model_path": "m", "opts": {"depth": -1}}`,
			`argument "opts/depth": expected a number >= 0, got number -1`, nil},
		{"maximum nested", `{"model_path": "m", "opts": {"depth": 11}}`,
			`argument "opts/depth": expected a number <= 10, got number 11`, nil},
		{"min length", `{` + ok + `, "name": "a"}`,
			`argument "name": expected a string of at least 2 characters, got string "a" (1 character)`, nil},
		{"max length and pattern", `{` + ok + `, "name": "ABCDEFG"}`,
			`argument "name": expected a string of at most 5 characters, got string "ABCDEFG" (7 characters); ` +
				`argument "name": expected a string matching the regular expression ^[a-z]+$, got string "ABCDEFG"`, nil},
		{"format", `{` + ok + `, "when": "tomorrow"}`,
			`argument "when": expected a date-time string in RFC 3339 form, such as "2025-01-31T09:30:00Z", got string "tomorrow"`, nil},
		{"max items", `{` + ok + `, "tags": ["a", "b", "c"]}`,
			`argument "tags": expected an array of at most 2 items, got an array of 3 items`, nil},
		{"array item type", `{` + ok + `, "tags": ["a", 7]}`,
			`argument "tags/1": expected string, got number 7`, nil},
		{"map value type", `{` + ok + `, "labels": {"a/b": 1}}`,
			`argument "labels/a~1b": expected string, got number 1`, nil},
		{"null", `{` + ok + `, "mode": null}`,
			`argument "mode": expected string, got null`, nil},
		{"object for string", `{` + ok + `, "mode": {"x": 1}}`,
			`argument "mode": expected string, got an object`, nil},
		{"long string is cut", `{` + ok + `, "count": "` + strings.Repeat("x", 100) + `"}`,
			`argument "count": expected integer, got string "` + strings.Repeat("x", 60) + `"…`, nil},
		{"root not object", `["model_path"]`,
			`arguments: expected object, got an array of 1 item`, nil},
		{"everything", `{"count": "ten", "mode": "medium", "opts": {"depth": "deep"}, "extra": 1}`,
			`missing required argument "model_path"; argument "count": expected integer, got string "ten"; ` +
				`unknown argument "extra" (known arguments: count, files, labels, mode, model_path, name, opts, ratio, tags, when); ` +
				`argument "mode": expected one of "fast", "slow", got string "medium"; ` +
				`argument "opts/depth": expected integer, got string "deep"`, []string{"model_path"}},
	}
	for _, tt := range tests {
		for _, useNumber := range []bool{false, true} {
			name := tt.name
			if useNumber {
				name += "/UseNumber"
			}
			t.Run(name, func(t *testing.T) {
				err := v.Validate(decode(t, tt.in, useNumber))
				if tt.want == "" {
					if err != nil {
						t.Fatalf("unexpected error: %v", err)
					}
					return
				}
				var verr *ValidationError
				if !errors.As(err, &verr) {
					t.Fatalf("error %v (%T) is not a *ValidationError", err, err)
				}
				if got := err.Error(); got != tt.want {
					t.Errorf("message:\n got %s\nwant %s", got, tt.want)
				}
				if !slices.Equal(verr.Missing, tt.missing) {
					t.Errorf("Missing = %q, want %q", verr.Missing, tt.missing)
				}
			})
		}
	}
}

func TestValidateProblemFields(t *testing.T) {
	info, err := For[validateArgs]()
	if err != nil {
		t.Fatal(err)
	}
	err = info.Validator.Validate(decode(t, `{"model_path": "m", "opts": {"depth": "deep"}}`, false))
	var verr *ValidationError
	if !errors.As(err, &verr) {
		t.Fatalf("got %v", err)
	}
	want := []Problem{{Path: "opts/depth", Keyword: "type", Expected: "integer", Got: `string "deep"`}}
	if !slices.Equal(verr.Problems, want) {
		t.Errorf("Problems = %+v, want %+v", verr.Problems, want)
	}
}

// TestValidateHandWritten covers keywords that inference does not emit,
// as found in schemas of tools on other MCP servers.
func TestValidateHandWritten(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		in     string
		want   string
	}{
		{"anyOf types", `{"properties": {"x": {"anyOf": [{"type": "string"}, {"type": "null"}]}}}`,
			`{"x": 1}`, `argument "x": expected string or null, got number 1`},
		{"anyOf valid", `{"properties": {"x": {"anyOf": [{"type": "string"}, {"type": "null"}]}}}`,
			`{"x": null}`, ``},
		{"anyOf shapes", `{"properties": {"x": {"anyOf": [{"type": "string", "minLength": 3}, {"type": "integer"}]}}}`,
			`{"x": "ab"}`, `argument "x": expected a value matching one of the allowed forms, got string "ab"`},
		{"oneOf twice", `{"properties": {"x": {"oneOf": [{"type": "integer"}, {"type": "number"}]}}}`,
			`{"x": 1}`, `argument "x": expected a value matching exactly one of the allowed forms, got number 1 (matches forms 1 and 2)`},
		{"not", `{"properties": {"x": {"not": {"const": "root"}}}}`,
			`{"x": "root"}`, `argument "x": expected a value other than this one, got string "root"`},
		{"const", `{"properties": {"v": {"const": 2}}}`,
			`{"v": 3}`, `argument "v": expected 2, got number 3`},
		{"false schema", `{"properties": {"secret": false}}`,
			`{"secret": "x"}`, `argument "secret" is not allowed`},
		{"unique", `{"properties": {"ids": {"type": "array", "uniqueItems": true}}}`,
			`{"ids": [1, 2, 1]}`, `argument "ids": expected an array of distinct items, got an array of 3 items (items 0 and 2 are equal)`},
		{"multipleOf", `{"properties": {"n": {"multipleOf": 5}}}`,
			`{"n": 7}`, `argument "n": expected a multiple of 5, got number 7`},
		{"dependentRequired", `{"dependentRequired": {"user": ["password"]}}`,
			`{"user": "ada"}`, `missing required argument "password"`},
		{"no properties allowed", `{"type": "object", "additionalProperties": false}`,
			`{"a": 1}`, `unknown argument "a" (no arguments are allowed here)`},
		{"ref to defs", `{"$defs": {"pos": {"type": "integer", "minimum": 1}}, "properties": {"n": {"$ref": "#/$defs/pos"}}}`,
			`{"n": 0}`, `argument "n": expected a number >= 1, got number 0`},
		{"min properties", `{"minProperties": 1}`,
			`{}`, `arguments: expected an object with at least 1 property, got an object`},
		{"uuid format", `{"properties": {"id": {"type": "string", "format": "uuid"}}}`,
			`{"id": "nope"}`, `argument "id": expected a UUID such as "123e4567-e89b-12d3-a456-426614174000", got string "nope"`},
		{"other draft", `{"$schema": "http://json-schema.org/draft-07/schema#", "properties": {"n": {"type": "integer"}}}`,
			`{"n": "1"}`, `argument "n": expected integer, got string "1"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := Compile(json.RawMessage(tt.schema))
			if err != nil {
				t.Fatal(err)
			}
			err = v.Validate(decode(t, tt.in, false))
			if tt.want == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error, want %s", tt.want)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("message:\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestCompileErrors(t *testing.T) {
	tests := []struct {
		name, schema, want string
	}{
		{"not JSON", `{"type": `, "schema: compile"},
		{"not a schema", `{"type": "integr"}`, "schema: compile"},
		{"bad regexp", `{"pattern": "(x"}`, "schema: compile"},
		{"remote ref", `{"$ref": "https://example.com/s.json"}`, "only references inside the schema are allowed"},
		{"file ref", `{"$ref": "file:///etc/passwd"}`, "only references inside the schema are allowed"},
		{"bad default", `{"properties": {"n": {"type": "integer", "default": "x"}}}`,
			`the default at /properties/n does not satisfy its schema: arguments: expected integer, got string "x"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Compile(json.RawMessage(tt.schema))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestValidateGoValues(t *testing.T) {
	v, err := Compile(json.RawMessage(`{"type": "object", "properties": {"n": {"type": "integer"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	// Values that did not come from encoding/json go to the library.
	if err := v.Validate(map[string]any{"n": 3}); err != nil {
		t.Errorf("int: %v", err)
	}
	if err := v.Validate(map[string]any{"n": struct{}{}}); err == nil {
		t.Error("struct{}: no error")
	}
}

func TestSchemaCopied(t *testing.T) {
	raw := []byte(`{"type": "string"}`)
	v, err := Compile(raw)
	if err != nil {
		t.Fatal(err)
	}
	raw[2] = 'X'
	if !bytes.Equal(v.Schema(), []byte(`{"type": "string"}`)) {
		t.Errorf("Schema() = %s, changed with the caller's slice", v.Schema())
	}
}

func TestConcurrentUse(t *testing.T) {
	info, err := For[validateArgs]()
	if err != nil {
		t.Fatal(err)
	}
	inputs := []string{
		`{"model_path": "m", "opts": {"depth": 1}}`,
		`{"count": "ten", "opts": {}}`,
		`{"model_path": "m", "opts": {"depth": 1}, "files": [{"name": "a"}]}`,
	}
	done := make(chan error)
	for i := range 8 {
		go func() {
			var err error
			for range 50 {
				var m map[string]any
				if e := json.Unmarshal([]byte(inputs[i%len(inputs)]), &m); e != nil {
					err = e
					break
				}
				info.Validator.ApplyDefaults(m)
				if e := info.Validator.Validate(m); e != nil && i%len(inputs) != 1 {
					err = e
				}
			}
			done <- err
		}()
	}
	for range 8 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}
