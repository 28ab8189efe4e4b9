package schema_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/toolwire/toolwire/schema"
)

// summary renders what Properties read, compactly, for comparison.
func summary(ps []schema.Property) []string {
	var out []string
	for _, p := range ps {
		s := fmt.Sprintf("%s type=%v req=%v", p.Name, p.Type, p.Required)
		if p.Description != "" {
			s += " desc=" + p.Description
		}
		if p.Title != "" {
			s += " title=" + p.Title
		}
		if p.Default != nil {
			s += " default=" + string(p.Default)
		}
		if p.Ref != "" {
			s += " ref=" + p.Ref
		}
		for _, e := range p.Enum {
			s += " enum=" + string(e)
		}
		if p.Items != nil {
			s += fmt.Sprintf(" items=%v", p.Items.Type)
			if p.Items.Items != nil || p.Items.AnyOf != nil {
				s += " (read too deep)"
			}
		}
		for _, a := range p.AnyOf {
			s += fmt.Sprintf(" anyOf=%v", a.Type)
		}
		out = append(out, s)
	}
	return out
}

func TestProperties(t *testing.T) {
	tests := []struct {
		name, doc string
		want      []string
	}{
		{"document order, not sorted",
			`{"type":"object","properties":{"z":{"type":"string"},"a":{"type":"integer"},"m":{}},"required":["a"]}`,
			[]string{"z type=[string] req=false", "a type=[integer] req=true", "m type=[] req=false"}},
		{"annotations",
			`{"properties":{"q":{"type":["string","null"],"title":"Query","description":"what to find","default":"x","enum":["x", "y"]}}}`,
			[]string{`q type=[string null] req=false desc=what to find title=Query default="x" enum="x" enum="y"`}},
		{"items and anyOf one level",
			`{"properties":{"tags":{"type":"array","items":{"type":"string","items":{"type":"x"}}},"id":{"anyOf":[{"type":"string"},{"type":"integer","anyOf":[{}]}]}}}`,
			[]string{"tags type=[array] req=false items=[string]", "id type=[] req=false anyOf=[string] anyOf=[integer]"}},
		{"$ref left as written",
			`{"properties":{"addr":{"$ref":"#/$defs/address"}},"$defs":{"address":{"type":"object"}}}`,
			[]string{"addr type=[] req=false ref=#/$defs/address"}},
		{"boolean property schema", `{"properties":{"any":true,"none":false}}`,
			[]string{"any type=[] req=false", "none type=[] req=false"}},
		{"wrong keyword types ignored",
			`{"properties":{"p":{"type":7,"description":["x"],"enum":"a","title":1}},"required":"p"}`,
			[]string{"p type=[] req=false"}},
		{"type list with a non-name", `{"properties":{"p":{"type":["string",1]}}}`,
			[]string{"p type=[string] req=false"}},
		{"duplicate name keeps first place, last schema",
			`{"properties":{"a":{"type":"string"},"b":{},"a":{"type":"integer"}}}`,
			[]string{"a type=[integer] req=false", "b type=[] req=false"}},
		{"no properties", `{"type":"object"}`, nil},
		{"properties not an object", `{"properties":[1,2]}`, nil},
		{"null schema", `null`, nil},
		{"default null is a default", `{"properties":{"p":{"default":null}}}`, []string{"p type=[] req=false default=null"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps, err := schema.Properties(json.RawMessage(tt.doc))
			if err != nil {
				t.Fatal(err)
			}
			if got := summary(ps); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestPropertiesNotAnObject(t *testing.T) {
	for _, doc := range []string{`true`, `[]`, `"x"`, ``, `{"properties":`} {
		if ps, err := schema.Properties(json.RawMessage(doc)); err == nil {
			t.Errorf("Properties(%q) = %v, nil; want an error", doc, ps)
		}
	}
}

func TestMainType(t *testing.T) {
	for _, tt := range []struct {
		types []string
		want  string
	}{{nil, ""}, {[]string{"null"}, ""}, {[]string{"null", "integer"}, "integer"}, {[]string{"string", "null"}, "string"}} {
		if got := (schema.Shape{Type: tt.types}).MainType(); got != tt.want {
			t.Errorf("MainType(%q) = %q, want %q", tt.types, got, tt.want)
		}
	}
}

func ExampleProperties() {
	doc := json.RawMessage(`{"type":"object","properties":{
		"query":{"type":"string","description":"what to look for"},
		"limit":{"type":"integer","default":10}},
		"required":["query"]}`)
	props, err := schema.Properties(doc)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range props {
		fmt.Printf("%s %s required=%v default=%s %s\n", p.Name, p.MainType(), p.Required, p.Default, p.Description)
	}
	// Output:
	// query string required=true default= what to look for
	// limit integer required=false default=10
}
