// Package jsonrpc holds JSON-RPC 2.0 messages, their error codes, and the
// codecs that carry them: newline-delimited streams (stdio) and HTTP bodies.
//
// A message is parsed once. Its params, result and error data stay raw JSON
// until the code that owns them decodes them into typed structs.
package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"

	"github.com/toolwire/toolwire/internal/jsonvalue"
)

// Version is the only value of the "jsonrpc" member this package accepts.
const Version = "2.0"

// The error codes defined by JSON-RPC 2.0.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
)

// ID identifies a request. It is a JSON string or number, kept exactly as the
// peer sent it, so that the response carries the same bytes back. The zero ID
// means "no id" (a notification, or an error response to an unreadable
// request).
type ID struct {
	raw string
}

// StringID returns the ID for a string.
func StringID(s string) ID {
	b, _ := json.Marshal(s) // a Go string always marshals
	return ID{raw: string(b)}
}

// Int64ID returns the ID for an integer.
func Int64ID(n int64) ID { return ID{raw: strconv.FormatInt(n, 10)} }

// IsZero reports whether the ID is absent.
func (id ID) IsZero() bool { return id.raw == "" }

// String returns the ID as it appears in JSON ("7" or "\"abc\"").
func (id ID) String() string { return id.raw }

// Raw returns the ID's JSON text; nil for the zero ID.
func (id ID) Raw() json.RawMessage {
	if id.raw == "" {
		return nil
	}
	return json.RawMessage(id.raw)
}

// MarshalJSON encodes the ID as sent; the zero ID encodes as null.
func (id ID) MarshalJSON() ([]byte, error) {
	if id.raw == "" {
		return []byte("null"), nil
	}
	return []byte(id.raw), nil
}

// UnmarshalJSON accepts a JSON string or number.
func (id *ID) UnmarshalJSON(b []byte) error {
	parsed, err := parseID(b)
	if err != nil {
		return err
	}
	*id = parsed
	return nil
}

func parseID(b []byte) (ID, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return ID{}, nil
	}
	switch c := b[0]; {
	case c == '"' || c == '-' || (c >= '0' && c <= '9'):
		if end, err := jsonvalue.Skip(b, 0); err != nil || end != len(b) {
			return ID{}, errors.New("id: malformed string or number")
		}
		// The id goes back as sent: bytes that are not UTF-8 would make
		// the response invalid JSON text (RFC 8259 §8.1), and no JSON
		// escape carries a stray byte.
		if c == '"' && !utf8.Valid(b) {
			return ID{}, errIDNotUTF8
		}
		return ID{raw: string(b)}, nil
	case c == 'n':
		return ID{}, errors.New("id must be a string or a number, got null")
	default:
		return ID{}, fmt.Errorf("id must be a string or a number, got %s", kindOf(c))
	}
}

// errIDNotUTF8 is parseID's error for a string id with bytes that are
// not UTF-8: not JSON text at all, so a parse error.
var errIDNotUTF8 = errors.New("the id is not valid UTF-8 (JSON text must be UTF-8, RFC 8259); send the id as UTF-8 text or a number")

func kindOf(c byte) string {
	switch c {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	case '"':
		return "a string"
	default:
		return "a number"
	}
}

// Error is a JSON-RPC error object. It is also a Go error, so a handler can
// return one to choose the code the peer sees.
type Error struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// Error implements the error interface.
func (e *Error) Error() string {
	if len(e.Data) > 0 {
		return fmt.Sprintf("jsonrpc error %d: %s (data: %s)", e.Code, e.Message, e.Data)
	}
	return fmt.Sprintf("jsonrpc error %d: %s", e.Code, e.Message)
}

