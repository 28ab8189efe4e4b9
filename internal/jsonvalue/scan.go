package jsonvalue

import (
	"strings"
	"unsafe"
)

// This file reads JSON without building values: it checks syntax as
// encoding/json does (same errors) and reports where values are, so that a
// caller can take the parts it needs as sub-slices of its input, in one
// pass and without allocating.

// view returns data as a string without copying. The scanner only reads
// it, and nothing it returns outlives the call except spans of data and
// strings the caller is told not to keep.
func view(data []byte) string { return unsafe.String(unsafe.SliceData(data), len(data)) }

// TypeName names the type of the JSON value that starts with c as
// encoding/json's type errors do: "object", "array", "string", "number",
// "bool" or "null".
func TypeName(c byte) string {
	switch c {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "bool"
	case 'n':
		return "null"
	}
	return "number"
}

// SkipSpace returns the index of the first byte at or after i that is not
// JSON white space, or len(data).
func SkipSpace(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// Skip checks the syntax of the JSON value that starts at data[i] (white
// space already skipped) and returns the index just after it. Errors are
// *SyntaxError with encoding/json's message and offset (relative to data).
// Numbers are checked against the grammar only, not for range.
func Skip(data []byte, i int) (int, error) {
	d := decoder{s: view(data), i: i}
	if err := d.skip(); err != nil {
		return 0, err
	}
	return d.i, nil
}

// Object reads the JSON object that starts at data[i] (white space already
// skipped), checking the syntax of all of it, and calls member for each
// member in order with its key and the span data[start:end] of its value.
// It returns the index just after the object. The key is only valid during
// the call (it may share data's memory); keys with escapes are unescaped.
// Syntax errors are reported after the members before them were visited, so
// a caller should act on what it saw only once Object succeeds.
func Object(data []byte, i int, member func(key string, start, end int)) (int, error) {
	d := decoder{s: view(data), i: i}
	if d.i >= len(d.s) {
		return 0, d.unexpectedEnd()
	}
	if d.s[d.i] != '{' {
		return 0, d.invalid(d.i, "looking for beginning of object")
	}
	if err := d.walk(member); err != nil {
		return 0, err
	}
	return d.i, nil
}

// String decodes the JSON string that is all of data (as Skip found it),
// as json.Unmarshal into a string does. The result is a copy.
func String(data []byte) (string, error) {
	if len(data) < 2 || data[0] != '"' {
		return "", &SyntaxError{Msg: "not a JSON string"}
	}
	d := decoder{s: view(data)}
	s, err := d.str()
	if err != nil {
		return "", err
	}
	return strings.Clone(s), nil // one allocation; s may share data's memory
}

// skip moves d.i past the value at d.i, checking its syntax.
func (d *decoder) skip() error {
	if d.i >= len(d.s) {
		return d.unexpectedEnd()
	}
	switch c := d.s[d.i]; {
	case c == '"':
		return d.skipStr()
	case c == '-' || '0' <= c && c <= '9':
		return d.numberEnd()
	case c == 't':
		return d.literal("true")
	case c == 'f':
		return d.literal("false")
	case c == 'n':
		return d.literal("null")
	case c == '{' || c == '[':
		return d.walk(nil)
	}
	return d.invalid(d.i, "looking for beginning of value")
}

// walk moves d.i past the object or array at d.i, checking its syntax,
// and calls visit, unless nil, with each member's key (unescaped; "" in
// an array) and the span of its value.
func (d *decoder) walk(visit func(key string, start, end int)) error {
	open := d.s[d.i]
	d.depth++
	if d.depth > maxDepth {
		return d.invalid(d.i, "exceeded max depth")
	}
	closer, next := byte(']'), "after array element"
	if open == '{' {
		closer, next = '}', "after object key:value pair"
	}
	d.i++
	d.skipSpace()
	if d.i < len(d.s) && d.s[d.i] == closer {
		d.i++
		d.depth--
		return nil
	}
	for {
		var key string
		if open == '{' {
			if d.i >= len(d.s) {
				return d.unexpectedEnd()
			}
			if d.s[d.i] != '"' {
				return d.invalid(d.i, "looking for beginning of object key string")
			}
			var err error
			if visit != nil {
				key, err = d.str()
			} else {
				err = d.skipStr()
			}
			if err != nil {
				return err
			}
			d.skipSpace()
			if d.i >= len(d.s) {
				return d.unexpectedEnd()
			}
			if d.s[d.i] != ':' {
				return d.invalid(d.i, "after object key")
			}
			d.i++
			d.skipSpace()
		}
		start := d.i
		if err := d.skip(); err != nil {
			return err
		}
		if visit != nil {
			visit(key, start, d.i)
		}
		d.skipSpace()
		if d.i >= len(d.s) {
			return d.unexpectedEnd()
		}
		c := d.s[d.i]
		d.i++
		if c == closer {
			d.depth--
			return nil
		}
		if c != ',' {
			return d.invalid(d.i-1, next)
		}
		d.skipSpace()
	}
}

// skipStr moves d.i past the string at d.i, checking its escapes.
func (d *decoder) skipStr() error {
	s := d.s
	i := stringSpan(s, d.i+1)
	for i < len(s) {
		switch c := s[i]; {
		case c == '"':
			d.i = i + 1
			return nil
		case c == '\\':
			i++
			if i >= len(s) {
				return d.invalid(i, "in string escape code")
			}
			switch s[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if _, err := d.hex4(i + 1); err != nil {
					return err
				}
				i += 4
			default:
				return d.invalid(i, "in string escape code")
			}
			i++
		case c < 0x20:
			return d.invalid(i, "in string literal")
		default:
			i++ // invalid UTF-8 is read as U+FFFD, not refused
		}
	}
	return d.unexpectedEnd()
}

// End checks that only white space follows a top-level value that ends at
// data[i], as encoding/json does.
func End(data []byte, i int) error {
	d := decoder{s: view(data), i: i}
	d.skipSpace()
	if d.i < len(d.s) {
		return d.invalid(d.i, "after top-level value")
	}
	return nil
}

// Array reads the JSON array that starts at data[i] (white space already
// skipped), checking the syntax of all of it, and calls elem with the span
// data[start:end] of each element in order. It returns the index just after
// the array.
func Array(data []byte, i int, elem func(start, end int)) (int, error) {
	d := decoder{s: view(data), i: i}
	if d.i >= len(d.s) {
		return 0, d.unexpectedEnd()
	}
	if d.s[d.i] != '[' {
		return 0, d.invalid(d.i, "looking for beginning of array")
	}
	if err := d.walk(func(_ string, start, end int) { elem(start, end) }); err != nil {
		return 0, err
	}
	return d.i, nil
}
