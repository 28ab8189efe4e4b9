package schema

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestApplyDefaults(t *testing.T) {
	const inferred = `{
	  "type": "object",
	  "properties": {
	    "count": {"type": "integer", "default": 10},
	    "mode": {"type": "string", "default": "fast"},
	    "any": {"default": 1},
	    "opts": {
	      "type": "object",
	      "properties": {
	        "depth": {"type": "integer", "default": 2},
	        "filter": {"type": "object", "properties": {"glob": {"type": "string", "default": "*"}}}
	      }
	    },
	    "files": {
	      "type": "array",
	      "items": {"type": "object", "properties": {"name": {"type": "string"}, "mode": {"type": "string", "default": "r"}}}
	    },
	    "grid": {"type": "array", "items": {"type": "array", "items": {"properties": {"v": {"default": 0}}}}},
	    "tags": {"type": "array", "default": ["a", "b"]},
	    "meta": {"type": "object", "default": {"k": {"n": 1}}, "properties": {"k": {"properties": {"m": {"default": true}}}}}
	  }
	}`
	tests := []struct {
		name, schema, in, want string
	}{
		{"top level", inferred, `{}`, `{"count": 10, "mode": "fast", "any": 1, "tags": ["a", "b"], "meta": {"k": {"n": 1, "m": true}}}`},
		{"present values kept", inferred, `{"count": 3, "mode": "slow", "any": "x", "tags": [], "meta": {}}`,
			`{"count": 3, "mode": "slow", "any": "x", "tags": [], "meta": {}}`},
		{"null means absent unless null is allowed", inferred, `{"count": null, "any": null}`,
			`{"count": 10, "mode": "fast", "any": null, "tags": ["a", "b"], "meta": {"k": {"n": 1, "m": true}}}`},
		{"nested objects", inferred, `{"opts": {"filter": {}}}`,
			`{"count": 10, "mode": "fast", "any": 1, "tags": ["a", "b"], "meta": {"k": {"n": 1, "m": true}}, "opts": {"depth": 2, "filter": {"glob": "*"}}}`},
		{"absent objects not created", inferred, `{"opts": {}}`,
			`{"count": 10, "mode": "fast", "any": 1, "tags": ["a", "b"], "meta": {"k": {"n": 1, "m": true}}, "opts": {"depth": 2}}`},
		{"arrays of objects", inferred, `{"files": [{"name": "a"}, {"name": "b", "mode": "w"}, "not an object"], "grid": [[{}, {"v": 5}], []]}`,
			`{"count": 10, "mode": "fast", "any": 1, "tags": ["a", "b"], "meta": {"k": {"n": 1, "m": true}},
			  "files": [{"name": "a", "mode": "r"}, {"name": "b", "mode": "w"}, "not an object"], "grid": [[{"v": 0}, {"v": 5}], []]}`},
		{"wrong types left for Validate", inferred, `{"opts": "deep", "files": {"name": "a"}}`,
			`{"count": 10, "mode": "fast", "any": 1, "tags": ["a", "b"], "meta": {"k": {"n": 1, "m": true}}, "opts": "deep", "files": {"name": "a"}}`},
		{"refs, recursion and allOf", `{
		  "$defs": {
		    "node": {"type": "object", "properties": {"weight": {"default": 1}, "next": {"$ref": "#/$defs/node"}}},
		    "base": {"properties": {"lang": {"default": "en"}}},
		    "limit": {"type": "integer", "default": 100}
		  },
		  "allOf": [{"$ref": "#/$defs/base"}],
		  "properties": {"head": {"$ref": "#/$defs/node"}, "limit": {"$ref": "#/$defs/limit"}}
		}`, `{"head": {"next": {"next": {"weight": 5}}}}`,
			`{"lang": "en", "limit": 100, "head": {"weight": 1, "next": {"weight": 1, "next": {"weight": 5}}}}`},
		{"no defaults", `{"properties": {"a": {"type": "string"}}}`, `{"b": 1}`, `{"b": 1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := Compile(json.RawMessage(tt.schema))
			if err != nil {
				t.Fatal(err)
			}
			m := decode(t, tt.in, false).(map[string]any)
			v.ApplyDefaults(m)
			want := decode(t, tt.want, false)
			if !reflect.DeepEqual(m, want) {
				got, _ := json.Marshal(m)
				t.Errorf("got  %s\nwant %s", got, mustCompact(t, tt.want))
			}
		})
	}
}

func mustCompact(t *testing.T, s string) string {
	b, err := json.Marshal(decode(t, s, false))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestApplyDefaultsCopiesComposites(t *testing.T) {
	v, err := Compile(json.RawMessage(`{"properties": {"tags": {"default": ["a"]}, "opts": {"default": {"x": [1]}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	first := map[string]any{}
	v.ApplyDefaults(first)
	first["tags"].([]any)[0] = "changed"
	first["opts"].(map[string]any)["x"].([]any)[0] = "changed"
	second := map[string]any{}
	v.ApplyDefaults(second)
	want := map[string]any{"tags": []any{"a"}, "opts": map[string]any{"x": []any{1.0}}}
	if !reflect.DeepEqual(second, want) {
		t.Errorf("defaults were changed through an earlier result: %v", second)
	}
}

func TestApplyDefaultsFromInference(t *testing.T) {
	info, err := For[nested]()
	if err != nil {
		t.Fatal(err)
	}
	m := decode(t, `{"opts": {"filter": {}}, "items": [{"name": "a"}, {"name": "b", "qty": 4}]}`, false).(map[string]any)
	info.Validator.ApplyDefaults(m)
	want := decode(t, `{"opts": {"depth": 1, "filter": {}}, "items": [{"name": "a", "qty": 1}, {"name": "b", "qty": 4}]}`, false)
	if !reflect.DeepEqual(m, want) {
		t.Errorf("got %v, want %v", m, want)
	}
	if err := info.Validator.Validate(m); err != nil {
		t.Errorf("filled arguments do not validate: %v", err)
	}
}

func TestApplyDefaultsNilMap(t *testing.T) {
	v, err := Compile(json.RawMessage(`{"properties": {"a": {"default": 1}}}`))
	if err != nil {
		t.Fatal(err)
	}
	v.ApplyDefaults(nil) // must not panic
}

func TestApplyDefaultsAllocs(t *testing.T) {
	info, err := For[nested]()
	if err != nil {
		t.Fatal(err)
	}
	// Nothing to fill: no allocation at all.
	full := decode(t, `{"opts": {"depth": 3, "filter": {}}, "items": [{"name": "a", "qty": 2}, {"name": "b", "qty": 4}]}`, false).(map[string]any)
	if n := testing.AllocsPerRun(100, func() { info.Validator.ApplyDefaults(full) }); n != 0 {
		t.Errorf("ApplyDefaults with nothing to fill: %v allocs, want 0", n)
	}
}
