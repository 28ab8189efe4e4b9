// Package driver is a minimal raw JSON-RPC load driver for MCP servers. It
// speaks the legacy (initialize-based) MCP lifecycle at ProtocolVersion over
// stdio to a spawned command or over Streamable HTTP, and is the same for
// every server under test. For servers that speak it, it also speaks the
// stateless ModernVersion: no handshake, _meta in every request (see
// [NewModernToolCall]) and, over HTTP, the Mcp-Method and Mcp-Name headers.
//
// It is built to stay out of the way of the measurement: requests are
// marshalled once (only the JSON-RPC id is spliced in per call), read buffers
// are reused, and responses are checked with a small zero-allocation scanner
// (top-level "id", "result" and "error" members) instead of being decoded.
// Use [CheckText] once, outside the timed loop, to verify a result fully.
package driver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// ProtocolVersion is the MCP protocol revision the driver requests.
const ProtocolVersion = "2025-11-25"

// ModernVersion is the stateless MCP protocol revision that
// [NewModernToolCall], [HTTPClient.ConnectModern] and [StartStdioModern]
// speak.
const ModernVersion = "2026-07-28"

// Conn is one initialized MCP session.
type Conn interface {
	// Call sends the request and returns the raw JSON of the "result"
	// member of its response. The slice is only valid until the next call
	// on the Conn. A JSON-RPC error is returned as *RPCError.
	Call(c *Call) ([]byte, error)
	// Close ends the session.
	Close() error
}

// Call is a pre-marshalled JSON-RPC request. It is immutable and may be
// shared by any number of connections and goroutines.
type Call struct {
	prefix []byte // {"jsonrpc":"2.0","id":
	suffix []byte // ,"method":...,"params":...}

	// The Mcp-Method and Mcp-Name header lines of a modern call over
	// HTTP, ready to write; empty for a legacy call.
	headers []byte
}

var callPrefix = []byte(`{"jsonrpc":"2.0","id":`)

// NewCall pre-marshals a request for method with the given params (nil for
// none).
func NewCall(method string, params any) (*Call, error) {
	m, err := json.Marshal(method)
	if err != nil {
		return nil, err
	}
	suffix := append([]byte(`,"method":`), m...)
	if params != nil {
		p, err := json.Marshal(params)
		if err != nil {
			return nil, err
		}
		suffix = append(suffix, `,"params":`...)
		suffix = append(suffix, p...)
	}
	suffix = append(suffix, '}')
	return &Call{prefix: callPrefix, suffix: suffix}, nil
}

// NewToolCall pre-marshals a tools/call request for the named tool.
func NewToolCall(name string, args any) (*Call, error) {
	return NewCall("tools/call", map[string]any{"name": name, "arguments": args})
}

// NewModernToolCall pre-marshals a tools/call request for the named tool
// in the stateless ModernVersion: params._meta carries the protocol
// version, empty client capabilities and the client's info, as a modern
// client sends them with every request, and over HTTP the request carries
// the Mcp-Method and Mcp-Name headers. Send it on a session from
// [HTTPClient.ConnectModern] or [StartStdioModern].
func NewModernToolCall(name string, args any) (*Call, error) {
	c, err := NewCall("tools/call", map[string]any{
		"name":      name,
		"arguments": args,
		"_meta": map[string]any{
			"io.modelcontextprotocol/protocolVersion":    ModernVersion,
			"io.modelcontextprotocol/clientCapabilities": map[string]any{},
			"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "toolwire-bench-driver", "version": "0.0.0"},
		},
	})
	if err != nil {
		return nil, err
	}
	for _, b := range []byte(name) {
		if b < 0x20 || b > 0x7e {
			return nil, fmt.Errorf("driver: tool name %q: only printable ASCII fits in an Mcp-Name header unencoded", name)
		}
	}
	c.headers = []byte("Mcp-Method: tools/call\r\nMcp-Name: " + name + "\r\n")
	return c, nil
}

// Len is the encoded size of the request, give or take the id digits.
func (c *Call) Len() int { return len(c.prefix) + len(c.suffix) + 20 }

// AppendRequest appends the request with the given id to dst.
func (c *Call) AppendRequest(dst []byte, id int64) []byte {
	dst = append(dst, c.prefix...)
	dst = strconv.AppendInt(dst, id, 10)
	return append(dst, c.suffix...)
}

func initializeCall() *Call {
	c, err := NewCall("initialize", map[string]any{
		"protocolVersion": ProtocolVersion,
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "toolwire-bench-driver", "version": "0.0.0"},
	})
	if err != nil {
		panic(err)
	}
	return c
}

