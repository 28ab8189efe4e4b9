// Package jsonvalue decodes and encodes JSON values in the generic form
// encoding/json uses for an any (map[string]any, []any, string, float64,
// bool and nil) with far fewer allocations: no reflection, strings without
// escapes taken as substrings of one copy of the input, and maps and
// slices made at their final size.
//
// Decode gives exactly what json.Unmarshal into an any gives, and fails
// exactly when it fails; Append writes exactly what json.Marshal writes.
// The fuzz tests hold both to that.
package jsonvalue

import (
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// maxDepth is encoding/json's limit on nested arrays and objects.
const maxDepth = 10000

// SyntaxError reports input Decode cannot decode: malformed JSON, with the
// message and offset encoding/json's SyntaxError would give, or a number
// too large for a float64 (encoding/json fails on it too).
type SyntaxError struct {
	// Offset is the number of bytes read when the error was found; for
	// an invalid character, the offset just after it.
	Offset int64
	// Msg says what is wrong ("invalid character 'x' looking for
	// beginning of value", "unexpected end of JSON input").
	Msg string
}

func (e *SyntaxError) Error() string { return e.Msg }

// UnexpectedEnd is the message of a SyntaxError for input that ends
// before the value does.
const UnexpectedEnd = "unexpected end of JSON input"

// Decode decodes one JSON value, with optional white space around it, as
// json.Unmarshal into an any does: objects become map[string]any (the last
// of duplicate keys wins), arrays []any, numbers float64, and invalid UTF-8
// in strings becomes U+FFFD. Errors are *SyntaxError.
//
// The strings in the result share the memory of one copy of data.
func Decode(data []byte) (any, error) {
	var stack [16]member
	d := decoder{s: string(data)}
	d.skipSpace()
	v, _, err := d.value(stack[:0])
	if err != nil {
		return nil, err
	}
	d.skipSpace()
	if d.i < len(d.s) {
		return nil, d.invalid(d.i, "after top-level value")
	}
	if d.rangeErr != nil {
		return nil, d.rangeErr
	}
	return v, nil
}

// member is an object member or (without key) an array element read but
// not yet stored.
type member struct {
	key   string
	value any
}

// decoder reads one value from s.
//
// The methods that read arrays and objects push the members and elements
// they read on a stack shared by all levels, passed in and returned (not
// kept in the decoder, so that its first part can live on Decode's stack
// frame), and make each map and slice once, at its final size.
type decoder struct {
	s        string
	i        int
	depth    int
	rangeErr *SyntaxError // the first number out of range
}

func (d *decoder) skipSpace() {
	for d.i < len(d.s) {
		switch d.s[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// invalid reports the character at i, in the words of encoding/json's
// scanner. At the end of the input the scanner sees a space.
func (d *decoder) invalid(i int, context string) error {
	if i >= len(d.s) {
		return &SyntaxError{Offset: int64(len(d.s)), Msg: "invalid character ' ' " + context}
	}
	return &SyntaxError{Offset: int64(i) + 1, Msg: "invalid character " + quoteChar(d.s[i]) + " " + context}
}

func (d *decoder) unexpectedEnd() error {
	return &SyntaxError{Offset: int64(len(d.s)), Msg: UnexpectedEnd}
}

// quoteChar formats c as encoding/json's error messages do.
func quoteChar(c byte) string {
	if c == '\'' {
		return `'\''`
	}
	if c == '"' {
		return `'"'`
	}
	s := strconv.Quote(string(rune(c)))
	return "'" + s[1:len(s)-1] + "'"
}

// value reads the value at d.i (white space already skipped). It reads
// arrays and objects itself, recursing only into itself: the compiler's
// escape analysis then keeps Decode's first stack off the heap.
func (d *decoder) value(stack []member) (any, []member, error) {
	if d.i >= len(d.s) {
		return nil, stack, d.unexpectedEnd()
	}
	var err error
	switch c := d.s[d.i]; {
	case c == '"':
		s, err := d.str()
		if err != nil {
			return nil, stack, err
		}
		return s, stack, nil
	case c == '-' || '0' <= c && c <= '9':
		v, err := d.number()
		return v, stack, err
	case c == 't':
		return true, stack, d.literal("true")
	case c == 'f':
		return false, stack, d.literal("false")
	case c == 'n':
		return nil, stack, d.literal("null")

	case c == '{':
		d.depth++
		if d.depth > maxDepth {
			return nil, stack, d.invalid(d.i, "exceeded max depth")
		}
		d.i++
		d.skipSpace()
		if d.i < len(d.s) && d.s[d.i] == '}' {
			d.i++
			d.depth--
			return map[string]any{}, stack, nil
		}
		base := len(stack)
		for {
			if d.i >= len(d.s) {
				return nil, stack, d.unexpectedEnd()
			}
			if d.s[d.i] != '"' {
				return nil, stack, d.invalid(d.i, "looking for beginning of object key string")
			}
			key, err := d.str()
			if err != nil {
				return nil, stack, err
			}
			d.skipSpace()
			if d.i >= len(d.s) {
				return nil, stack, d.unexpectedEnd()
			}
			if d.s[d.i] != ':' {
				return nil, stack, d.invalid(d.i, "after object key")
			}
			d.i++
			d.skipSpace()
			var v any
			v, stack, err = d.value(stack)
			if err != nil {
				return nil, stack, err
			}
			stack = append(stack, member{key, v})
			d.skipSpace()
			if d.i >= len(d.s) {
				return nil, stack, d.unexpectedEnd()
			}
			c := d.s[d.i]
			d.i++
			if c == '}' {
				break
			}
			if c != ',' {
				return nil, stack, d.invalid(d.i-1, "after object key:value pair")
			}
			d.skipSpace()
		}
		ms := stack[base:]
		m := make(map[string]any, len(ms))
		for _, kv := range ms {
			m[kv.key] = kv.value
		}
		clear(ms)
		d.depth--
		return m, stack[:base], nil

	case c == '[':
		d.depth++
		if d.depth > maxDepth {
			return nil, stack, d.invalid(d.i, "exceeded max depth")
		}
		d.i++
		d.skipSpace()
		if d.i < len(d.s) && d.s[d.i] == ']' {
			d.i++
			d.depth--
			return []any{}, stack, nil
		}
		base := len(stack)
		for {
			var v any
			v, stack, err = d.value(stack)
			if err != nil {
				return nil, stack, err
			}
			stack = append(stack, member{value: v})
			d.skipSpace()
			if d.i >= len(d.s) {
				return nil, stack, d.unexpectedEnd()
			}
			c := d.s[d.i]
			d.i++
			if c == ']' {
				break
			}
			if c != ',' {
				return nil, stack, d.invalid(d.i-1, "after array element")
			}
			d.skipSpace()
		}
		es := stack[base:]
		a := make([]any, len(es))
		for i := range es {
			a[i] = es[i].value
		}
		clear(es)
		d.depth--
		return a, stack[:base], nil
	}
	return nil, stack, d.invalid(d.i, "looking for beginning of value")
}

func (d *decoder) literal(lit string) error {
	for k := 1; k < len(lit); k++ {
		j := d.i + k
		if j >= len(d.s) || d.s[j] != lit[k] {
			return d.invalid(j, "in literal "+lit+" (expecting "+quoteChar(lit[k])+")")
		}
	}
	d.i += len(lit)
	return nil
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// number reads a number with the grammar of RFC 8259 and converts it with
// strconv.ParseFloat, as encoding/json does.
func (d *decoder) number() (any, error) {
	start := d.i
	if err := d.numberEnd(); err != nil {
		return nil, err
	}
	s, i := d.s, d.i
	f, err := strconv.ParseFloat(s[start:i], 64)
	if err != nil {
		// Only a range error is possible here. encoding/json checks the
		// syntax of the whole input first, so a syntax error later on
		// takes precedence: keep reading.
		if d.rangeErr == nil {
			lit := s[start:i]
			if len(lit) > 40 {
				lit = lit[:37] + "..."
			}
			d.rangeErr = &SyntaxError{Offset: int64(i), Msg: "number " + lit + " is out of the range of a 64-bit float"}
		}
		return nil, nil
	}
	return f, nil
}

// numberEnd moves d.i past the number at d.i, checking its grammar.
func (d *decoder) numberEnd() error {
	s, i := d.s, d.i
	if s[i] == '-' {
		i++
		if i >= len(s) || !isDigit(s[i]) {
			return d.invalid(i, "in numeric literal")
		}
	}
	if s[i] == '0' {
		i++
	} else {
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	}
	if i < len(s) && s[i] == '.' {
		i++
		if i >= len(s) || !isDigit(s[i]) {
			return d.invalid(i, "after decimal point in numeric literal")
		}
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i >= len(s) || !isDigit(s[i]) {
			return d.invalid(i, "in exponent of numeric literal")
		}
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	}
	d.i = i
	return nil
}

// str reads the string at d.i.
func (d *decoder) str() (string, error) {
	s := d.s
	start := d.i + 1
	i := asciiSpan(s, start)
	for i < len(s) {
		c := s[i]
		if c == '"' {
			d.i = i + 1
			return s[start:i], nil
		}
		if c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			break
		}
		i++
	}
	return d.strSlow(start, i)
}

// strSlow reads the rest of a string that has escapes, control characters
// or non-ASCII bytes, from i; start is just after the opening quote.
func (d *decoder) strSlow(start, i int) (string, error) {
	s := d.s
	var small [64]byte
	buf := small[:0]
	copied := false // buf holds the string up to lit; until then it is s[start:i]
	lit := start    // the bytes from lit to i are yet to be copied to buf
	for {
		if i >= len(s) {
			return "", d.unexpectedEnd()
		}
		c := s[i]
		switch {
		case c == '"':
			d.i = i + 1
			if !copied {
				return s[start:i], nil
			}
			buf = append(buf, s[lit:i]...)
			return string(buf), nil
		case c == '\\':
			if !copied {
				copied = true
				if n := quotedLen(s, start) + utf8.UTFMax; n > cap(buf) {
					buf = make([]byte, 0, n)
				}
			}
			buf = append(buf, s[lit:i]...)
			i++
			if i >= len(s) {
				return "", d.invalid(i, "in string escape code")
			}
			switch e := s[i]; e {
			case '"', '\\', '/':
				buf = append(buf, e)
			case 'b':
				buf = append(buf, '\b')
			case 'f':
				buf = append(buf, '\f')
			case 'n':
				buf = append(buf, '\n')
			case 'r':
				buf = append(buf, '\r')
			case 't':
				buf = append(buf, '\t')
			case 'u':
				r, err := d.hex4(i + 1)
				if err != nil {
					return "", err
				}
				i += 4
				if utf16.IsSurrogate(r) {
					// A pair if a \u escape of the other half follows;
					// otherwise U+FFFD, and what follows is read as usual.
					r2 := getu4(s, i+1)
					if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
						r = dec
						i += 6
					} else {
						r = utf8.RuneError
					}
				}
				buf = utf8.AppendRune(buf, r)
			default:
				return "", d.invalid(i, "in string escape code")
			}
			i++
			lit = i
		case c < 0x20:
			return "", d.invalid(i, "in string literal")
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			if r != utf8.RuneError || size != 1 {
				i += size
				continue
			}
			// Invalid UTF-8: each bad byte becomes U+FFFD.
			if !copied {
				copied = true
				if n := quotedLen(s, start) + 2*utf8.UTFMax; n > cap(buf) {
					buf = make([]byte, 0, n)
				}
			}
			buf = append(buf, s[lit:i]...)
			buf = utf8.AppendRune(buf, utf8.RuneError)
			i++
			lit = i
		}
	}
}

// quotedLen estimates the bytes left in the string that contains i: up to
// its closing quote, or the end of the input.
func quotedLen(s string, i int) int {
	for j := i; j < len(s); j++ {
		switch s[j] {
		case '"':
			return j - i
		case '\\':
			j++
		}
	}
	return len(s) - i
}

func hexVal(c byte) rune {
	switch {
	case '0' <= c && c <= '9':
		return rune(c - '0')
	case 'a' <= c && c <= 'f':
		return rune(c - 'a' + 10)
	case 'A' <= c && c <= 'F':
		return rune(c - 'A' + 10)
	}
	return -1
}

// hex4 reads the four hex digits of a \u escape starting at i.
func (d *decoder) hex4(i int) (rune, error) {
	var r rune
	for k := range 4 {
		if i+k >= len(d.s) {
			return 0, d.invalid(i+k, `in \u hexadecimal character escape`)
		}
		v := hexVal(d.s[i+k])
		if v < 0 {
			return 0, d.invalid(i+k, `in \u hexadecimal character escape`)
		}
		r = r<<4 | v
	}
	return r, nil
}

// getu4 decodes a \uXXXX escape at i, or returns -1.
func getu4(s string, i int) rune {
	if i+6 > len(s) || s[i] != '\\' || s[i+1] != 'u' {
		return -1
	}
	var r rune
	for k := i + 2; k < i+6; k++ {
		v := hexVal(s[k])
		if v < 0 {
			return -1
		}
		r = r<<4 | v
	}
	return r
}
