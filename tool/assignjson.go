package tool

import (
	"bytes"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/toolwire/toolwire/internal/jsonvalue"
)

// assignJSON sets dst, a zero value, from the JSON text raw, exactly as
// assign sets it from the value jsonvalue.Decode(raw) gives, without
// building that value; it reports false when raw does not decode or when
// assign would report false, and may report false in other cases too
// (dst is then left half-filled, and the caller goes the long way).
func (a *assigner) assignJSON(dst reflect.Value, raw []byte) bool {
	start := jsonvalue.SkipSpace(raw, 0)
	end, err := jsonvalue.Skip(raw, start)
	if err != nil || jsonvalue.End(raw, end) != nil {
		return false
	}
	return a.assignSpan(dst, raw, start, end)
}

// assignSpan is assignJSON for the JSON value data[start:end], whose
// syntax is known to be valid. Every number it meets is parsed as Decode
// parses it, so a number out of range is refused here as there.
func (a *assigner) assignSpan(dst reflect.Value, data []byte, start, end int) bool {
	t := dst.Type()
	if a.selfDecoding[t] {
		return false
	}
	c := data[start]
	if c == 'n' {
		return true // as assign does with nil: dst is zero already
	}
	switch t.Kind() {
	case reflect.Interface:
		if t.NumMethod() != 0 {
			return false
		}
		v, err := jsonvalue.Decode(data[start:end])
		if err != nil {
			return false
		}
		dst.Set(reflect.ValueOf(v))
		return true
	case reflect.Pointer:
		p := reflect.New(t.Elem())
		if !a.assignSpan(p.Elem(), data, start, end) {
			return false
		}
		dst.Set(p)
		return true
	case reflect.String:
		if c != '"' {
			return false
		}
		s, ok := decodeString(data[start:end])
		if ok {
			dst.SetString(s)
		}
		return ok
	case reflect.Bool:
		if c != 't' && c != 'f' {
			return false
		}
		dst.SetBool(c == 't')
		return true
	case reflect.Float32, reflect.Float64, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if c != '-' && (c < '0' || c > '9') {
			return false
		}
		f, err := strconv.ParseFloat(string(data[start:end]), 64)
		return err == nil && setNumber(dst, f)
	case reflect.Slice:
		if c != '[' || t.Elem().Kind() == reflect.Uint8 { // []byte is base64 in JSON
			return false
		}
		k := 0
		if _, err := jsonvalue.Array(data, start, func(int, int) { k++ }); err != nil {
			return false
		}
		s := reflect.MakeSlice(t, k, k)
		i, ok := 0, true
		_, err := jsonvalue.Array(data, start, func(vs, ve int) {
			ok = ok && a.assignSpan(s.Index(i), data, vs, ve)
			i++
		})
		if err != nil || !ok {
			return false
		}
		dst.Set(s)
		return true
	case reflect.Map:
		if c != '{' || t.Key() != reflect.TypeFor[string]() {
			return false
		}
		out := reflect.MakeMap(t)
		elem := reflect.New(t.Elem()).Elem()
		ok := true
		_, err := jsonvalue.Object(data, start, func(key string, vs, ve int) {
			if !ok {
				return
			}
			elem.SetZero()
			if ok = a.assignSpan(elem, data, vs, ve); ok {
				// A repeated key replaces the value before it, as in
				// the decoded map.
				out.SetMapIndex(reflect.ValueOf(strings.Clone(key)), elem)
			}
		})
		if err != nil || !ok {
			return false
		}
		dst.Set(out)
		return true
	case reflect.Struct:
		fields := a.structs[t]
		if c != '{' || fields == nil {
			return false
		}
		ok := true
		_, err := jsonvalue.Object(data, start, func(key string, vs, ve int) {
			if !ok {
				return
			}
			index, known := fields[key]
			if !known {
				ok = false // maybe a field under another case, maybe nothing
				return
			}
			// A repeated key: the last value alone counts, as in the
			// decoded map.
			f := dst.Field(index)
			f.SetZero()
			ok = a.assignSpan(f, data, vs, ve)
		})
		return err == nil && ok
	}
	return false
}

// decodeString decodes the JSON string lit as Decode does, into a copy:
// a string without escapes that is valid UTF-8 is its bytes between the
// quotes.
func decodeString(lit []byte) (string, bool) {
	if body := lit[1 : len(lit)-1]; bytes.IndexByte(body, '\\') < 0 && utf8.Valid(body) {
		return string(body), true
	}
	s, err := jsonvalue.String(lit)
	return s, err == nil
}
