package schema

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// facet is one key=value item of a jsonschema struct tag.
type facet struct {
	key, value string
	hasValue   bool
}

// parseFacets splits a jsonschema tag into its items. Items are separated
// by commas; a value may be quoted with single quotes, inside which commas
// are literal and a doubled single quote stands for one.
func parseFacets(tag string) ([]facet, error) {
	var out []facet
	s := tag
	for s != "" {
		var f facet
		i := strings.IndexAny(s, "=,")
		if i < 0 || s[i] == ',' {
			end := len(s)
			if i >= 0 {
				end = i
			}
			f.key = strings.TrimSpace(s[:end])
			s = s[end:]
		} else {
			f.key = strings.TrimSpace(s[:i])
			f.hasValue = true
			s = s[i+1:]
			if strings.HasPrefix(s, "'") {
				var b strings.Builder
				s = s[1:]
				closed := false
				for len(s) > 0 {
					c := s[0]
					s = s[1:]
					if c != '\'' {
						b.WriteByte(c)
						continue
					}
					if strings.HasPrefix(s, "'") {
						b.WriteByte('\'')
						s = s[1:]
						continue
					}
					closed = true
					break
				}
				if !closed {
					return nil, fmt.Errorf("jsonschema tag %q: unterminated quote in %s", tag, f.key)
				}
				if s != "" && s[0] != ',' {
					return nil, fmt.Errorf("jsonschema tag %q: text after the quoted value of %s", tag, f.key)
				}
				f.value = b.String()
			} else {
				end := strings.IndexByte(s, ',')
				if end < 0 {
					end = len(s)
				}
				f.value = s[:end]
				s = s[end:]
			}
		}
		if f.key == "" {
			return nil, fmt.Errorf("jsonschema tag %q: empty key", tag)
		}
		out = append(out, f)
		s = strings.TrimPrefix(s, ",")
	}
	return out, nil
}

// fieldOptions are what a field's tags say beyond its JSON name.
type fieldOptions struct {
	required, optional bool
}

// applyFacets applies a field's jsonschema tag to its schema n.
func applyFacets(n *node, tag string) (fieldOptions, error) {
	var opts fieldOptions
	facets, err := parseFacets(tag)
	if err != nil {
		return opts, err
	}
	for _, f := range facets {
		if err := applyFacet(n, f, &opts); err != nil {
			return opts, fmt.Errorf("jsonschema tag %s: %w", f.key, err)
		}
	}
	if opts.required && opts.optional {
		return opts, errors.New("jsonschema tag: both required and optional")
	}
	return opts, nil
}

func applyFacet(n *node, f facet, opts *fieldOptions) error {
	switch f.key {
	case "required", "optional":
		if f.hasValue {
			return errors.New("takes no value")
		}
		if f.key == "required" {
			opts.required = true
		} else {
			opts.optional = true
		}
		return nil
	}
	if !f.hasValue {
		return errors.New("needs a value (key=value)")
	}
	if n.raw != nil {
		return errors.New("cannot constrain a type that provides its own schema")
	}
	target := n // what item constraints apply to
	if n.typ == "array" && n.items != nil {
		target = n.items
	}
	switch f.key {
	case "default":
		v, err := typedValue(n, f.value)
		if err != nil {
			return err
		}
		n.dflt, n.hasDefault = v, true
	case "example":
		v, err := typedValue(n, f.value)
		if err != nil {
			return err
		}
		n.examples = append(n.examples, v)
	case "enum":
		var vals []any
		for _, s := range strings.Split(f.value, "|") {
			v, err := typedValue(target, s)
			if err != nil {
				return err
			}
			vals = append(vals, v)
		}
		target.enum = vals
	case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum":
		if target.typ != "integer" && target.typ != "number" {
			return fmt.Errorf("needs a number field, not %s", describeType(target))
		}
		num, err := number(f.value)
		if err != nil {
			return err
		}
		switch f.key {
		case "minimum":
			target.minimum = num
		case "maximum":
			target.maximum = num
		case "exclusiveMinimum":
			target.exclusiveMinimum = num
		default:
			target.exclusiveMaximum = num
		}
	case "minLength", "maxLength", "pattern", "format":
		if target.typ != "string" {
			return fmt.Errorf("needs a string field, not %s", describeType(target))
		}
		switch f.key {
		case "pattern":
			target.pattern = f.value
		case "format":
			target.format = f.value
		default:
			k, err := count(f.value)
			if err != nil {
				return err
			}
			if f.key == "minLength" {
				target.minLength = k
			} else {
				target.maxLength = k
			}
		}
	case "minItems", "maxItems":
		if n.typ != "array" {
			return fmt.Errorf("needs a slice or array field, not %s", describeType(n))
		}
		k, err := count(f.value)
		if err != nil {
			return err
		}
		if f.key == "minItems" {
			n.minItems = k
		} else {
			n.maxItems = k
		}
	default:
		return errors.New("unknown key (want default, example, enum, minimum, maximum, exclusiveMinimum, exclusiveMaximum, minLength, maxLength, pattern, format, minItems, maxItems, required or optional)")
	}
	return nil
}

// typedValue reads a tag value for schema n: literal text for a string
// schema, JSON otherwise.
func typedValue(n *node, s string) (any, error) {
	if n.typ == "string" && n.raw == nil {
		return s, nil
	}
	if !json.Valid([]byte(s)) {
		return nil, fmt.Errorf("%q is not a JSON value for %s", s, describeType(n))
	}
	return json.RawMessage(s), nil
}

func number(s string) (json.Number, error) {
	if _, err := strconv.ParseFloat(s, 64); err != nil || !json.Valid([]byte(s)) {
		return "", fmt.Errorf("%q is not a number", s)
	}
	return json.Number(s), nil
}

func count(s string) (*int, error) {
	k, err := strconv.Atoi(s)
	if err != nil || k < 0 {
		return nil, fmt.Errorf("%q is not a non-negative integer", s)
	}
	return &k, nil
}

func describeType(n *node) string {
	switch {
	case n.typ != "":
		return "a field of type " + n.typ
	case n.ref != "":
		return "a field of a recursive type"
	default:
		return "a field of any type"
	}
}
