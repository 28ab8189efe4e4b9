package schema

import (
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// Info is what inference learns about a Go type.
type Info struct {
	// Schema is the JSON Schema (draft 2020-12) of the type, compact and
	// with a deterministic key order.
	Schema json.RawMessage
	// Omitted lists, in field order, the JSON names of the top-level fields
	// that Options.Omit left out of Schema.
	Omitted []string
	// Validator is Schema compiled.
	Validator *Validator
}

// Provider is implemented by types that describe their own JSON form, for
// example a type with a custom UnmarshalJSON. JSONSchema must return a
// self-contained schema (no "$ref" out of it); inference uses it as is.
type Provider interface {
	JSONSchema() json.RawMessage
}

// Options adjusts inference; the zero Options infers as For does.
type Options struct {
	// Omit, when set, is asked about every struct field. A top-level field
	// (including one promoted from an embedded struct) for which it returns
	// true is left out of the schema and named in Info.Omitted, for the
	// caller to fill apart from the schema; a deeper one is an error, since
	// only a top-level member can be filled that way.
	Omit func(reflect.StructField) bool
}

// For infers the JSON Schema of T; see the package documentation for the
// rules. It fails if T (or a type inside it) has no JSON form, if a struct
// tag is malformed, or if the schema does not compile, for example because
// a default does not satisfy its own constraints.
func For[T any]() (*Info, error) {
	return ForType(reflect.TypeFor[T](), Options{})
}

// ForType is For for a reflect.Type, with options.
func ForType(t reflect.Type, opts Options) (*Info, error) {
	if t == nil {
		return nil, errors.New("schema: nil type")
	}
	root := t
	for root.Kind() == reflect.Pointer {
		root = root.Elem()
	}
	in := &inferrer{
		root:      root,
		omit:      opts.Omit,
		recursive: map[reflect.Type]bool{},
		defNames:  map[reflect.Type]string{},
		usedNames: map[string]bool{},
	}
	in.findRecursive(root, map[reflect.Type]int{})
	n, err := in.schemaOf(root, true, root.String())
	if err != nil {
		return nil, fmt.Errorf("schema: infer %s: %w", t, err)
	}
	n.defs = in.defs
	raw, err := n.marshal()
	if err != nil {
		return nil, fmt.Errorf("schema: infer %s: %w", t, err)
	}
	v, err := Compile(raw)
	if err != nil {
		return nil, fmt.Errorf("schema: infer %s: %w", t, err)
	}
	return &Info{Schema: raw, Omitted: in.omitted, Validator: v}, nil
}

type inferrer struct {
	root      reflect.Type
	omit      func(reflect.StructField) bool // Options.Omit
	recursive map[reflect.Type]bool          // struct types that contain themselves
	defNames  map[reflect.Type]string        // $defs name of each recursive type built so far
	usedNames map[string]bool
	defs      []def
	omitted   []string
}

var (
	timeType        = reflect.TypeFor[time.Time]()
	durationType    = reflect.TypeFor[time.Duration]()
	numberType      = reflect.TypeFor[json.Number]()
	providerType    = reflect.TypeFor[Provider]()
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textType        = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// findRecursive marks the struct types that are reached again while still
// being expanded: making each of them a $def breaks every cycle.
// state is 1 while a type is being expanded and 2 once it is done.
func (in *inferrer) findRecursive(t reflect.Type, state map[reflect.Type]int) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if special(t) {
		return
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		in.findRecursive(t.Elem(), state)
	case reflect.Map:
		in.findRecursive(t.Elem(), state)
	case reflect.Struct:
		switch state[t] {
		case 1:
			in.recursive[t] = true
			return
		case 2:
			return
		}
		state[t] = 1
		for _, f := range structFields(t) {
			in.findRecursive(f.typ, state)
		}
		state[t] = 2
	}
}

// special reports whether t has a schema of its own rather than one
// derived from its kind.
func special(t reflect.Type) bool {
	return t == timeType || t == durationType || t == numberType ||
		t.Implements(providerType) || reflect.PointerTo(t).Implements(providerType) ||
		reflect.PointerTo(t).Implements(unmarshalerType) ||
		reflect.PointerTo(t).Implements(textType)
}

// schemaOf builds the schema of t. top is true for the root type; path
// names the place in the root type, for errors.
func (in *inferrer) schemaOf(t reflect.Type, top bool, path string) (*node, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t.Implements(providerType) || reflect.PointerTo(t).Implements(providerType):
		var p Provider
		if t.Implements(providerType) {
			p = reflect.Zero(t).Interface().(Provider)
		} else {
			p = reflect.New(t).Interface().(Provider)
		}
		s := p.JSONSchema()
		if !json.Valid(s) {
			return nil, fmt.Errorf("%s: %s.JSONSchema returned invalid JSON", path, t)
		}
		return &node{raw: s}, nil
	case t == timeType:
		return &node{typ: "string", format: "date-time"}, nil
	case t == durationType:
		return &node{typ: "integer", description: "Duration in nanoseconds."}, nil
	case t == numberType:
		return &node{typ: "number"}, nil
	case reflect.PointerTo(t).Implements(unmarshalerType):
		return &node{}, nil
	case reflect.PointerTo(t).Implements(textType):
		return &node{typ: "string"}, nil
	}
	switch t.Kind() {
	case reflect.Bool:
		return &node{typ: "boolean"}, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return &node{typ: "integer"}, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return &node{typ: "integer", minimum: "0"}, nil
	case reflect.Float32, reflect.Float64:
		return &node{typ: "number"}, nil
	case reflect.String:
		return &node{typ: "string"}, nil
	case reflect.Interface:
		return &node{}, nil
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 && !reflect.PointerTo(t.Elem()).Implements(unmarshalerType) &&
			!reflect.PointerTo(t.Elem()).Implements(textType) {
			return &node{typ: "string", contentEncoding: "base64"}, nil
		}
		items, err := in.schemaOf(t.Elem(), false, path+"[]")
		if err != nil {
			return nil, err
		}
		return &node{typ: "array", items: items}, nil
	case reflect.Array:
		items, err := in.schemaOf(t.Elem(), false, path+"[]")
		if err != nil {
			return nil, err
		}
		n := t.Len()
		return &node{typ: "array", items: items, minItems: &n, maxItems: &n}, nil
	case reflect.Map:
		switch t.Key().Kind() {
		case reflect.String, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		default:
			if !reflect.PointerTo(t.Key()).Implements(textType) {
				return nil, fmt.Errorf("%s: map key type %s has no JSON form", path, t.Key())
			}
		}
		vals, err := in.schemaOf(t.Elem(), false, path+"[key]")
		if err != nil {
			return nil, err
		}
		return &node{typ: "object", additional: vals}, nil
	case reflect.Struct:
		if in.recursive[t] && !top {
			return in.ref(t, path)
		}
		return in.object(t, top, path)
	}
	return nil, fmt.Errorf("%s: type %s has no JSON form", path, t)
}