var (
	initCall        = initializeCall()
	initializedNote = []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
)

// RPCError is a JSON-RPC error response.
type RPCError struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
}

func (e *RPCError) Error() string { return fmt.Sprintf("JSON-RPC error %d: %s", e.Code, e.Message) }

// checkInitResult verifies the negotiated protocol version.
func checkInitResult(result []byte) (string, error) {
	var r struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if err := json.Unmarshal(result, &r); err != nil {
		return "", fmt.Errorf("initialize result: %w", err)
	}
	if r.ProtocolVersion != ProtocolVersion {
		return r.ProtocolVersion, fmt.Errorf("server negotiated protocol %q, want %q", r.ProtocolVersion, ProtocolVersion)
	}
	return r.ProtocolVersion, nil
}

// CheckText fully decodes a tools/call result and verifies that it is a
// successful result whose content is exactly one text item equal to want.
func CheckText(result []byte, want string) error {
	var r struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(result, &r); err != nil {
		return fmt.Errorf("decoding tool result: %w", err)
	}
	if r.IsError {
		return fmt.Errorf("tool returned isError: %.200s", result)
	}
	if len(r.Content) != 1 || r.Content[0].Type != "text" {
		return fmt.Errorf("want one text content item, got %.200s", result)
	}
	if r.Content[0].Text != want {
		return fmt.Errorf("tool text %.60q (len %d), want %.60q (len %d)", r.Content[0].Text, len(r.Content[0].Text), want, len(want))
	}
	return nil
}

// response holds the spans of the top-level members of a JSON-RPC message.
type response struct {
	id, method, result, err []byte
}

var errNotObject = errors.New("driver: JSON-RPC message is not an object")

// scanMessage finds the top-level id, method, result and error members of a
// JSON object without decoding or allocating. It is not a validator: it only
// has to be right for well-formed input.
func scanMessage(msg []byte) (r response, err error) {
	i := skipWS(msg, 0)
	if i >= len(msg) || msg[i] != '{' {
		return r, errNotObject
	}
	i++
	for {
		i = skipWS(msg, i)
		if i >= len(msg) {
			return r, errNotObject
		}
		if msg[i] == '}' {
			return r, nil
		}
		if msg[i] == ',' {
			i++
			continue
		}
		if msg[i] != '"' {
			return r, errNotObject
		}
		kEnd := skipString(msg, i)
		if kEnd < 0 {
			return r, errNotObject
		}
		key := msg[i+1 : kEnd-1]
		i = skipWS(msg, kEnd)
		if i >= len(msg) || msg[i] != ':' {
			return r, errNotObject
		}
		i = skipWS(msg, i+1)
		vEnd := skipValue(msg, i)
		if vEnd < 0 {
			return r, errNotObject
		}
		val := msg[i:vEnd]
		switch string(key) { // no allocation: compiler-optimised comparison
		case "id":
			r.id = val
		case "method":
			r.method = val
		case "result":
			r.result = val
		case "error":
			r.err = val
		}
		i = vEnd
	}
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index just past the string starting at b[i] == '"',
// or -1.
func skipString(b []byte, i int) int {
	j := i + 1
	for {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return -1
		}
		q := j + k
		// Count the backslashes right before the quote.
		n := 0
		for p := q - 1; p > i && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return q + 1
		}
		j = q + 1
	}
}

// skipValue returns the index just past the JSON value starting at b[i], or -1.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				if i < 0 {
					return -1
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return -1
	default:
		for i < len(b) {
			switch b[i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return i
			}
			i++
		}
		return i
	}
}

// matchResponse reports whether msg is the response to the request with the
// given id and, if so, returns its result or error.
func matchResponse(msg []byte, id int64, idBuf *[24]byte) (result []byte, matched bool, err error) {
	r, err := scanMessage(msg)
	if err != nil {
		return nil, false, fmt.Errorf("%w: %.200q", err, msg)
	}
	if r.method != nil || r.id == nil {
		return nil, false, nil // a notification or a server-to-client request
	}
	if !bytes.Equal(r.id, strconv.AppendInt(idBuf[:0], id, 10)) {
		return nil, false, nil
	}
	if r.err != nil && !bytes.Equal(r.err, []byte("null")) {
		e := new(RPCError)
		if jerr := json.Unmarshal(r.err, e); jerr != nil {
			return nil, true, fmt.Errorf("bad JSON-RPC error %.200q", r.err)
		}
		return nil, true, e
	}
	if r.result == nil {
		return nil, true, fmt.Errorf("response without result: %.200q", msg)
	}
	return r.result, true, nil
}
