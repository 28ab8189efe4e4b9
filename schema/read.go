package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Shape is what a reader of a JSON Schema learns about one value: the
// keywords that describe it to a person or a form, not those that
// constrain it (see [Compile] for validation).
type Shape struct {
	// Type lists the "type" keyword's names ("string", or "integer" and
	// "null"); it is empty when the schema has no usable "type".
	Type []string
	// Ref is the "$ref" keyword as written: the reader does not resolve it.
	Ref string
	// Title and Description are the annotations of that name.
	Title, Description string
	// Default is the "default" value as written, or nil.
	Default json.RawMessage
	// Enum lists the "enum" values as written, in order.
	Enum []json.RawMessage
	// Items is the shape of "items" and AnyOf those of "anyOf", read one
	// level down only: their own Items and AnyOf are left empty.
	Items *Shape
	AnyOf []Shape
	// Schema is the whole schema as written.
	Schema json.RawMessage
}

// MainType returns the first name in Type other than "null", or "" when
// there is none: the type a value takes when it is given.
func (s Shape) MainType() string {
	for _, t := range s.Type {
		if t != "null" {
			return t
		}
	}
	return ""
}

// Property is one property of an object schema.
type Property struct {
	Name string
	// Required reports whether the object's "required" lists the name.
	Required bool
	Shape
}

// Properties reads the top-level properties of an object schema, in the
// order the document lists them. It is tolerant of what servers send: a
// schema with no "properties" (or one that is not an object) has none, a
// property whose schema is not an object (true, say) has only its name,
// keywords of the wrong JSON type are ignored, and "$ref" is reported,
// not followed. A duplicated property name keeps its first place and its
// last schema, as JSON decoders do. The error is for a document that is
// neither a JSON object nor null.
func Properties(doc json.RawMessage) ([]Property, error) {
	var top struct {
		Properties json.RawMessage `json:"properties"`
		Required   json.RawMessage `json:"required"`
	}
	if err := json.Unmarshal(doc, &top); err != nil {
		return nil, fmt.Errorf("schema: the schema is not a JSON object: %w", err)
	}
	var required []string
	_ = json.Unmarshal(top.Required, &required) // a malformed list requires nothing
	dec := json.NewDecoder(bytes.NewReader(top.Properties))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, nil
	}
	var out []Property
	at := map[string]int{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		name := tok.(string)
		var raw json.RawMessage
		if dec.Decode(&raw) != nil {
			break
		}
		p := Property{Name: name, Shape: readShape(raw, true)}
		for _, r := range required {
			if r == name {
				p.Required = true
			}
		}
		if i, dup := at[name]; dup {
			out[i] = p
			continue
		}
		at[name] = len(out)
		out = append(out, p)
	}
	return out, nil
}

// readShape reads the describing keywords of a schema; deep also reads
// its items and anyOf (one level).
func readShape(raw json.RawMessage, deep bool) Shape {
	s := Shape{Schema: raw}
	var kw struct {
		Ref         json.RawMessage `json:"$ref"`
		Type        json.RawMessage `json:"type"`
		Title       json.RawMessage `json:"title"`
		Description json.RawMessage `json:"description"`
		Default     json.RawMessage `json:"default"`
		Enum        json.RawMessage `json:"enum"`
		Items       json.RawMessage `json:"items"`
		AnyOf       json.RawMessage `json:"anyOf"`
	}
	if json.Unmarshal(raw, &kw) != nil {
		return s // true, false, or not an object
	}
	var types any
	_ = json.Unmarshal(kw.Type, &types)
	switch t := types.(type) {
	case string:
		s.Type = []string{t}
	case []any:
		for _, e := range t {
			if name, ok := e.(string); ok {
				s.Type = append(s.Type, name)
			}
		}
	}
	_ = json.Unmarshal(kw.Ref, &s.Ref)
	_ = json.Unmarshal(kw.Title, &s.Title)
	_ = json.Unmarshal(kw.Description, &s.Description)
	if len(kw.Default) > 0 {
		s.Default = kw.Default
	}
	_ = json.Unmarshal(kw.Enum, &s.Enum)
	if !deep {
		return s
	}
	if len(kw.Items) > 0 {
		items := readShape(kw.Items, false)
		s.Items = &items
	}
	var alts []json.RawMessage
	if json.Unmarshal(kw.AnyOf, &alts) == nil {
		for _, a := range alts {
			s.AnyOf = append(s.AnyOf, readShape(a, false))
		}
	}
	return s
}