// ref returns a reference to recursive type t, building its $def on first
// use.
func (in *inferrer) ref(t reflect.Type, path string) (*node, error) {
	if t == in.root {
		return &node{ref: "#"}, nil
	}
	name, ok := in.defNames[t]
	if !ok {
		base := defName(t)
		name = base
		for i := 2; in.usedNames[name]; i++ {
			name = base + strconv.Itoa(i)
		}
		in.usedNames[name] = true
		in.defNames[t] = name
		in.defs = append(in.defs, def{name: name}) // reserve its place
		i := len(in.defs) - 1
		body, err := in.object(t, false, path)
		if err != nil {
			return nil, err
		}
		in.defs[i].schema = body
	}
	return &node{ref: "#/$defs/" + name}, nil
}

// defName makes a $defs key from a type's name, keeping only characters
// that need no escaping in a "$ref" ("List[main.Item]" becomes
// "List_main.Item_").
func defName(t reflect.Type) string {
	name := strings.Map(func(r rune) rune {
		if r == '_' || r == '-' || r == '.' || (r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') {
			return r
		}
		return '_'
	}, t.Name())
	if name == "" {
		return "T"
	}
	return name
}

// object builds the schema of struct type t.
func (in *inferrer) object(t reflect.Type, top bool, path string) (*node, error) {
	n := &node{typ: "object", properties: []property{}, additional: false}
	for _, f := range structFields(t) {
		fpath := path + "." + f.sf.Name
		if in.omit != nil && in.omit(f.sf) {
			if !top {
				return nil, fmt.Errorf("%s: only top-level fields may be left out of the schema, and this one is nested", fpath)
			}
			in.omitted = append(in.omitted, f.name)
			continue
		}
		fs, err := in.schemaOf(f.typ, false, fpath)
		if err != nil {
			return nil, err
		}
		if f.asString {
			switch fs.typ {
			case "integer", "number", "boolean":
				fs = &node{typ: "string"}
			}
		}
		if d, ok := f.sf.Tag.Lookup("description"); ok {
			if fs.raw != nil {
				return nil, fmt.Errorf("%s: cannot describe a type that provides its own schema", fpath)
			}
			fs.description = d
		}
		opts, err := applyFacets(fs, f.sf.Tag.Get("jsonschema"))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", fpath, err)
		}
		n.properties = append(n.properties, property{name: f.name, schema: fs})
		required := f.typ.Kind() != reflect.Pointer && !f.omitEmpty && !f.viaPtr && !fs.hasDefault
		if opts.required {
			required = true
		} else if opts.optional {
			required = false
		}
		if required {
			n.required = append(n.required, f.name)
		}
	}
	return n, nil
}
