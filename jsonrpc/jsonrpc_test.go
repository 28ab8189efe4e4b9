package jsonrpc_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/toolwire/toolwire/jsonrpc"
)

func TestDecodeValid(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		id     string // the ID as JSON text; "" for none
		method string
		params string
		result string
		errMsg string // the error object's message, for error responses
		kind   string // "request", "notification" or "response"
	}{
		{
			name:   "request with a number id",
			in:     `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"x"}}`,
			id:     `1`,
			method: "tools/list",
			params: `{"cursor":"x"}`,
			kind:   "request",
		},
		{
			name:   "request with a string id kept byte for byte",
			in:     `{"jsonrpc":"2.0","id":"a\u0062c","method":"ping"}`,
			id:     `"a\u0062c"`,
			method: "ping",
			kind:   "request",
		},
		{
			name:   "request with a negative fractional id",
			in:     `{"jsonrpc":"2.0","id":-1.5e3,"method":"ping"}`,
			id:     `-1.5e3`,
			method: "ping",
			kind:   "request",
		},
		{
			name:   "params as an array",
			in:     `{"jsonrpc":"2.0","id":2,"method":"m","params":[1,2]}`,
			id:     `2`,
			method: "m",
			params: `[1,2]`,
			kind:   "request",
		},
		{
			name:   "params null is no params",
			in:     `{"jsonrpc":"2.0","id":2,"method":"m","params":null}`,
			id:     `2`,
			method: "m",
			kind:   "request",
		},
		{
			name:   "whitespace around members",
			in:     " {\n \"jsonrpc\" : \"2.0\" , \"method\" : \"n\" , \"params\" : { } }\n",
			method: "n",
			params: `{ }`,
			kind:   "notification",
		},
		{
			name:   "notification",
			in:     `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
			method: "notifications/initialized",
			kind:   "notification",
		},
		{
			name:   "result response",
			in:     `{"jsonrpc":"2.0","id":"s1","result":{"action":"accept"}}`,
			id:     `"s1"`,
			result: `{"action":"accept"}`,
			kind:   "response",
		},
		{
			name:   "error response",
			in:     `{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"method not found"}}`,
			id:     `3`,
			errMsg: "method not found",
			kind:   "response",
		},
		{
			name:   "error response without an id",
			in:     `{"jsonrpc":"2.0","error":{"code":-32700,"message":"parse error"}}`,
			errMsg: "parse error",
			kind:   "response",
		},
		{
			name:   "error response with a null id, as JSON-RPC 2.0 writes it",
			in:     `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`,
			errMsg: "parse error",
			kind:   "response",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := jsonrpc.Decode([]byte(tt.in))
			if err != nil {
				t.Fatalf("Decode(%s): %v", tt.in, err)
			}
			if got := m.ID.String(); got != tt.id {
				t.Errorf("ID = %q, want %q", got, tt.id)
			}
			if m.Method != tt.method {
				t.Errorf("Method = %q, want %q", m.Method, tt.method)
			}
			if string(m.Params) != tt.params {
				t.Errorf("Params = %s, want %s", m.Params, tt.params)
			}
			if string(m.Result) != tt.result {
				t.Errorf("Result = %s, want %s", m.Result, tt.result)
			}
			switch {
			case tt.errMsg == "" && m.Error != nil:
				t.Errorf("Error = %v, want none", m.Error)
			case tt.errMsg != "" && (m.Error == nil || m.Error.Message != tt.errMsg):
				t.Errorf("Error = %v, want message %q", m.Error, tt.errMsg)
			}
			kind := map[bool]string{true: "request"}[m.IsRequest()] +
				map[bool]string{true: "notification"}[m.IsNotification()] +
				map[bool]string{true: "response"}[m.IsResponse()]
			if kind != tt.kind {
				t.Errorf("kind = %q, want %q", kind, tt.kind)
			}
		})
	}
}

func TestDecodeInvalid(t *testing.T) {
	tests := []struct {
		name string
		in   string
		code int
		msg  string // a substring of the error message
		id   string // the ID the error response is addressed to; "" for none
	}{
		{"empty input", ``, jsonrpc.CodeParseError, "parse error", ""},
		{"not JSON", `hello`, jsonrpc.CodeParseError, "invalid character", ""},
		{"truncated object", `{"jsonrpc":"2.0","id":1,"method":`, jsonrpc.CodeParseError, "parse error", ""},
		{"trailing garbage", `{"jsonrpc":"2.0","method":"m"} x`, jsonrpc.CodeParseError, "parse error", ""},
		{"a number", `42`, jsonrpc.CodeInvalidRequest, "must be a JSON object, got number", ""},
		{"a string", `"ping"`, jsonrpc.CodeInvalidRequest, "must be a JSON object, got string", ""},
		{"an array (batch)", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, jsonrpc.CodeInvalidRequest, "must be a JSON object, got array", ""},
		{"null", `null`, jsonrpc.CodeInvalidRequest, `"jsonrpc" member is missing`, ""},
		{"jsonrpc missing", `{"id":1,"method":"ping"}`, jsonrpc.CodeInvalidRequest, `"jsonrpc" member is missing`, "1"},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":1,"method":"ping"}`, jsonrpc.CodeInvalidRequest, `"jsonrpc" must be "2.0", got "1.0"`, "1"},
		{"jsonrpc a number", `{"jsonrpc":2.0,"id":"x","method":"ping"}`, jsonrpc.CodeInvalidRequest, `"jsonrpc" must be "2.0", got 2.0`, `"x"`},
		{"id an object", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, jsonrpc.CodeInvalidRequest, "id must be a string or a number, got an object", ""},
		{"id an array", `{"jsonrpc":"2.0","id":[1],"method":"ping"}`, jsonrpc.CodeInvalidRequest, "id must be a string or a number, got an array", ""},
		{"id a boolean", `{"jsonrpc":"2.0","id":true,"method":"ping"}`, jsonrpc.CodeInvalidRequest, "id must be a string or a number, got a boolean", ""},
		{"id null on a request", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, jsonrpc.CodeInvalidRequest, "id must be a string or a number, got null", ""},
		// Not JSON text (RFC 8259 §8.1: JSON text is UTF-8), and an id that
		// cannot be echoed as sent: a parse error addressed to null.
		{"id with invalid UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":\"a\xff\",\"method\":\"ping\"}", jsonrpc.CodeParseError, "the id is not valid UTF-8", ""},
		{"id with a truncated UTF-8 sequence", "{\"jsonrpc\":\"2.0\",\"id\":\"\xe2\x82\",\"method\":\"ping\"}", jsonrpc.CodeParseError, "the id is not valid UTF-8", ""},
		{"response id with invalid UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":\"\xc0\xaf\",\"result\":{}}", jsonrpc.CodeParseError, "the id is not valid UTF-8", ""},
		{"method a number", `{"jsonrpc":"2.0","id":1,"method":5}`, jsonrpc.CodeInvalidRequest, "method must be a string, got a number", "1"},
		{"method empty", `{"jsonrpc":"2.0","id":1,"method":""}`, jsonrpc.CodeInvalidRequest, "method is empty", "1"},
		{"params a number", `{"jsonrpc":"2.0","id":1,"method":"m","params":5}`, jsonrpc.CodeInvalidRequest, "params must be an object or an array, got a number", "1"},
		{"params a string", `{"jsonrpc":"2.0","id":1,"method":"m","params":"x"}`, jsonrpc.CodeInvalidRequest, "params must be an object or an array, got a string", "1"},
		{"no method and no id", `{"jsonrpc":"2.0","result":{}}`, jsonrpc.CodeInvalidRequest, "needs a method", ""},
		{"result and error", `{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}`, jsonrpc.CodeInvalidRequest, "both result and error", "1"},
		{"neither result nor error", `{"jsonrpc":"2.0","id":1}`, jsonrpc.CodeInvalidRequest, "neither result nor error", "1"},
		{"error not an object", `{"jsonrpc":"2.0","id":1,"error":"bad"}`, jsonrpc.CodeInvalidRequest, "error object", "1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := jsonrpc.Decode([]byte(tt.in))
			if err == nil {
				t.Fatalf("Decode(%s) succeeded, want error %d", tt.in, tt.code)
			}
			var e *jsonrpc.Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T %v is not a *jsonrpc.Error", err, err)
			}
			if e.Code != tt.code {
				t.Errorf("code = %d, want %d (%s)", e.Code, tt.code, e.Message)
			}
			if !strings.Contains(e.Message, tt.msg) {
				t.Errorf("message %q does not contain %q", e.Message, tt.msg)
			}
			if m == nil {
				t.Fatal("Decode returned a nil message with its error; the error response needs one")
			}
			if got := m.ID.String(); got != tt.id {
				t.Errorf("ID = %q, want %q", got, tt.id)
			}
		})
	}
}