// NewError returns an Error with a formatted message.
func NewError(code int, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// WithData returns a copy of e carrying v, marshalled, as its data.
func (e *Error) WithData(v any) *Error {
	c := *e
	if b, err := json.Marshal(v); err == nil {
		c.Data = b
	}
	return &c
}

// Message is one JSON-RPC message: a request (Method and ID), a notification
// (Method, no ID) or a response (ID and Result or Error).
type Message struct {
	ID     ID
	Method string
	Params json.RawMessage
	Result json.RawMessage
	Error  *Error
}

// IsRequest reports whether m expects a response.
func (m *Message) IsRequest() bool { return m.Method != "" && !m.ID.IsZero() }

// IsNotification reports whether m is a notification.
func (m *Message) IsNotification() bool { return m.Method != "" && m.ID.IsZero() }

// IsResponse reports whether m answers a request.
func (m *Message) IsResponse() bool { return m.Method == "" }

// Decode parses one message. On failure it returns an *Error with the code
// JSON-RPC prescribes (parse error or invalid request) and a message that
// names the problem; the returned Message then carries the request's ID when
// it could be read, so the error response can be addressed.
//
// The message is read in one pass and copied once: its params and result
// are sub-slices of that copy, so data may be reused after Decode returns.
func Decode(data []byte) (*Message, error) { return decode(data, true) }

// decodeOwned is Decode for a buffer the caller hands over, such as an
// HTTP body read for this message alone: the message's params and result
// are sub-slices of data itself, which must not change afterwards (for
// package mcp, through fastpath.DecodeOwned).
func decodeOwned(data []byte) (*Message, error) { return decode(data, false) }

func decode(data []byte, clone bool) (*Message, error) {
	i := jsonvalue.SkipSpace(data, 0)
	if i < len(data) && data[i] != '{' {
		end, err := jsonvalue.Skip(data, i)
		if err == nil {
			err = jsonvalue.End(data, end)
		}
		if err != nil {
			return &Message{}, parseError(err)
		}
		if data[i] != 'n' { // null decodes as an empty object would
			return &Message{}, NewError(CodeInvalidRequest, "invalid request: a message must be a JSON object, got %s", jsonvalue.TypeName(data[i]))
		}
		data = []byte("{}")
		i = 0
	}
	buf := data[i:]
	if clone {
		buf = bytes.Clone(buf)
	}
	// The spans of the members this package reads; the last of duplicate
	// keys wins, as with encoding/json.
	var jsonrpc, id, method, params, result, errObj []byte
	end, err := jsonvalue.Object(buf, 0, func(key string, start, end int) {
		v := buf[start:end:end]
		switch key {
		case "jsonrpc":
			jsonrpc = v
		case "id":
			id = v
		case "method":
			method = v
		case "params":
			params = v
		case "result":
			result = v
		case "error":
			errObj = v
		}
	})
	if err == nil {
		err = jsonvalue.End(buf, end)
	}
	if err != nil {
		if se, ok := err.(*jsonvalue.SyntaxError); ok {
			se.Offset += int64(i)
		}
		return &Message{}, parseError(err)
	}
	m := &Message{}
	// JSON-RPC 2.0 answers a request whose id could not be read with
	// "id": null; accept that on responses (never on requests).
	if method == nil && string(id) == "null" {
		id = nil
	}
	if id != nil {
		parsed, err := parseID(id)
		if err == errIDNotUTF8 {
			return m, NewError(CodeParseError, "parse error: %v", err)
		}
		if err != nil {
			return m, NewError(CodeInvalidRequest, "invalid request: %v", err)
		}
		m.ID = parsed
	}
	if string(jsonrpc) != `"2.0"` {
		if jsonrpc == nil {
			return m, NewError(CodeInvalidRequest, `invalid request: the "jsonrpc" member is missing; it must be "2.0"`)
		}
		return m, NewError(CodeInvalidRequest, `invalid request: "jsonrpc" must be "2.0", got %s`, jsonrpc)
	}
	if method != nil && string(method) != "null" {
		if method[0] != '"' {
			return m, NewError(CodeInvalidRequest, "invalid request: method must be a string, got %s", kindOf(method[0]))
		}
		m.Method = methodName(method)
		if m.Method == "" {
			return m, NewError(CodeInvalidRequest, "invalid request: method is empty")
		}
		if params != nil && string(params) != "null" {
			if params[0] != '{' && params[0] != '[' {
				return m, NewError(CodeInvalidRequest, "invalid request: params must be an object or an array, got %s", kindOf(params[0]))
			}
			m.Params = params
		}
		return m, nil
	}
	// A response.
	if m.ID.IsZero() && errObj == nil {
		return m, NewError(CodeInvalidRequest, "invalid request: a message needs a method (request or notification) or an id with a result or error (response)")
	}
	switch {
	case result != nil && errObj != nil:
		return m, NewError(CodeInvalidRequest, "invalid response: it has both result and error")
	case errObj != nil:
		var e Error
		if err := json.Unmarshal(errObj, &e); err != nil {
			return m, NewError(CodeInvalidRequest, "invalid response: error object: %v", err)
		}
		m.Error = &e
	case result != nil:
		m.Result = result
	default:
		return m, NewError(CodeInvalidRequest, "invalid response: it has neither result nor error")
	}
	return m, nil
}

// methodName decodes a method name (a JSON string), without allocating for
// the names this module's protocol layer uses most.
func methodName(b []byte) string {
	switch string(b) {
	case `"tools/call"`:
		return "tools/call"
	case `"tools/list"`:
		return "tools/list"
	case `"notifications/initialized"`:
		return "notifications/initialized"
	case `"notifications/cancelled"`:
		return "notifications/cancelled"
	case `"notifications/progress"`:
		return "notifications/progress"
	case `"ping"`:
		return "ping"
	}
	s, err := jsonvalue.String(b)
	if err != nil { // Object has checked the string already
		return ""
	}
	return s
}

func parseError(err error) *Error {
	var se *jsonvalue.SyntaxError
	if errors.As(err, &se) {
		return NewError(CodeParseError, "parse error: %s (at byte %d)", se.Msg, se.Offset)
	}
	return NewError(CodeParseError, "parse error: %v", err)
}

// Append appends the JSON encoding of m to buf.
func (m *Message) Append(buf []byte) []byte {
	buf, raw := m.appendHead(buf)
	buf = append(buf, raw...)
	return append(buf, '}')
}

// appendHead appends the encoding of m up to its params or result, which
// it returns (raw, written as is, then a closing brace, end the message).
func (m *Message) appendHead(buf []byte) (head, raw []byte) {
	buf = append(buf, `{"jsonrpc":"2.0"`...)
	if !m.ID.IsZero() {
		buf = append(buf, `,"id":`...)
		buf = append(buf, m.ID.raw...)
	} else if m.Method == "" {
		buf = append(buf, `,"id":null`...)
	}
	switch {
	case m.Method != "":
		buf = append(buf, `,"method":`...)
		buf = appendString(buf, m.Method)
		if len(m.Params) > 0 {
			buf = append(buf, `,"params":`...)
			raw = m.Params
		}
	case m.Error != nil:
		buf = append(buf, `,"error":{"code":`...)
		buf = strconv.AppendInt(buf, int64(m.Error.Code), 10)
		buf = append(buf, `,"message":`...)
		buf = appendString(buf, m.Error.Message)
		if len(m.Error.Data) > 0 {
			buf = append(buf, `,"data":`...)
			buf = append(buf, m.Error.Data...)
		}
		buf = append(buf, '}')
	default:
		buf = append(buf, `,"result":`...)
		raw = m.Result
		if len(raw) == 0 {
			raw = []byte("{}")
		}
	}
	return buf, raw
}

// Len returns the length of m's JSON encoding.
func (m *Message) Len() int {
	var small [256]byte
	head, raw := m.appendHead(small[:0])
	return len(head) + len(raw) + 1
}

// WriteTo writes the JSON encoding of m to w, as Append encodes it, without
// first copying its params or result into a buffer of the whole message:
// a large one goes to w as it is. It implements io.WriterTo.
func (m *Message) WriteTo(w io.Writer) (int64, error) {
	head, raw := m.appendHead(make([]byte, 0, 256))
	if len(raw) < 4<<10 {
		n, err := w.Write(append(append(head, raw...), '}'))
		return int64(n), err
	}
	var total int64
	for _, part := range [][]byte{head, raw, {'}'}} {
		n, err := w.Write(part)
		total += int64(n)
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// MarshalJSON implements json.Marshaler.
func (m *Message) MarshalJSON() ([]byte, error) { return m.Append(nil), nil }

// appendString appends s as a JSON string. Method names are short ASCII in
// practice; anything unusual goes through Marshal (no HTML escaping, like
// every other part of a message).
func appendString(buf []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			b, _ := Marshal(s) // a Go string always marshals
			return append(buf, b...)
		}
	}
	buf = append(buf, '"')
	buf = append(buf, s...)
	return append(buf, '"')
}

// NewRequest returns a request message whose params are params encoded as
// JSON (as Marshal does); a json.RawMessage is taken as it is, and nil
// means no params.
func NewRequest(id ID, method string, params any) (*Message, error) {
	p, err := marshalParams(params)
	if err != nil {
		return nil, fmt.Errorf("%s params: %w", method, err)
	}
	return &Message{ID: id, Method: method, Params: p}, nil
}

// NewNotification returns a notification message whose params are params
// encoded as JSON, as NewRequest's are.
func NewNotification(method string, params any) (*Message, error) {
	p, err := marshalParams(params)
	if err != nil {
		return nil, fmt.Errorf("%s params: %w", method, err)
	}
	return &Message{Method: method, Params: p}, nil
}

func marshalParams(v any) (json.RawMessage, error) {
	switch p := v.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		return p, nil
	}
	return Marshal(v)
}

// Marshal encodes v as JSON without HTML escaping and without a trailing
// newline: the form every message of this package is written in.
func Marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	out := b.Bytes()
	return out[:len(out)-1], nil
}
