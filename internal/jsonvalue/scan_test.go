package jsonvalue_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/internal/jsonvalue"
)

// agreeScanWithStdlib checks Skip and Object against encoding/json: Skip
// accepts exactly what json.Valid accepts, with the same syntax error,
// and Object finds the members json.Unmarshal into a map of raw messages
// finds.
func agreeScanWithStdlib(t *testing.T, data []byte) {
	t.Helper()
	var raw json.RawMessage
	wantErr := json.Unmarshal(data, &raw)
	i := jsonvalue.SkipSpace(data, 0)
	end, err := jsonvalue.Skip(data, i)
	if err == nil {
		err = jsonvalue.End(data, end)
	}
	if (err == nil) != (wantErr == nil) {
		t.Fatalf("Skip(%q): %v; json.Valid: %v", data, err, wantErr)
	}
	var syn *jsonvalue.SyntaxError
	var stdSyn *json.SyntaxError
	if errors.As(err, &syn) && errors.As(wantErr, &stdSyn) && stdlibMessages() {
		if syn.Msg != stdSyn.Error() || syn.Offset != stdSyn.Offset {
			t.Fatalf("Skip(%q): error %q at %d; encoding/json: %q at %d", data, syn.Msg, syn.Offset, stdSyn.Error(), stdSyn.Offset)
		}
	}
	if err == nil && data[i] == '[' {
		var want []json.RawMessage
		if err := json.Unmarshal(data, &want); err != nil {
			t.Fatalf("json.Unmarshal(%q) into a slice: %v", data, err)
		}
		var got []json.RawMessage
		aend, err := jsonvalue.Array(data, i, func(start, end int) { got = append(got, data[start:end]) })
		if err != nil || aend != end || len(got) != len(want) {
			t.Fatalf("Array(%q) = %d, %v, %d elements; want %d, nil, %d", data, aend, err, len(got), end, len(want))
		}
		for k := range want {
			if !bytes.Equal(got[k], want[k]) {
				t.Fatalf("Array(%q): element %d = %s, json.Unmarshal: %s", data, k, got[k], want[k])
			}
		}
	}
	if err != nil || data[i] != '{' {
		return
	}
	var want map[string]json.RawMessage
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatalf("json.Unmarshal(%q) into a map: %v", data, err)
	}
	got := map[string]json.RawMessage{}
	oend, err := jsonvalue.Object(data, i, func(key string, start, end int) {
		got[string([]byte(key))] = data[start:end]
	})
	if err != nil || oend != end {
		t.Fatalf("Object(%q) = %d, %v; want %d, nil", data, oend, err, end)
	}
	if len(got) != len(want) {
		t.Fatalf("Object(%q) found %d members, json.Unmarshal %d", data, len(got), len(want))
	}
	for k, v := range want {
		if !bytes.Equal(got[k], v) {
			t.Fatalf("Object(%q): member %q = %s, json.Unmarshal: %s", data, k, got[k], v)
		}
	}
}

func TestScan(t *testing.T) {
	for _, in := range []string{
		`{}`, ` { "a" : 1 , "b":[true,false,null,{"c":"\u00e9\n"}] } `, `{"a\u0062":"x","ab":"y"}`,
		`{"a":1,"a":2}`, `[1,{"a":[]}]`, `"\ud83d"`, `-0.5e+7`, `{"a":1,}`, `{"a" 1}`, `{1:2}`, `[1 2]`,
		`{"a":"\x"}`, `"\u12"`, `01`, `1.e3`, `-`, `{"a":tru}`, `nul`, "\"a\x01\"", "\"\xff\"", `{`, `[`, `"`, ``,
		`{"a":1} x`, `1e400`, `[]`, ` [ 1 , "a" , [ ] , { } ] `, `[1,]`, `[1 2]`,
	} {
		agreeScanWithStdlib(t, []byte(in))
	}
}

func TestString(t *testing.T) {
	for in, want := range map[string]string{`"plain"`: "plain", `"a\u00e9\n"`: "aé\n", "\"\xff\"": "\ufffd"} {
		got, err := jsonvalue.String([]byte(in))
		if err != nil || got != want {
			t.Errorf("String(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{`1`, `"unterminated`, `"`} {
		if _, err := jsonvalue.String([]byte(in)); err == nil {
			t.Errorf("String(%q) succeeded, want an error", in)
		}
	}
}

func TestScanAllocs(t *testing.T) {
	data := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":[3.5,"x\n"]}}}`)
	n := testing.AllocsPerRun(100, func() {
		if _, err := jsonvalue.Object(data, 0, func(string, int, int) {}); err != nil {
			t.Fatal(err)
		}
	})
	if n != 0 {
		t.Errorf("Object allocates %v times per call, want 0", n)
	}
}

func BenchmarkSkip(b *testing.B) {
	data := bytes.Repeat([]byte(`{"path":"/tmp/x","opts":{"depth":2,"ratio":0.25},"tags":["a","b\n"]},`), 100)
	data = append(append([]byte{'['}, data[:len(data)-1]...), ']')
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := jsonvalue.Skip(data, 0); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkStdlibValid(b *testing.B) {
	data := bytes.Repeat([]byte(`{"path":"/tmp/x","opts":{"depth":2,"ratio":0.25},"tags":["a","b\n"]},`), 100)
	data = append(append([]byte{'['}, data[:len(data)-1]...), ']')
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if !json.Valid(data) {
			b.Fatal("invalid")
		}
	}
}

// TestLongStrings puts each byte that needs attention in a JSON string at
// every position of a string long enough for the word-at-a-time scans.
func TestLongStrings(t *testing.T) {
	specials := []string{`"`, `\\`, `\n`, `\u00e9`, "\x01", "\x1f", "<", ">", "&", "é", "\xff", "\u2028", " ", "\x7f"}
	for _, sp := range specials {
		for pos := range 26 {
			body := strings.Repeat("a", pos) + sp + strings.Repeat("b", 25-pos)
			data := []byte(`["` + body + `",{"k` + body + `":"` + body + `"}]`)
			agreeWithStdlib(t, data)
			agreeScanWithStdlib(t, data)
		}
	}
}
