package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// node is one schema object under construction. Its fields are written in
// a fixed order by appendJSON, which makes inferred schemas deterministic.
type node struct {
	ref              string
	typ              string
	description      string
	format           string
	contentEncoding  string
	enum             []any
	dflt             any // nil when hasDefault is false
	hasDefault       bool
	examples         []any
	minimum          json.Number
	exclusiveMinimum json.Number
	maximum          json.Number
	exclusiveMaximum json.Number
	minLength        *int
	maxLength        *int
	pattern          string
	minItems         *int
	maxItems         *int
	items            *node
	properties       []property
	required         []string
	additional       any // nil, false or *node
	defs             []def
	raw              json.RawMessage // a Provider's schema, written as is
}

type property struct {
	name   string
	schema *node
}

type def struct {
	name   string
	schema *node
}

// marshal returns the compact JSON of n.
func (n *node) marshal() (json.RawMessage, error) {
	var buf bytes.Buffer
	if err := n.appendJSON(&buf); err != nil {
		return nil, err
	}
	return json.RawMessage(buf.Bytes()), nil
}

func (n *node) appendJSON(buf *bytes.Buffer) error {
	if n.raw != nil {
		return json.Compact(buf, n.raw)
	}
	w := objWriter{buf: buf}
	buf.WriteByte('{')
	if n.ref != "" {
		w.key("$ref")
		w.value(n.ref)
	}
	if n.typ != "" {
		w.key("type")
		w.value(n.typ)
	}
	if n.description != "" {
		w.key("description")
		w.value(n.description)
	}
	if n.format != "" {
		w.key("format")
		w.value(n.format)
	}
	if n.contentEncoding != "" {
		w.key("contentEncoding")
		w.value(n.contentEncoding)
	}
	if n.enum != nil {
		w.key("enum")
		w.value(n.enum)
	}
	if n.hasDefault {
		w.key("default")
		w.value(n.dflt)
	}
	if n.examples != nil {
		w.key("examples")
		w.value(n.examples)
	}
	w.number("minimum", n.minimum)
	w.number("exclusiveMinimum", n.exclusiveMinimum)
	w.number("maximum", n.maximum)
	w.number("exclusiveMaximum", n.exclusiveMaximum)
	w.int("minLength", n.minLength)
	w.int("maxLength", n.maxLength)
	if n.pattern != "" {
		w.key("pattern")
		w.value(n.pattern)
	}
	w.int("minItems", n.minItems)
	w.int("maxItems", n.maxItems)
	if n.items != nil {
		w.key("items")
		w.node(n.items)
	}
	if n.properties != nil {
		w.key("properties")
		buf.WriteByte('{')
		for i, p := range n.properties {
			if i > 0 {
				buf.WriteByte(',')
			}
			w.str(p.name)
			buf.WriteByte(':')
			w.node(p.schema)
		}
		buf.WriteByte('}')
	}
	if len(n.required) > 0 {
		w.key("required")
		w.value(n.required)
	}
	switch a := n.additional.(type) {
	case bool:
		w.key("additionalProperties")
		w.value(a)
	case *node:
		w.key("additionalProperties")
		w.node(a)
	}
	if len(n.defs) > 0 {
		w.key("$defs")
		buf.WriteByte('{')
		for i, d := range n.defs {
			if i > 0 {
				buf.WriteByte(',')
			}
			w.str(d.name)
			buf.WriteByte(':')
			w.node(d.schema)
		}
		buf.WriteByte('}')
	}
	buf.WriteByte('}')
	return w.err
}

// objWriter writes the members of one JSON object, remembering the first
// error.
type objWriter struct {
	buf   *bytes.Buffer
	first bool // a member has been written
	err   error
}

func (w *objWriter) key(k string) {
	if w.first {
		w.buf.WriteByte(',')
	}
	w.first = true
	w.str(k)
	w.buf.WriteByte(':')
}

func (w *objWriter) str(s string) {
	w.value(s)
}

func (w *objWriter) node(n *node) {
	if err := n.appendJSON(w.buf); err != nil && w.err == nil {
		w.err = err
	}
}

func (w *objWriter) number(k string, n json.Number) {
	if n == "" {
		return
	}
	w.key(k)
	w.buf.WriteString(string(n))
}

func (w *objWriter) int(k string, n *int) {
	if n == nil {
		return
	}
	w.key(k)
	w.buf.WriteString(strconv.Itoa(*n))
}

// value writes v as JSON without HTML escaping.
func (w *objWriter) value(v any) {
	if err := appendValue(w.buf, v); err != nil && w.err == nil {
		w.err = err
	}
}

func appendValue(buf *bytes.Buffer, v any) error {
	switch v := v.(type) {
	case json.RawMessage:
		return json.Compact(buf, v)
	case json.Number:
		buf.WriteString(string(v))
		return nil
	case []any:
		buf.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := appendValue(buf, e); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
		return nil
	}
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("encode %T: %w", v, err)
	}
	buf.Truncate(buf.Len() - 1) // Encode's newline
	return nil
}