func TestAppend(t *testing.T) {
	tests := []struct {
		name string
		m    *jsonrpc.Message
		want string
	}{
		{"request", &jsonrpc.Message{ID: jsonrpc.Int64ID(7), Method: "tools/list", Params: json.RawMessage(`{}`)},
			`{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{}}`},
		{"request without params", &jsonrpc.Message{ID: jsonrpc.StringID("a"), Method: "ping"},
			`{"jsonrpc":"2.0","id":"a","method":"ping"}`},
		{"notification", &jsonrpc.Message{Method: "notifications/initialized"},
			`{"jsonrpc":"2.0","method":"notifications/initialized"}`},
		{"method needing escapes", &jsonrpc.Message{Method: "a\"b\n<é>"},
			`{"jsonrpc":"2.0","method":"a\"b\n<é>"}`},
		{"result", &jsonrpc.Message{ID: jsonrpc.Int64ID(1), Result: json.RawMessage(`{"x":1}`)},
			`{"jsonrpc":"2.0","id":1,"result":{"x":1}}`},
		{"empty result", &jsonrpc.Message{ID: jsonrpc.Int64ID(1)},
			`{"jsonrpc":"2.0","id":1,"result":{}}`},
		{"error with data", &jsonrpc.Message{ID: jsonrpc.Int64ID(1), Error: &jsonrpc.Error{Code: -32602, Message: `bad "x"`, Data: json.RawMessage(`{"k":1}`)}},
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad \"x\"","data":{"k":1}}}`},
		{"error without id", &jsonrpc.Message{Error: jsonrpc.NewError(jsonrpc.CodeParseError, "parse error")},
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(tt.m.Append([]byte("prefix:")))
			if got != "prefix:"+tt.want {
				t.Errorf("Append =\n%s\nwant\n%s", got, "prefix:"+tt.want)
			}
			b, err := json.Marshal(tt.m)
			if err != nil {
				t.Fatal(err)
			}
			if !json.Valid(b) {
				t.Errorf("MarshalJSON gave invalid JSON: %s", b)
			}
			// What Append writes must read back as the same message.
			back, err := jsonrpc.Decode([]byte(tt.want))
			if err != nil {
				t.Fatalf("Decode(Append(m)): %v", err)
			}
			if d := diffMessages(tt.m, back); d != "" {
				t.Errorf("round trip: %s", d)
			}
		})
	}
}

// diffMessages describes how two messages differ; "" when they are equal.
// An absent result and {} are the same (Append writes {} for none).
func diffMessages(a, b *jsonrpc.Message) string {
	var d []string
	if a.ID != b.ID {
		d = append(d, fmt.Sprintf("ID %q != %q", a.ID, b.ID))
	}
	if a.Method != b.Method {
		d = append(d, fmt.Sprintf("Method %q != %q", a.Method, b.Method))
	}
	if !bytes.Equal(a.Params, b.Params) {
		d = append(d, fmt.Sprintf("Params %s != %s", a.Params, b.Params))
	}
	ra, rb := a.Result, b.Result
	if a.Method == "" && a.Error == nil && len(ra) == 0 {
		ra = json.RawMessage("{}")
	}
	if !bytes.Equal(ra, rb) {
		d = append(d, fmt.Sprintf("Result %s != %s", ra, rb))
	}
	switch {
	case (a.Error == nil) != (b.Error == nil):
		d = append(d, fmt.Sprintf("Error %v != %v", a.Error, b.Error))
	case a.Error != nil:
		if a.Error.Code != b.Error.Code || a.Error.Message != b.Error.Message || !bytes.Equal(a.Error.Data, b.Error.Data) {
			d = append(d, fmt.Sprintf("Error %v != %v", a.Error, b.Error))
		}
	}
	return strings.Join(d, "; ")
}

func TestID(t *testing.T) {
	tests := []struct {
		name string
		id   jsonrpc.ID
		json string
	}{
		{"string", jsonrpc.StringID("abc"), `"abc"`},
		{"string needing escapes", jsonrpc.StringID("a\"b"), `"a\"b"`},
		{"integer", jsonrpc.Int64ID(-42), `-42`},
		{"zero", jsonrpc.ID{}, `null`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.id)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tt.json {
				t.Errorf("Marshal = %s, want %s", b, tt.json)
			}
			if tt.id.IsZero() {
				if tt.id.Raw() != nil || tt.id.String() != "" {
					t.Errorf("zero ID: Raw = %s, String = %q", tt.id.Raw(), tt.id.String())
				}
				return
			}
			if tt.id.String() != tt.json || string(tt.id.Raw()) != tt.json {
				t.Errorf("String = %q, Raw = %s, want %s", tt.id.String(), tt.id.Raw(), tt.json)
			}
			var back jsonrpc.ID
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			if back != tt.id {
				t.Errorf("Unmarshal(Marshal(id)) = %v, want %v", back, tt.id)
			}
		})
	}
	for _, bad := range []string{`null`, `true`, `{}`, `[]`, "\"\xff\""} {
		var id jsonrpc.ID
		if err := json.Unmarshal([]byte(bad), &id); err == nil {
			t.Errorf("Unmarshal(%s) into ID succeeded, want an error", bad)
		}
	}
}

func TestError(t *testing.T) {
	e := jsonrpc.NewError(jsonrpc.CodeInvalidParams, "bad %s", "cursor")
	if got, want := e.Error(), "jsonrpc error -32602: bad cursor"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	d := e.WithData(map[string]string{"cursor": "x"})
	if e.Data != nil {
		t.Error("WithData changed its receiver")
	}
	if got, want := d.Error(), `jsonrpc error -32602: bad cursor (data: {"cursor":"x"})`; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	wrapped := fmt.Errorf("calling: %w", d)
	var target *jsonrpc.Error
	if !errors.As(wrapped, &target) || target.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("errors.As through %%w failed: %v", target)
	}
}

func TestNewRequestAndNotification(t *testing.T) {
	req, err := jsonrpc.NewRequest(jsonrpc.Int64ID(1), "tools/call", map[string]any{"name": "<b>"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(req.Append(nil)), `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"<b>"}}`; got != want {
		t.Errorf("request = %s, want %s", got, want)
	}
	n, err := jsonrpc.NewNotification("notifications/progress", json.RawMessage(`{"progress":1}`))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(n.Append(nil)), `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}`; got != want {
		t.Errorf("notification = %s, want %s", got, want)
	}
	n, err = jsonrpc.NewNotification("notifications/initialized", nil)
	if err != nil {
		t.Fatal(err)
	}
	if n.Params != nil {
		t.Errorf("nil params marshalled to %s", n.Params)
	}
	if _, err := jsonrpc.NewRequest(jsonrpc.Int64ID(1), "m", make(chan int)); err == nil || !strings.Contains(err.Error(), "m params") {
		t.Errorf("unmarshallable params: err = %v, want one naming the method", err)
	}
}

func TestMarshal(t *testing.T) {
	b, err := jsonrpc.Marshal(map[string]string{"html": "<a&b>"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), `{"html":"<a&b>"}`; got != want {
		t.Errorf("Marshal = %s, want %s (no HTML escaping, no newline)", got, want)
	}
}

func TestLineReader(t *testing.T) {
	long := strings.Repeat("x", 100)
	tests := []struct {
		name  string
		in    string
		limit int
		want  []string // lines, or "TOO LARGE" for a *TooLargeError
	}{
		{"lines", "a\nb\n", 0, []string{"a", "b"}},
		{"CRLF endings", "a\r\nb\r\n", 0, []string{"a", "b"}},
		{"blank lines skipped", "\n\n  \na\n\r\n\t\nb\n", 0, []string{"a", "b"}},
		{"last line without newline", "a\nb", 0, []string{"a", "b"}},
		{"line at the limit", "12345\n", 5, []string{"12345"}},
		{"CRLF line at the limit", "12345\r\n", 5, []string{"12345"}},
		{"last line at the limit without newline", "12345", 5, []string{"12345"}},
		{"line over the limit, then more", "123456\nok\n", 5, []string{"TOO LARGE", "ok"}},
		{"huge line spanning buffer fills", strings.Repeat(long, 1000) + "\nok\n", 50, []string{"TOO LARGE", "ok"}},
		{"over the limit at end of input", "ok\n123456", 5, []string{"ok", "TOO LARGE"}},
		{"several oversized lines", long + "\n" + long + "\nok\n", 10, []string{"TOO LARGE", "TOO LARGE", "ok"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lr := jsonrpc.NewLineReader(strings.NewReader(tt.in), tt.limit)
			var got []string
			for {
				line, err := lr.ReadLine()
				if err == io.EOF {
					break
				}
				if err != nil {
					var tl *jsonrpc.TooLargeError
					if !errors.As(err, &tl) || !errors.Is(err, jsonrpc.ErrTooLarge) {
						t.Fatalf("ReadLine error %v, want a *TooLargeError", err)
					}
					if !strings.Contains(err.Error(), fmt.Sprintf("limit of %d bytes", tl.Limit)) {
						t.Errorf("error %q does not name the limit", err)
					}
					got = append(got, "TOO LARGE")
					continue
				}
				got = append(got, string(line))
				if len(got) > 10 {
					t.Fatal("too many lines")
				}
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("lines = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestLineWriterConcurrent(t *testing.T) {
	var buf bytes.Buffer
	lw := jsonrpc.NewLineWriter(&buf)
	const n = 50
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			big := strings.Repeat("y", 1000+i)
			if i%2 == 0 {
				m, _ := jsonrpc.NewNotification("n", map[string]string{"s": big})
				if err := lw.Write(m); err != nil {
					t.Error(err)
				}
			} else if err := lw.WriteRaw([]byte(`{"jsonrpc":"2.0","method":"n","params":{"s":"` + big + `"}}`)); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != n {
		t.Fatalf("%d lines, want %d", len(lines), n)
	}
	for _, l := range lines {
		if _, err := jsonrpc.Decode([]byte(l)); err != nil {
			t.Errorf("interleaved or broken line: %v", err)
		}
	}
}

func TestReadBody(t *testing.T) {
	for _, size := range []int64{-1, 5, 9} { // unknown, right, over the limit
		b, err := jsonrpc.ReadBody(strings.NewReader("12345"), size, 5)
		if err != nil || string(b) != "12345" {
			t.Errorf("ReadBody at the limit, declared size %d = %q, %v", size, b, err)
		}
	}
	if b, err := jsonrpc.ReadBody(strings.NewReader("12345"), 3, 5); err != nil || string(b) != "123" {
		t.Errorf("ReadBody with a declared size of 3 = %q, %v; want the first 3 bytes", b, err)
	}
	if _, err := jsonrpc.ReadBody(strings.NewReader("12"), 3, 5); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("ReadBody of a body shorter than declared: err = %v, want io.ErrUnexpectedEOF", err)
	}
	// Bodies past the first 64 KiB read ahead: whole, or cut short at a
	// point where the buffer grows.
	big := strings.Repeat("x", 200<<10)
	if b, err := jsonrpc.ReadBody(strings.NewReader(big), int64(len(big)), 1<<20); err != nil || string(b) != big {
		t.Errorf("ReadBody of %d bytes = %d bytes, %v", len(big), len(b), err)
	}
	if _, err := jsonrpc.ReadBody(strings.NewReader(big[:128<<10]), int64(len(big)), 1<<20); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("ReadBody of a big body cut short: err = %v, want io.ErrUnexpectedEOF", err)
	}
	_, err := jsonrpc.ReadBody(strings.NewReader("123456"), 6, 5)
	var tl *jsonrpc.TooLargeError
	if !errors.As(err, &tl) || tl.Limit != 5 || !errors.Is(err, jsonrpc.ErrTooLarge) {
		t.Errorf("ReadBody over the limit: err = %v, want a *TooLargeError with Limit 5", err)
	}
	_, err = jsonrpc.ReadBody(io.MultiReader(strings.NewReader("ab"), errReader{}), -1, 0)
	if err == nil || !errors.Is(err, errBoom) {
		t.Errorf("ReadBody of a failing reader: err = %v, want it to wrap the read error", err)
	}
}

var errBoom = errors.New("boom")

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errBoom }

func TestIsBatch(t *testing.T) {
	for in, want := range map[string]bool{
		`[{"jsonrpc":"2.0"}]`: true,
		" \r\n\t[]":           true,
		`{"jsonrpc":"2.0"}`:   false,
		``:                    false,
		`  `:                  false,
		`"["`:                 false,
	} {
		if got := jsonrpc.IsBatch([]byte(in)); got != want {
			t.Errorf("IsBatch(%q) = %v, want %v", in, got, want)
		}
	}
}

// stutterReader hands out its chunks one per Read, failing with errAgain
// between them, as a pipe read with a deadline does.
type stutterReader struct {
	chunks []string
	fail   bool
}

var errAgain = errors.New("deadline exceeded")

func (r *stutterReader) Read(p []byte) (int, error) {
	if r.fail = !r.fail; r.fail {
		return 0, errAgain
	}
	if len(r.chunks) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.chunks[0])
	r.chunks = r.chunks[1:]
	return n, nil
}

// TestLineReaderResumes shows that a failed read loses nothing: the line
// in progress goes on with the next ReadLine, oversized or not.
func TestLineReaderResumes(t *testing.T) {
	r := &stutterReader{chunks: []string{`{"a":`, `1}` + "\n" + `{"b"`, `:2}` + "\n", "1234", "5678\n", "ok\n"}}
	lr := jsonrpc.NewLineReader(r, 7)
	var got []string
	for {
		line, err := lr.ReadLine()
		if errors.Is(err, errAgain) {
			continue
		}
		if errors.Is(err, jsonrpc.ErrTooLarge) {
			got = append(got, "TOO LARGE")
			continue
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(line))
	}
	want := []string{`{"a":1}`, `{"b":2}`, "TOO LARGE", "ok"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("lines %q, want %q", got, want)
	}
}

// TestLineReaderDecode reads a large message and then a small one: each
// keeps its own params, whether it was decoded in place or copied.
func TestLineReaderDecode(t *testing.T) {
	big := `{"jsonrpc":"2.0","id":1,"method":"m","params":{"t":"` + strings.Repeat("x", 100<<10) + `"}}`
	small := `{"jsonrpc":"2.0","id":2,"method":"m","params":{"t":"y"}}`
	lr := jsonrpc.NewLineReader(strings.NewReader(big+"\n"+small+"\n"+big+"\n"), 0)
	var msgs []*jsonrpc.Message
	for range 3 {
		line, err := lr.ReadLine()
		if err != nil {
			t.Fatal(err)
		}
		m, err := lr.Decode(line)
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, m)
	}
	want := []string{big, small, big}
	for i, m := range msgs {
		var w struct{ Params json.RawMessage }
		if err := json.Unmarshal([]byte(want[i]), &w); err != nil {
			t.Fatal(err)
		}
		if string(m.Params) != string(w.Params) {
			t.Errorf("message %d: params changed after later reads (%d bytes, want %d)", i, len(m.Params), len(w.Params))
		}
	}
}

// TestWriteTo shows that WriteTo writes what Append appends, and Len
// counts it, for every kind of message, small and large.
func TestWriteTo(t *testing.T) {
	large := json.RawMessage(`{"t":"` + strings.Repeat("x", 10<<10) + `"}`)
	for _, m := range []*jsonrpc.Message{
		{ID: jsonrpc.Int64ID(1), Method: "m"},
		{ID: jsonrpc.StringID("a"), Method: "m", Params: large},
		{Method: "n", Params: json.RawMessage(`[1]`)},
		{ID: jsonrpc.Int64ID(2), Result: large},
		{ID: jsonrpc.Int64ID(3)},
		{ID: jsonrpc.Int64ID(4), Error: jsonrpc.NewError(jsonrpc.CodeInternalError, "boom").WithData(map[string]int{"n": 1})},
		{Error: jsonrpc.NewError(jsonrpc.CodeParseError, "parse error")},
	} {
		want := m.Append(nil)
		var b bytes.Buffer
		n, err := m.WriteTo(&b)
		if err != nil || n != int64(len(want)) || b.String() != string(want) || m.Len() != len(want) {
			t.Errorf("WriteTo wrote %d bytes (%v), Len %d; Append %d bytes:\n got %.80s\nwant %.80s", n, err, m.Len(), len(want), b.String(), want)
		}
	}
}

// TestLineWriterLarge shows that a large message, written in parts, comes
// out as one line equal to its encoding.
func TestLineWriterLarge(t *testing.T) {
	var b bytes.Buffer
	lw := jsonrpc.NewLineWriter(&b)
	big := &jsonrpc.Message{ID: jsonrpc.Int64ID(1), Result: json.RawMessage(`"` + strings.Repeat("x", 100<<10) + `"`)}
	small := &jsonrpc.Message{Method: "n"}
	for _, m := range []*jsonrpc.Message{big, small, big} {
		if err := lw.Write(m); err != nil {
			t.Fatal(err)
		}
	}
	want := string(big.Append(nil)) + "\n" + string(small.Append(nil)) + "\n" + string(big.Append(nil)) + "\n"
	if b.String() != want {
		t.Errorf("wrote %d bytes, want %d", b.Len(), len(want))
	}
}
