package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// schemaURL names the one document a Validator compiles; it shows in no
// message.
const schemaURL = "urn:toolwire:schema"

// Validator is a compiled schema. It is safe for concurrent use.
type Validator struct {
	raw      json.RawMessage
	root     *jsonschema.Schema
	byLoc    map[string]*jsonschema.Schema // every reachable subschema by Location
	fast     *fastNode                     // nil unless the schema fits the fast check
	defaults *valuePlan                    // nil when the schema has no defaults
}

// Compile compiles a JSON Schema. A schema without "$schema" is read as
// draft 2020-12. The "format" keyword is asserted, references outside the
// document are refused, and every "default" must satisfy the schema it
// sits in.
func Compile(raw json.RawMessage) (*Validator, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("schema: compile: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	c.UseLoader(noRemote{})
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, fmt.Errorf("schema: compile: %w", err)
	}
	root, err := c.Compile(schemaURL)
	if err != nil {
		return nil, fmt.Errorf("schema: compile: %w", err)
	}
	v := &Validator{
		raw:   append(json.RawMessage(nil), raw...),
		root:  root,
		byLoc: map[string]*jsonschema.Schema{},
	}
	var bad error
	walkSchemas(root, func(s *jsonschema.Schema) {
		v.byLoc[s.Location] = s
		if s.Default != nil && bad == nil {
			if err := s.Validate(*s.Default); err != nil {
				bad = fmt.Errorf("schema: compile: the default at %s does not satisfy its schema: %w",
					pointerOf(s.Location), newValidationError(v, *s.Default, err))
			}
		}
	})
	if bad != nil {
		return nil, bad
	}
	v.fast = buildFast(root)
	v.defaults = buildPlan(root)
	return v, nil
}

// Schema returns the schema v was compiled from.
func (v *Validator) Schema() json.RawMessage {
	return v.raw
}

// Validate checks a value decoded from JSON (by encoding/json into any,
// with or without UseNumber) against the schema. It returns nil or a
// *ValidationError that lists every problem found.
func (v *Validator) Validate(x any) error {
	if v.fast != nil && v.fast.accepts(x) {
		return nil
	}
	err := v.root.Validate(x)
	if err == nil {
		return nil
	}
	return newValidationError(v, x, err)
}

// noRemote refuses to load referenced documents: a tool schema must be
// self-contained, and one that came over the wire must not make the host
// read files or fetch URLs.
type noRemote struct{}

func (noRemote) Load(url string) (any, error) {
	return nil, fmt.Errorf("schema: reference to %s: only references inside the schema are allowed", url)
}

// pointerOf turns a compiled schema location into a JSON Pointer into the
// schema document.
func pointerOf(loc string) string {
	p := strings.TrimPrefix(loc, schemaURL+"#")
	if p == "" {
		return "the root"
	}
	return p
}

// walkSchemas calls fn once for every schema reachable from s.
func walkSchemas(s *jsonschema.Schema, fn func(*jsonschema.Schema)) {
	seen := map[*jsonschema.Schema]bool{}
	var walk func(*jsonschema.Schema)
	walk = func(s *jsonschema.Schema) {
		if s == nil || seen[s] {
			return
		}
		seen[s] = true
		fn(s)
		walk(s.Ref)
		walk(s.RecursiveRef)
		if s.DynamicRef != nil {
			walk(s.DynamicRef.Ref)
		}
		walk(s.Not)
		for _, l := range [][]*jsonschema.Schema{s.AllOf, s.AnyOf, s.OneOf, s.PrefixItems} {
			for _, c := range l {
				walk(c)
			}
		}
		walk(s.If)
		walk(s.Then)
		walk(s.Else)
		walk(s.PropertyNames)
		for _, c := range s.Properties {
			walk(c)
		}
		for _, c := range s.PatternProperties {
			walk(c)
		}
		if c, ok := s.AdditionalProperties.(*jsonschema.Schema); ok {
			walk(c)
		}
		for _, d := range s.Dependencies {
			if c, ok := d.(*jsonschema.Schema); ok {
				walk(c)
			}
		}
		for _, c := range s.DependentSchemas {
			walk(c)
		}
		walk(s.UnevaluatedProperties)
		walk(s.Contains)
		switch it := s.Items.(type) {
		case *jsonschema.Schema:
			walk(it)
		case []*jsonschema.Schema:
			for _, c := range it {
				walk(c)
			}
		}
		if c, ok := s.AdditionalItems.(*jsonschema.Schema); ok {
			walk(c)
		}
		walk(s.Items2020)
		walk(s.UnevaluatedItems)
		walk(s.ContentSchema)
	}
	walk(s)
}
