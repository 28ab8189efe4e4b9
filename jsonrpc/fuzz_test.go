package jsonrpc_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/toolwire/toolwire/jsonrpc"
)

// FuzzDecode checks that Decode never panics, that it always explains a
// failure with a *jsonrpc.Error of a JSON-RPC code, and that a message it
// accepts survives a round trip through Append unchanged.
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
