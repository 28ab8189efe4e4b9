package tool

import (
	"encoding"
	"encoding/json"
	"math"
	"reflect"
	"strings"
)

// assigner fills a typed tool's input struct straight from the arguments
// the pipeline completed (the generic form: map[string]any, []any, string,
// float64, bool, nil), giving what encoding/json would give for their
// encoding. It knows the shapes it can fill exactly; for anything else
// (custom unmarshalers, ",string" fields, keys that match a field only
// without regard to case, numbers an integer field would refuse) it says
// so, and the caller goes the long way through JSON.
type assigner struct {
	// structs maps each struct type reachable from the input type to its
	// fields by JSON name; nil for a struct type it cannot fill.
	structs map[reflect.Type]map[string]int
	// selfDecoding holds the types reachable from the input type that
	// decode themselves (see unmarshalsItself), which the assigner leaves
	// to encoding/json: asked once per type, not per value assigned.
	selfDecoding map[reflect.Type]bool
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// newAssigner plans the struct types reachable from t.
func newAssigner(t reflect.Type) *assigner {
	a := &assigner{structs: map[reflect.Type]map[string]int{}, selfDecoding: map[reflect.Type]bool{}}
	a.plan(t)
	return a
}

// plan records what the assigner needs to know of t and of the types
// reachable from it: every type it assigns is planned first.
func (a *assigner) plan(t reflect.Type) {
	if unmarshalsItself(t) {
		a.selfDecoding[t] = true
		return
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array:
		a.plan(t.Elem())
	case reflect.Map:
		a.plan(t.Elem())
	case reflect.Struct:
		if _, seen := a.structs[t]; seen {
			return
		}
		a.structs[t] = nil // for now: recursive types see it while planned
		fields := map[string]int{}
		for i := range t.NumField() {
			f := t.Field(i)
			if f.Anonymous {
				return // embedded fields follow encoding/json's own rules: not here
			}
			if !f.IsExported() {
				continue
			}
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" && opts == "" {
				continue
			}
			if strings.Contains(","+opts+",", ",string,") {
				return
			}
			if name == "" {
				name = f.Name
			}
			if _, dup := fields[name]; dup {
				return // encoding/json drops both: not here
			}
			fields[name] = i
			a.plan(f.Type)
		}
		a.structs[t] = fields
	}
}

// assign sets dst, a zero value, from v, or reports false when it cannot
// be sure to do as encoding/json would (dst is then left half-filled).
func (a *assigner) assign(dst reflect.Value, v any) bool {
	t := dst.Type()
	if a.selfDecoding[t] {
		return false
	}
	if v == nil {
		// null leaves a value as it is, and sets pointers, slices, maps
		// and interfaces to nil: dst is zero already.
		return true
	}
	switch t.Kind() {
	case reflect.Interface:
		if t.NumMethod() != 0 {
			return false
		}
		dst.Set(reflect.ValueOf(v))
		return true
	case reflect.Pointer:
		p := reflect.New(t.Elem())
		if !a.assign(p.Elem(), v) {
			return false
		}
		dst.Set(p)
		return true
	case reflect.String:
		s, ok := v.(string)
		if ok {
			dst.SetString(s)
		}
		return ok
	case reflect.Bool:
		b, ok := v.(bool)
		if ok {
			dst.SetBool(b)
		}
		return ok
	case reflect.Float32, reflect.Float64, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		f, ok := v.(float64)
		return ok && setNumber(dst, f)
	case reflect.Slice:
		items, ok := v.([]any)
		if !ok || t.Elem().Kind() == reflect.Uint8 { // []byte is base64 in JSON
			return false
		}
		s := reflect.MakeSlice(t, len(items), len(items))
		for i, item := range items {
			if !a.assign(s.Index(i), item) {
				return false
			}
		}
		dst.Set(s)
		return true
	case reflect.Map:
		m, ok := v.(map[string]any)
		if !ok || t.Key() != reflect.TypeFor[string]() {
			return false
		}
		out := reflect.MakeMapWithSize(t, len(m))
		elem := reflect.New(t.Elem()).Elem()
		for k, item := range m {
			elem.SetZero()
			if !a.assign(elem, item) {
				return false
			}
			out.SetMapIndex(reflect.ValueOf(k), elem)
		}
		dst.Set(out)
		return true
	case reflect.Struct:
		m, ok := v.(map[string]any)
		fields := a.structs[t]
		if !ok || fields == nil {
			return false
		}
		for k, item := range m {
			index, ok := fields[k]
			if !ok {
				return false // maybe a field under another case, maybe nothing
			}
			if !a.assign(dst.Field(index), item) {
				return false
			}
		}
		return true
	}
	return false
}

// unmarshalsItself reports whether encoding/json lets values of type t
// decode themselves (json.Unmarshaler, encoding.TextUnmarshaler), which
// the assigner leaves to it.
func unmarshalsItself(t reflect.Type) bool {
	return t.Implements(jsonUnmarshaler) || t.Implements(textUnmarshaler) ||
		reflect.PointerTo(t).Implements(jsonUnmarshaler) || reflect.PointerTo(t).Implements(textUnmarshaler)
}

// setNumber sets dst, a number of any kind, to f as encoding/json would
// set it from f's encoding, or reports false when that would fail.
func setNumber(dst reflect.Value, f float64) bool {
	switch dst.Kind() {
	case reflect.Float32, reflect.Float64:
		if dst.OverflowFloat(f) {
			return false
		}
		dst.SetFloat(f)
		return true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		// JSON writes an integral float64 below 1e21 without a fraction or
		// an exponent, which an integer field takes if it fits.
		if f != math.Trunc(f) || f < -(1<<63) || f >= 1<<63 || dst.OverflowInt(int64(f)) {
			return false
		}
		dst.SetInt(int64(f))
		return true
	default: // an unsigned integer
		if f != math.Trunc(f) || math.Signbit(f) || f >= 1<<64 || dst.OverflowUint(uint64(f)) {
			return false
		}
		dst.SetUint(uint64(f))
		return true
	}
}
