package jsonrpc_test

import (
	"encoding/json"
	"errors"
	"testing"
	"unicode/utf8"

	"github.com/toolwire/toolwire/jsonrpc"
)

// FuzzDecode checks that Decode never panics, that it always explains a
// failure with a *jsonrpc.Error of a JSON-RPC code, that it reports a parse
// error exactly for what encoding/json finds malformed, that what it reads
// agrees with encoding/json, and that a message it accepts survives a round
// trip through Append unchanged.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":"x","result":{}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`,
		`[]`,
		`nul`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := jsonrpc.Decode(data)
		if m == nil {
			t.Fatalf("Decode(%q) returned a nil message (err %v)", data, err)
		}
		var e *jsonrpc.Error
		wantParseErr := !json.Valid(data) || idNotUTF8(data)
		if parseErr := errors.As(err, &e) && e.Code == jsonrpc.CodeParseError; parseErr != wantParseErr {
			t.Fatalf("Decode(%q): %v; json.Valid: %v", data, err, json.Valid(data))
		}
		if err == nil {
			agreeWithStdlib(t, data, m)
		}
		if err != nil {
			var e *jsonrpc.Error
			if !errors.As(err, &e) {
				t.Fatalf("Decode(%q) error %T is not a *jsonrpc.Error", data, err)
			}
			if e.Code != jsonrpc.CodeParseError && e.Code != jsonrpc.CodeInvalidRequest {
				t.Fatalf("Decode(%q) error code %d, want parse error or invalid request", data, e.Code)
			}
			// The error response addressed to the message must be valid JSON.
			if b := (&jsonrpc.Message{ID: m.ID, Error: e}).Append(nil); !json.Valid(b) {
				t.Fatalf("error response is not valid JSON: %s", b)
			}
			return
		}
		enc := m.Append(nil)
		if !json.Valid(enc) {
			t.Fatalf("Append of Decode(%q) is not valid JSON: %s", data, enc)
		}
		back, err := jsonrpc.Decode(enc)
		if err != nil {
			t.Fatalf("Decode(Append(Decode(%q))) = %s: %v", data, enc, err)
		}
		if d := diffMessages(m, back); d != "" {
			t.Fatalf("round trip of %q through %s changed the message: %s", data, enc, d)
		}
	})
}

// idNotUTF8 reports whether data, valid JSON to encoding/json (which
// lets bytes that are not UTF-8 through), is an object whose id is a
// string that is not UTF-8: not JSON text (RFC 8259 §8.1), which Decode
// reports as a parse error rather than echo the id.
func idNotUTF8(data []byte) bool {
	var members map[string]json.RawMessage
	if json.Unmarshal(data, &members) != nil {
		return false
	}
	id := members["id"]
	return len(id) > 0 && id[0] == '"' && !utf8.Valid(id)
}

// agreeWithStdlib checks a decoded message against encoding/json's reading
// of the same members.
func agreeWithStdlib(t *testing.T, data []byte, m *jsonrpc.Message) {
	t.Helper()
	var members map[string]json.RawMessage
	if err := json.Unmarshal(data, &members); err != nil {
		t.Fatalf("Decode(%q) accepted what encoding/json refuses: %v", data, err)
	}
	var method string
	if raw, ok := members["method"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &method); err != nil {
			t.Fatalf("Decode(%q) accepted method %s: %v", data, raw, err)
		}
	}
	if m.Method != method {
		t.Fatalf("Decode(%q): method %q; encoding/json: %q", data, m.Method, method)
	}
	if m.Method != "" && string(members["params"]) != "null" && string(m.Params) != string(members["params"]) {
		t.Fatalf("Decode(%q): params %s; encoding/json: %s", data, m.Params, members["params"])
	}
	if m.Method == "" && m.Error == nil && string(m.Result) != string(members["result"]) {
		t.Fatalf("Decode(%q): result %s; encoding/json: %s", data, m.Result, members["result"])
	}
}
