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
	"strconv"
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
	case c == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return ID{}, fmt.Errorf("id: %w", err)
		}
		return ID{raw: string(b)}, nil
	case c == '-' || (c >= '0' && c <= '9'):
		if !json.Valid(b) {
			return ID{}, errors.New("id: malformed number")
		}
		return ID{raw: string(b)}, nil
	case c == 'n':
		return ID{}, errors.New("id must be a string or a number, got null")
	default:
		return ID{}, fmt.Errorf("id must be a string or a number, got %s", kindOf(c))
	}
}

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

// wire is the decoding shape of a message. Every member stays raw so that
// each can be checked and reported on its own.
type wire struct {
	JSONRPC json.RawMessage `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  json.RawMessage `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

// Decode parses one message. On failure it returns an *Error with the code
// JSON-RPC prescribes (parse error or invalid request) and a message that
// names the problem; the returned Message then carries the request's ID when
// it could be read, so the error response can be addressed.
func Decode(data []byte) (*Message, error) {
	var w wire
	if err := json.Unmarshal(data, &w); err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) || !json.Valid(data) {
			return &Message{}, NewError(CodeParseError, "parse error: %s", describeSyntax(err, syn))
		}
		var typ *json.UnmarshalTypeError
		if errors.As(err, &typ) && typ.Field == "" {
			return &Message{}, NewError(CodeInvalidRequest, "invalid request: a message must be a JSON object, got %s", typ.Value)
		}
		return &Message{}, NewError(CodeInvalidRequest, "invalid request: %v", err)
	}
	m := &Message{}
	// JSON-RPC 2.0 answers a request whose id could not be read with
	// "id": null; accept that on responses (never on requests).
	if len(w.Method) == 0 && bytes.Equal(bytes.TrimSpace(w.ID), []byte("null")) {
		w.ID = nil
	}
	if len(w.ID) > 0 {
		id, err := parseID(w.ID)
		if err != nil {
			return m, NewError(CodeInvalidRequest, "invalid request: %v", err)
		}
		m.ID = id
	}
	if !bytes.Equal(bytes.TrimSpace(w.JSONRPC), []byte(`"2.0"`)) {
		if len(w.JSONRPC) == 0 {
			return m, NewError(CodeInvalidRequest, `invalid request: the "jsonrpc" member is missing; it must be "2.0"`)
		}
		return m, NewError(CodeInvalidRequest, `invalid request: "jsonrpc" must be "2.0", got %s`, w.JSONRPC)
	}
	if len(w.Method) > 0 {
		if w.Method[0] != '"' {
			return m, NewError(CodeInvalidRequest, "invalid request: method must be a string, got %s", kindOf(w.Method[0]))
		}
		if err := json.Unmarshal(w.Method, &m.Method); err != nil {
			return m, NewError(CodeInvalidRequest, "invalid request: method: %v", err)
		}
		if m.Method == "" {
			return m, NewError(CodeInvalidRequest, "invalid request: method is empty")
		}
		if p := bytes.TrimSpace(w.Params); len(p) > 0 && !bytes.Equal(p, []byte("null")) {
			if p[0] != '{' && p[0] != '[' {
				return m, NewError(CodeInvalidRequest, "invalid request: params must be an object or an array, got %s", kindOf(p[0]))
			}
			m.Params = p
		}
		return m, nil
	}
	// A response.
	if m.ID.IsZero() && len(w.Error) == 0 {
		return m, NewError(CodeInvalidRequest, "invalid request: a message needs a method (request or notification) or an id with a result or error (response)")
	}
	switch {
	case len(w.Result) > 0 && len(w.Error) > 0:
		return m, NewError(CodeInvalidRequest, "invalid response: it has both result and error")
	case len(w.Error) > 0:
		var e Error
		if err := json.Unmarshal(w.Error, &e); err != nil {
			return m, NewError(CodeInvalidRequest, "invalid response: error object: %v", err)
		}
		m.Error = &e
	case len(w.Result) > 0:
		m.Result = w.Result
	default:
		return m, NewError(CodeInvalidRequest, "invalid response: it has neither result nor error")
	}
	return m, nil
}

func describeSyntax(err error, syn *json.SyntaxError) string {
	if syn != nil {
		return fmt.Sprintf("%s (at byte %d)", syn.Error(), syn.Offset)
	}
	return err.Error()
}

// Append appends the JSON encoding of m to buf.
func (m *Message) Append(buf []byte) []byte {
	buf = append(buf, `{"jsonrpc":"2.0"`...)
	if !m.ID.IsZero() {
		buf = append(buf, `,"id":`...)
		buf = append(buf, m.ID.raw...)
	} else if m.Method == "" {
		buf = append(buf, `,"id":null`...)
	}
	if m.Method != "" {
		buf = append(buf, `,"method":`...)
		buf = appendString(buf, m.Method)
		if len(m.Params) > 0 {
			buf = append(buf, `,"params":`...)
			buf = append(buf, m.Params...)
		}
	} else if m.Error != nil {
		buf = append(buf, `,"error":{"code":`...)
		buf = strconv.AppendInt(buf, int64(m.Error.Code), 10)
		buf = append(buf, `,"message":`...)
		buf = appendString(buf, m.Error.Message)
		if len(m.Error.Data) > 0 {
			buf = append(buf, `,"data":`...)
			buf = append(buf, m.Error.Data...)
		}
		buf = append(buf, '}')
	} else {
		buf = append(buf, `,"result":`...)
		if len(m.Result) == 0 {
			buf = append(buf, "{}"...)
		} else {
			buf = append(buf, m.Result...)
		}
	}
	return append(buf, '}')
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

// NewRequest returns a request message with params marshalled from v.
func NewRequest(id ID, method string, params any) (*Message, error) {
	p, err := marshalParams(params)
	if err != nil {
		return nil, fmt.Errorf("%s params: %w", method, err)
	}
	return &Message{ID: id, Method: method, Params: p}, nil
}

// NewNotification returns a notification message with params marshalled from v.
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
