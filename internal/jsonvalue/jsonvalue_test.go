package jsonvalue_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/internal/jsonvalue"
)

func TestDecode(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want any
	}{
		{"null", `null`, nil},
		{"true", ` true `, true},
		{"false", "\tfalse\n", false},
		{"zero", `0`, 0.0},
		{"negative zero", `-0`, math.Copysign(0, -1)},
		{"integer", `-12345`, -12345.0},
		{"fraction", `3.25`, 3.25},
		{"exponent", `1E+2`, 100.0},
		{"small exponent", `25e-1`, 2.5},
		{"tiny underflows to zero", `1e-400`, 0.0},
		{"string", `"hello"`, "hello"},
		{"empty string", `""`, ""},
		{"escapes", `"a\"b\\c\/d\b\f\n\r\t"`, "a\"b\\c/d\b\f\n\r\t"},
		{"unicode escape", `"\u00e9\u4e2D"`, "é中"},
		{"surrogate pair", `"\ud83d\ude00"`, "😀"},
		{"lone high surrogate", `"\ud83dx"`, "\ufffdx"},
		{"high surrogate then non-low escape", `"\ud83d\u0041"`, "\ufffdA"},
		{"lone low surrogate", `"\ude00"`, "\ufffd"},
		{"raw UTF-8", `"héllo 世界"`, "héllo 世界"},
		{"invalid UTF-8 byte", "\"a\xffb\"", "a\ufffdb"},
		{"truncated UTF-8", "\"\xe4\xb8\"", "\ufffd\ufffd"},
		{"UTF-8 encoded surrogate", "\"\xed\xa0\x80\"", "\ufffd\ufffd\ufffd"},
		{"invalid UTF-8 and escape", "\"\xff\\n\"", "\ufffd\n"},
		{"empty array", `[]`, []any{}},
		{"array", `[1, "a", true, null, [], {}]`, []any{1.0, "a", true, nil, []any{}, map[string]any{}}},
		{"empty object", `{ }`, map[string]any{}},
		{"object", `{"a":1,"b":{"c":[2]}}`, map[string]any{"a": 1.0, "b": map[string]any{"c": []any{2.0}}}},
		{"duplicate keys: last wins", `{"a":1,"a":{"x":2},"a":{"y":3}}`, map[string]any{"a": map[string]any{"y": 3.0}}},
		{"escaped key", `{"a\u0062":1}`, map[string]any{"ab": 1.0}},
		{"many members", `{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10,"k":11,"l":12,"m":13,"n":14,"o":15,"p":16,"q":17,"r":18}`,
			map[string]any{"a": 1.0, "b": 2.0, "c": 3.0, "d": 4.0, "e": 5.0, "f": 6.0, "g": 7.0, "h": 8.0, "i": 9.0, "j": 10.0, "k": 11.0, "l": 12.0, "m": 13.0, "n": 14.0, "o": 15.0, "p": 16.0, "q": 17.0, "r": 18.0}},
		{"nested arrays and objects share the stack", `[[1,2],{"a":[3,{"b":4}]},5]`,
			[]any{[]any{1.0, 2.0}, map[string]any{"a": []any{3.0, map[string]any{"b": 4.0}}}, 5.0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := jsonvalue.Decode([]byte(tt.in))
			if err != nil {
				t.Fatalf("Decode(%q): %v", tt.in, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Decode(%q) = %#v, want %#v", tt.in, got, tt.want)
			}
			if f, ok := tt.want.(float64); ok && math.Signbit(f) != math.Signbit(got.(float64)) {
				t.Fatalf("Decode(%q) = %v: wrong sign", tt.in, got)
			}
			agreeWithStdlib(t, []byte(tt.in))
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		in     string
		msg    string
		offset int64
	}{
		{``, "unexpected end of JSON input", 0},
		{`   `, "unexpected end of JSON input", 3},
		{`x`, "invalid character 'x' looking for beginning of value", 1},
		{`{"a":1,}`, "invalid character '}' looking for beginning of object key string", 8},
		{`[1,]`, "invalid character ']' looking for beginning of value", 4},
		{`{"a" 1}`, "invalid character '1' after object key", 6},
		{`{"a":1 "b":2}`, "invalid character '\"' after object key:value pair", 8},
		{`[1 2]`, "invalid character '2' after array element", 4},
		{`{} {}`, "invalid character '{' after top-level value", 4},
		{`01`, "invalid character '1' after top-level value", 2},
		{`-`, "invalid character ' ' in numeric literal", 1},
		{`-a`, "invalid character 'a' in numeric literal", 2},
		{`1.`, "invalid character ' ' after decimal point in numeric literal", 2},
		{`1.e5`, "invalid character 'e' after decimal point in numeric literal", 3},
		{`1e`, "invalid character ' ' in exponent of numeric literal", 2},
		{`1e+x`, "invalid character 'x' in exponent of numeric literal", 4},
		{`+1`, "invalid character '+' looking for beginning of value", 1},
		{`tru`, "invalid character ' ' in literal true (expecting 'e')", 3},
		{`nul1`, "invalid character '1' in literal null (expecting 'l')", 4},
		{`fals`, "invalid character ' ' in literal false (expecting 'e')", 4},
		{`"abc`, "unexpected end of JSON input", 4},
		{"\"a\tb\"", "invalid character '\\t' in string literal", 3},
		{`"\x"`, "invalid character 'x' in string escape code", 3},
		{`"\`, "invalid character ' ' in string escape code", 2},
		{`"\u12g4"`, "invalid character 'g' in \\u hexadecimal character escape", 6},
		{`"\u12`, "invalid character ' ' in \\u hexadecimal character escape", 5},
		{`"\ud83d\u12"`, "invalid character '\"' in \\u hexadecimal character escape", 12},
		{`'a'`, "invalid character '\\'' looking for beginning of value", 1},
		{"\xff", "invalid character 'ÿ' looking for beginning of value", 1},
		{`{"a":[1,{"b":`, "unexpected end of JSON input", 13},
		{strings.Repeat("[", 10001), "invalid character '[' exceeded max depth", 10001},
		{`[1e400, x]`, "invalid character 'x' looking for beginning of value", 9},
		{`[1e400]`, "number 1e400 is out of the range of a 64-bit float", 6},
	}
	for _, tt := range tests {
		name := tt.in
		if len(name) > 20 {
			name = name[:20]
		}
		t.Run(name, func(t *testing.T) {
			v, err := jsonvalue.Decode([]byte(tt.in))
			var syn *jsonvalue.SyntaxError
			if !errors.As(err, &syn) {
				t.Fatalf("Decode(%q) = %v, %v; want a *SyntaxError", tt.in, v, err)
			}
			if syn.Msg != tt.msg || syn.Offset != tt.offset {
				t.Fatalf("Decode(%q): error %q at %d, want %q at %d", tt.in, syn.Msg, syn.Offset, tt.msg, tt.offset)
			}
			agreeWithStdlib(t, []byte(tt.in))
		})
	}
}

func TestDecodeDeepNesting(t *testing.T) {
	deep := strings.Repeat("[", 10000) + strings.Repeat("]", 10000)
	agreeWithStdlib(t, []byte(deep))
	deep = strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000)
	agreeWithStdlib(t, []byte(deep))
}

// stdlibMessages reports whether encoding/json is the classic
// implementation, whose error messages and offsets Decode copies (built
// with GOEXPERIMENT=jsonv2 it words them differently).
func stdlibMessages() bool {
	var v any
	err := json.Unmarshal([]byte(`x`), &v)
	var syn *json.SyntaxError
	return errors.As(err, &syn) && syn.Offset == 1 && syn.Error() == "invalid character 'x' looking for beginning of value"
}

// agreeWithStdlib checks that Decode succeeds when json.Unmarshal into an
// any does, with the same value, and fails when it fails, with the same
// syntax error.
func agreeWithStdlib(t *testing.T, data []byte) {
	t.Helper()
	var want any
	wantErr := json.Unmarshal(data, &want)
	got, err := jsonvalue.Decode(data)
	if (err == nil) != (wantErr == nil) {
		t.Fatalf("Decode(%q) = %v, %v; json.Unmarshal: %v, %v", data, got, err, want, wantErr)
	}
	if err != nil {
		var syn *jsonvalue.SyntaxError
		if !errors.As(err, &syn) {
			t.Fatalf("Decode(%q): error %T, want *SyntaxError", data, err)
		}
		var stdSyn *json.SyntaxError
		if errors.As(wantErr, &stdSyn) && stdlibMessages() {
			if syn.Msg != stdSyn.Error() || syn.Offset != stdSyn.Offset {
				t.Fatalf("Decode(%q): error %q at %d; json.Unmarshal: %q at %d", data, syn.Msg, syn.Offset, stdSyn.Error(), stdSyn.Offset)
			}
		}
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Decode(%q) = %#v; json.Unmarshal: %#v", data, got, want)
	}
	enc, err := jsonvalue.Append(nil, got)
	if err != nil {
		t.Fatalf("Append(Decode(%q)): %v", data, err)
	}
	wantEnc, err := json.Marshal(want)
	if err != nil {
		t.Fatalf("json.Marshal(%#v): %v", want, err)
	}
	if !bytes.Equal(enc, wantEnc) {
		t.Fatalf("Append(Decode(%q)) = %s; json.Marshal: %s", data, enc, wantEnc)
	}
}

func FuzzDecodeMatchesStdlib(f *testing.F) {
	for _, s := range []string{
		``, `null`, `true`, `false`, `0`, `-0.5e-3`, `1e400`, `"x"`, `"\ud83d\ude00"`, "\"\xff\"",
		`[]`, `{}`, `[1,[2,{"a":null}]]`, `{"a":1,"a":2}`, `{"path":"/tmp/x","opts":{"depth":2},"tags":["a","b"]}`,
		`{"a":"\u003c\u2028&"}`, `[1,]`, `{"a" 1}`, `tru`, `"\u12`, `01`, `1.`, ` {"a" : [ ] } `,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		agreeWithStdlib(t, data)
		agreeScanWithStdlib(t, data)
	})
}

func TestAppend(t *testing.T) {
	values := []any{
		nil, true, false, 0.0, math.Copysign(0, -1), 1.0, -1.5, 1e20, 1e21, 1e-6, 1e-7, 123456789.125, math.MaxFloat64, math.SmallestNonzeroFloat64,
		"", "plain", "<a href=\"x\">&amp;</a>", "tab\tnewline\n\x00\x1f\x7f", "\u2028\u2029", "bad \xff utf8", "é中😀",
		[]any{}, []any(nil), map[string]any{}, map[string]any(nil),
		map[string]any{"b": 1.0, "a": []any{"x", map[string]any{"z": nil, "y": false}}, "<": ">"},
		map[string]any{"n": 3, "s": []string{"a"}, "raw": json.RawMessage(` {"k" : 1} `)},
	}
	for _, v := range values {
		got, err := jsonvalue.Append([]byte("prefix:"), v)
		if err != nil {
			t.Fatalf("Append(%#v): %v", v, err)
		}
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != "prefix:"+string(want) {
			t.Errorf("Append(%#v) = %s, want prefix:%s", v, got, want)
		}
	}
	cyclic := map[string]any{}
	cyclic["self"] = []any{cyclic}
	for _, bad := range []any{cyclic, math.NaN(), math.Inf(1), map[string]any{"a": []any{math.Inf(-1)}}, map[string]any{"f": func() {}}} {
		if _, err := jsonvalue.Append(nil, bad); err == nil {
			t.Errorf("Append(%#v) succeeded, want an error", bad)
		}
	}
}

const benchCall = `{"path":"/tmp/data.csv","name":"run","verbose":true,"limit":50,"tags":["a","b"],"ratio":0.5,"format":"csv","opts":{"depth":2,"follow":false}}`

func BenchmarkDecode(b *testing.B) {
	raw := []byte(benchCall)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := jsonvalue.Decode(raw); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkStdlibUnmarshal(b *testing.B) {
	raw := []byte(benchCall)
	b.ReportAllocs()
	for b.Loop() {
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppend(b *testing.B) {
	v, err := jsonvalue.Decode([]byte(benchCall))
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 0, 512)
	b.ReportAllocs()
	for b.Loop() {
		if buf, err = jsonvalue.Append(buf[:0], v); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkStdlibMarshal(b *testing.B) {
	v, err := jsonvalue.Decode([]byte(benchCall))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := json.Marshal(v); err != nil {
			b.Fatal(err)
		}
	}
}
