package mcp

import (
	"testing"

	"github.com/toolwire/toolwire/tool"
)

// TestReadHeaderFields: the members a modern request's headers are checked
// against, read without decoding params: strings with and without escapes,
// members of the wrong type (absent), _meta missing, null or not an
// object.
func TestReadHeaderFields(t *testing.T) {
	const v = `"io.modelcontextprotocol/protocolVersion"`
	const caps = `"io.modelcontextprotocol/clientCapabilities"`
	tests := []struct {
		name, params string
		want         headerFields
	}{
		{"plain", `{"name":"add","arguments":{"a":1},"_meta":{` + v + `:"2026-07-28",` + caps + `:{}}}`,
			headerFields{name: []byte("add"), arguments: []byte(`{"a":1}`), meta: true, version: []byte("2026-07-28"), caps: []byte("{}")}},
		{"escaped name and uri", `{"name":"a\u0064d","uri":"file:\/\/x"}`,
			headerFields{name: []byte("add"), uri: []byte("file://x")}},
		{"name not a string", `{"name":5,"uri":null}`, headerFields{}},
		{"no _meta", `{"name":"add"}`, headerFields{name: []byte("add")}},
		{"null _meta", `{"_meta":null}`, headerFields{}},
		{"_meta not an object", `{"_meta":[1]}`, headerFields{meta: true}},
		{"version not a string", `{"_meta":{` + v + `:1,` + caps + `:null}}`, headerFields{meta: true, caps: []byte("null")}},
		{"keys are case-sensitive", `{"Name":"add","_meta":{"IO.modelcontextprotocol/protocolVersion":"x"}}`, headerFields{meta: true}},
		{"last of duplicates", `{"name":"a","name":"b"}`, headerFields{name: []byte("b")}},
		{"params not an object", `[1]`, headerFields{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := readHeaderFields([]byte(tc.params), nil)
			if string(got.name) != string(tc.want.name) || string(got.uri) != string(tc.want.uri) ||
				string(got.arguments) != string(tc.want.arguments) || got.meta != tc.want.meta ||
				string(got.version) != string(tc.want.version) || string(got.caps) != string(tc.want.caps) {
				t.Errorf("readHeaderFields(%s) = name %q uri %q arguments %q meta %v version %q caps %q, want %q %q %q %v %q %q",
					tc.params, got.name, got.uri, got.arguments, got.meta, got.version, got.caps,
					tc.want.name, tc.want.uri, tc.want.arguments, tc.want.meta, tc.want.version, tc.want.caps)
			}
		})
	}
}

// TestServerInfoValue: the serverInfo of a modern result's _meta follows
// the server's Info when Info changes, and carries its icons.
func TestServerInfoValue(t *testing.T) {
	s := &Server{Info: Implementation{Name: "one", Version: "1"}}
	name := func() any { return s.serverInfoValue().(map[string]any)["name"] }
	if got := name(); got != "one" {
		t.Fatalf("name = %v, want one", got)
	}
	s.Info.Name = "two"
	if got := name(); got != "two" {
		t.Fatalf("after Info changed: name = %v, want two", got)
	}
	s.Info.Icons = []tool.Icon{{Src: "https://example.com/i.png"}}
	if got, ok := s.serverInfoValue().(Implementation); !ok || len(got.Icons) != 1 {
		t.Fatalf("with icons: %#v, want the Info itself", s.serverInfoValue())
	}
}
