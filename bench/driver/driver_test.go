package driver

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestCallEncoding(t *testing.T) {
	c, err := NewToolCall("echo", map[string]any{"text": "hi \"there\""})
	if err != nil {
		t.Fatal(err)
	}
	b := c.AppendRequest(nil, 42)
	var m struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      int64           `json:"id"`
		Method  string          `json:"method"`
		Params  json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	if m.JSONRPC != "2.0" || m.ID != 42 || m.Method != "tools/call" || string(m.Params) != `{"arguments":{"text":"hi \"there\""},"name":"echo"}` {
		t.Fatalf("bad request %s", b)
	}
}

func TestMatchResponse(t *testing.T) {
	var idBuf [24]byte
	for _, tc := range []struct {
		msg     string
		id      int64
		result  string
		matched bool
		err     bool
	}{
		{`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"a\\\"}b"}]}}`, 7, `{"content":[{"type":"text","text":"a\\\"}b"}]}`, true, false},
		{` { "result" : [1,{"x":"]"}] , "id" : 7 , "jsonrpc":"2.0"}`, 7, `[1,{"x":"]"}]`, true, false},
		{`{"jsonrpc":"2.0","id":8,"result":{}}`, 7, ``, false, false},
		{`{"jsonrpc":"2.0","method":"notifications/message","params":{"id":7}}`, 7, ``, false, false},
		{`{"jsonrpc":"2.0","id":7,"method":"ping"}`, 7, ``, false, false},
		{`{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"bad"}}`, 7, ``, true, true},
		{`[1]`, 7, ``, false, true},
	} {
		res, ok, err := matchResponse([]byte(tc.msg), tc.id, &idBuf)
		if string(res) != tc.result || ok != tc.matched || (err != nil) != tc.err {
			t.Errorf("matchResponse(%s) = %s, %v, %v", tc.msg, res, ok, err)
		}
	}
	_, _, err := matchResponse([]byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad"}}`), 1, &idBuf)
	var rpcErr *RPCError
	if !errors.As(err, &rpcErr) || rpcErr.Code != -32602 {
		t.Errorf("want RPCError -32602, got %v", err)
	}
}

func TestMatchResponseNoAllocs(t *testing.T) {
	var idBuf [24]byte
	msg := []byte(`{"jsonrpc":"2.0","id":12345,"result":{"content":[{"type":"text","text":"` + strings.Repeat("x", 1000) + `"}]}}`)
	allocs := testing.AllocsPerRun(100, func() {
		if _, ok, err := matchResponse(msg, 12345, &idBuf); !ok || err != nil {
			t.Fatal(ok, err)
		}
	})
	if allocs != 0 {
		t.Errorf("matchResponse allocates %v times", allocs)
	}
}

func TestScanSSE(t *testing.T) {
	var scratch []byte
	stream := "event: message\r\nid: 1\r\ndata: {\"a\":\r\ndata: 1}\r\n\r\n: comment\ndata:{\"b\":2}\n\ndata: last"
	var got []string
	if err := scanSSE([]byte(stream), &scratch, func(d []byte) (bool, error) {
		got = append(got, string(d))
		return false, nil
	}); err != nil {
		t.Fatal(err)
	}
	want := []string{"{\"a\":\n1}", `{"b":2}`, "last"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// TestHTTPSession runs a session against a tiny fake server that answers in
// SSE or JSON, and checks the headers the driver sends.
func TestHTTPSession(t *testing.T) {
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Accept") != "application/json, text/event-stream" {
			t.Errorf("Accept = %q", r.Header.Get("Accept"))
		}
		if r.Method == http.MethodDelete {
			if r.Header.Get("Mcp-Session-Id") != "sess-1" {
				t.Errorf("DELETE without session id")
			}
			return
		}
		b, _ := io.ReadAll(r.Body)
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Arguments struct {
					Text string `json:"text"`
				} `json:"arguments"`
			} `json:"params"`
		}
		if err := json.Unmarshal(b, &m); err != nil {
			t.Errorf("bad body %q: %v", b, err)
		}
		switch m.Method {
		case "initialize":
			w.Header().Set("Mcp-Session-Id", "sess-1")
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{"protocolVersion":"2025-11-25"}}`)
			return
		case "notifications/initialized":
			w.WriteHeader(http.StatusAccepted)
			return
		}
		if r.Header.Get("Mcp-Session-Id") != "sess-1" || r.Header.Get("Mcp-Protocol-Version") != ProtocolVersion {
			t.Errorf("missing session headers: %v", r.Header)
		}
		calls++
		res, _ := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": m.Params.Arguments.Text}}})
		resp := `{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":` + string(res) + `}`
		if calls%2 == 0 {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, resp)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\nevent: message\ndata: "+resp+"\n\n")
	}))
	defer srv.Close()

	c, err := NewHTTPClient(srv.URL + "/mcp")
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	s, err := c.Connect()
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"one", strings.Repeat("big", 100000), "three"} {
		call, _ := NewToolCall("echo", map[string]any{"text": text})
		res, err := s.Call(call)
		if err != nil {
			t.Fatal(err)
		}
		if err := CheckText(res, text); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestModernHTTPSession: a ConnectModern session sends no handshake; each
// NewModernToolCall request carries the protocol version in _meta and the
// Mcp-Protocol-Version, Mcp-Method and Mcp-Name headers, and no session.
func TestModernHTTPSession(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name      string `json:"name"`
				Arguments struct {
					Text string `json:"text"`
				} `json:"arguments"`
				Meta map[string]any `json:"_meta"`
			} `json:"params"`
		}
		if err := json.Unmarshal(b, &m); err != nil {
			t.Errorf("bad body %q: %v", b, err)
		}
		if m.Method != "tools/call" {
			t.Errorf("method %q: a modern session sends only its calls", m.Method)
		}
		if v := m.Params.Meta["io.modelcontextprotocol/protocolVersion"]; v != ModernVersion {
			t.Errorf("_meta protocol version %v, want %s", v, ModernVersion)
		}
		if _, ok := m.Params.Meta["io.modelcontextprotocol/clientCapabilities"].(map[string]any); !ok {
			t.Errorf("_meta without client capabilities: %v", m.Params.Meta)
		}
		h := r.Header
		if h.Get("Mcp-Protocol-Version") != ModernVersion || h.Get("Mcp-Method") != "tools/call" || h.Get("Mcp-Name") != m.Params.Name || h.Get("Mcp-Session-Id") != "" {
			t.Errorf("headers %v for a call of %q", h, m.Params.Name)
		}
		res, _ := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": m.Params.Arguments.Text}}})
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":`+string(res)+`}`)
	}))
	defer srv.Close()

	c, err := NewHTTPClient(srv.URL + "/mcp")
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	s := c.ConnectModern()
	for _, text := range []string{"one", "two"} {
		call, err := NewModernToolCall("echo", map[string]any{"text": text})
		if err != nil {
			t.Fatal(err)
		}
		res, err := s.Call(call)
		if err != nil {
			t.Fatal(err)
		}
		if err := CheckText(res, text); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := NewModernToolCall("caf\u00e9", nil); err == nil {
		t.Error("a tool name that does not fit an Mcp-Name header as it is: no error")
	}
}
