package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
)

// badInputMaxMessage is the Server.MaxMessageSize of the bad input tests.
const badInputMaxMessage = 2048

// badCase is a message a client gets wrong, and what it should get back.
type badCase struct {
	name string
	body string // the line (stdio) or POST body (HTTP)

	// The error response: its code, a substring of its message naming the
	// problem, and the id it is addressed to (JSON text; "null" for none).
	code int
	msg  string
	id   string
	// requested is, for CodeUnsupportedProtocolVersion, the version the
	// error's data must echo.
	requested string
	// toolError, when set, means no protocol error but a tools/call result
	// with isError whose text contains it.
	toolError string
	// noReply means the server must answer nothing (stdio).
	noReply bool

	httpOnly bool
	http     *httpWant // nil: not meaningful over Streamable HTTP
}

// httpWant is the Streamable HTTP outcome of a bad case.
type httpWant struct {
	headers map[string]string // MCP headers sent with the POST
	status  int
	code    int    // 0: the case's code; -1: no JSON-RPC body
	msg     string // "": the case's msg
	bug     string // a known server bug that makes this case fail: skip it
}

// rpc builds a request line.
func rpc(id any, method string, params any) string {
	m := map[string]any{"jsonrpc": "2.0", "method": method}
	if id != nil {
		m["id"] = id
	}
	if params != nil {
		m["params"] = params
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func badCases() []badCase {
	mh := modernHeaders
	list := mh(mcp.MethodToolsList, "")
	call := func(name string) map[string]string { return mh(mcp.MethodToolsCall, name) }
	withVersion := func(h map[string]string, v string) map[string]string {
		h[mcp.HeaderProtocolVersion] = v
		return h
	}
	without := func(h map[string]string, key string) map[string]string {
		delete(h, key)
		return h
	}
	badMeta := func(kv ...any) map[string]any {
		m := meta()
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i+1] == nil {
				delete(m, kv[i].(string))
			} else {
				m[kv[i].(string)] = kv[i+1]
			}
		}
		return m
	}
	return []badCase{
		{
			name: "not JSON (truncated)", body: `{"jsonrpc":"2.0","id":1,"method":`,
			code: jsonrpc.CodeParseError, msg: "parse error", id: "null",
			http: &httpWant{status: 400},
		},
		{
			name: "not JSON (garbage)", body: `hello {`,
			code: jsonrpc.CodeParseError, msg: "invalid character", id: "null",
			http: &httpWant{status: 400},
		},
		{
			name: "JSON number, not an object", body: `42`,
			code: jsonrpc.CodeInvalidRequest, msg: "must be a JSON object, got number", id: "null",
			http: &httpWant{status: 400},
		},
		{
			name: "JSON string, not an object", body: `"tools/list"`,
			code: jsonrpc.CodeInvalidRequest, msg: "must be a JSON object, got string", id: "null",
			http: &httpWant{status: 400},
		},
		{
			name: "JSON array (a batch)", body: `[` + rpc(1, "tools/list", modern(nil)) + `]`,
			code: jsonrpc.CodeInvalidRequest, msg: "must be a JSON object, got array", id: "null",
			http: &httpWant{status: 400, msg: "batches are not supported"},
		},
		{
			name: "jsonrpc missing", body: `{"id":1,"method":"tools/list"}`,
			code: jsonrpc.CodeInvalidRequest, msg: `"jsonrpc" member is missing`, id: "1",
			http: &httpWant{headers: list, status: 400},
		},
		{
			name: "jsonrpc 1.0", body: `{"jsonrpc":"1.0","id":1,"method":"tools/list"}`,
			code: jsonrpc.CodeInvalidRequest, msg: `"jsonrpc" must be "2.0", got "1.0"`, id: "1",
			http: &httpWant{headers: list, status: 400},
		},
		{
			name: "jsonrpc a number", body: `{"jsonrpc":2.0,"id":"a","method":"tools/list"}`,
			code: jsonrpc.CodeInvalidRequest, msg: `"jsonrpc" must be "2.0", got 2.0`, id: `"a"`,
			http: &httpWant{headers: list, status: 400},
		},
		{
			name: "id an object", body: `{"jsonrpc":"2.0","id":{"n":1},"method":"tools/list"}`,
			code: jsonrpc.CodeInvalidRequest, msg: "id must be a string or a number, got an object", id: "null",
			http: &httpWant{headers: list, status: 400},
		},
		{
			name: "id a boolean", body: `{"jsonrpc":"2.0","id":true,"method":"tools/list"}`,
			code: jsonrpc.CodeInvalidRequest, msg: "id must be a string or a number, got a boolean", id: "null",
			http: &httpWant{headers: list, status: 400},
		},
		{
			name: "id null", body: `{"jsonrpc":"2.0","id":null,"method":"tools/list"}`,
			code: jsonrpc.CodeInvalidRequest, msg: "id must be a string or a number, got null", id: "null",
			http: &httpWant{headers: list, status: 400},
		},
		{
			name: "method not a string", body: `{"jsonrpc":"2.0","id":2,"method":["tools/list"]}`,
			code: jsonrpc.CodeInvalidRequest, msg: "method must be a string, got an array", id: "2",
			http: &httpWant{headers: list, status: 400},
		},
		{
			name: "message with neither method nor id", body: `{"jsonrpc":"2.0","result":{}}`,
			code: jsonrpc.CodeInvalidRequest, msg: "needs a method", id: "null",
			http: &httpWant{status: 400},
		},
		{
			name: "unknown method", body: rpc(3, "tools/nope", modern(nil)),
			code: jsonrpc.CodeMethodNotFound, msg: `"tools/nope"`, id: "3",
			http: &httpWant{headers: mh("tools/nope", ""), status: 404},
		},
		{
			name: "legacy-only method in a modern request", body: rpc(3, mcp.MethodSetLevel, modern(map[string]any{"level": "error"})),
			code: jsonrpc.CodeMethodNotFound, msg: "logging/setLevel is not part of protocol 2026-07-28", id: "3",
			http: &httpWant{headers: mh(mcp.MethodSetLevel, ""), status: 404},
		},
		{
			name: "params a number", body: `{"jsonrpc":"2.0","id":4,"method":"tools/list","params":5}`,
			code: jsonrpc.CodeInvalidRequest, msg: "params must be an object or an array, got a number", id: "4",
			http: &httpWant{headers: list, status: 400},
		},
		{
			name: "params an array", body: `{"jsonrpc":"2.0","id":4,"method":"tools/list","params":[1]}`,
			code: jsonrpc.CodeInvalidParams, msg: "params must be an object", id: "4",
			http: &httpWant{headers: list, status: 400, msg: "params._meta is missing"},
		},
		{
			name: "cursor of the wrong type", body: rpc(5, mcp.MethodToolsList, modern(map[string]any{"cursor": 5})),
			code: jsonrpc.CodeInvalidParams, msg: "cursor must be a string, got number", id: "5",
			http: &httpWant{headers: list, status: 200},
		},
		{
			name: "tools/call name of the wrong type", body: rpc(6, mcp.MethodToolsCall, modern(map[string]any{"name": 5})),
			code: jsonrpc.CodeInvalidParams, msg: "name must be a string, got number", id: "6",
		},
		{
			name: "tools/call without a name", body: rpc(6, mcp.MethodToolsCall, modern(map[string]any{"arguments": map[string]any{}})),
			code: jsonrpc.CodeInvalidParams, msg: "name is missing", id: "6",
		},
		{
			name: "tools/call of an unknown tool", body: rpc(6, mcp.MethodToolsCall, modern(map[string]any{"name": "nope"})),
			code: jsonrpc.CodeInvalidParams, msg: `unknown tool "nope"`, id: "6",
			http: &httpWant{headers: call("nope"), status: 200},
		},
		{
			name: "arguments of the wrong type for the schema",
			body: rpc(7, mcp.MethodToolsCall, modern(map[string]any{"name": "add", "arguments": map[string]any{"a": "one", "b": 2}})),
			id:   "7", toolError: `invalid arguments for tool add: argument "a": expected number, got string "one"`,
			http: &httpWant{headers: call("add"), status: 200},
		},
		{
			name: "arguments missing a required property",
			body: rpc(7, mcp.MethodToolsCall, modern(map[string]any{"name": "add", "arguments": map[string]any{"a": 1}})),
			id:   "7", toolError: `invalid arguments for tool add: missing required argument "b"`,
			http: &httpWant{headers: call("add"), status: 200},
		},
		{
			name: "arguments not an object",
			body: rpc(7, mcp.MethodToolsCall, modern(map[string]any{"name": "add", "arguments": []int{1, 2}})),
			id:   "7", toolError: `invalid arguments for tool add`,
			http: &httpWant{headers: call("add"), status: 200},
		},
		{
			name: "arguments the tool itself rejects",
			body: rpc(7, mcp.MethodToolsCall, modern(map[string]any{"name": "divide", "arguments": map[string]any{"a": 1, "b": 0}})),
			id:   "7", toolError: `argument "b" must not be 0`,
			http: &httpWant{headers: call("divide"), status: 200},
		},
		{
			name: "message over the size limit",
			body: rpc(8, mcp.MethodToolsCall, modern(map[string]any{"name": "echo", "arguments": map[string]any{"text": strings.Repeat("x", badInputMaxMessage)}})),
			code: jsonrpc.CodeInvalidRequest, msg: "exceeds the limit of 2048 bytes", id: "null",
			http: &httpWant{headers: call("echo"), status: http.StatusRequestEntityTooLarge},
		},
		{
			name: "legacy request before initialize", body: rpc(9, mcp.MethodToolsList, nil),
			code: jsonrpc.CodeInvalidRequest, msg: "send initialize first", id: "9",
			http: &httpWant{status: 400},
		},
		{
			name: "modern request with an unknown protocol version",
			body: rpc(10, mcp.MethodToolsList, map[string]any{"_meta": badMeta(mcp.MetaProtocolVersion, "2099-01-01")}),
			code: mcp.CodeUnsupportedProtocolVersion, msg: `Unsupported protocol version "2099-01-01"`, id: "10", requested: "2099-01-01",
			http: &httpWant{headers: withVersion(mh(mcp.MethodToolsList, ""), "2099-01-01"), status: 400},
		},
		{
			name: "legacy protocol version in _meta without initialize",
			body: rpc(10, mcp.MethodToolsList, map[string]any{"_meta": badMeta(mcp.MetaProtocolVersion, mcp.Version20250618)}),
			code: mcp.CodeUnsupportedProtocolVersion, msg: `Unsupported protocol version "2025-06-18"`, id: "10", requested: mcp.Version20250618,
			http: &httpWant{headers: withVersion(mh(mcp.MethodToolsList, ""), mcp.Version20250618), status: 400},
		},
		{
			name: "modern request without client capabilities",
			body: rpc(11, mcp.MethodToolsList, map[string]any{"_meta": badMeta(mcp.MetaClientCapabilities, nil)}),
			code: jsonrpc.CodeInvalidParams, msg: mcp.MetaClientCapabilities, id: "11",
			http: &httpWant{headers: list, status: 400},
		},
		{
			name: "modern request with an unknown log level",
			body: rpc(11, mcp.MethodToolsList, map[string]any{"_meta": badMeta(mcp.MetaLogLevel, "loud")}),
			code: jsonrpc.CodeInvalidParams, msg: `unknown log level "loud"`, id: "11",
			http: &httpWant{headers: list, status: 200},
		},
		{
			name: "Mcp-Method header not matching the body", httpOnly: true,
			body: rpc(12, mcp.MethodToolsList, modern(nil)),
			code: mcp.CodeHeaderMismatch, msg: `Mcp-Method header "tools/call" does not match body method "tools/list"`, id: "12",
			http: &httpWant{headers: mh(mcp.MethodToolsCall, ""), status: 400},
		},
		{
			name: "Mcp-Method header missing", httpOnly: true,
			body: rpc(12, mcp.MethodToolsList, modern(nil)),
			code: mcp.CodeHeaderMismatch, msg: "the Mcp-Method header is missing", id: "12",
			http: &httpWant{headers: without(mh(mcp.MethodToolsList, ""), mcp.HeaderMethod), status: 400},
		},
		{
			name: "Mcp-Name header not matching the body", httpOnly: true,
			body: rpc(12, mcp.MethodToolsCall, modern(map[string]any{"name": "echo"})),
			code: mcp.CodeHeaderMismatch, msg: `Mcp-Name header "add" does not match body value "echo"`, id: "12",
			http: &httpWant{headers: call("add"), status: 400},
		},
		{
			name: "Mcp-Protocol-Version header not matching _meta", httpOnly: true,
			body: rpc(12, mcp.MethodToolsList, modern(nil)),
			code: mcp.CodeHeaderMismatch, msg: `header "2025-11-25" does not match`, id: "12",
			http: &httpWant{headers: withVersion(mh(mcp.MethodToolsList, ""), mcp.Version20251125), status: 400},
		},
		{
			name: "Mcp-Protocol-Version header missing", httpOnly: true,
			body: rpc(12, mcp.MethodToolsList, modern(nil)),
			code: mcp.CodeHeaderMismatch, msg: "the Mcp-Protocol-Version header is missing", id: "12",
			http: &httpWant{headers: without(mh(mcp.MethodToolsList, ""), mcp.HeaderProtocolVersion), status: 400},
		},
		{
			name: "tampered requestState",
			body: rpc(13, mcp.MethodToolsCall, modern(map[string]any{"name": "echo", "requestState": "eyJtIjoidG9vbHMvY2FsbCJ9.AAAA"})),
			code: jsonrpc.CodeInvalidParams, msg: "invalid requestState: it was not issued by this server or has been modified", id: "13",
			http: &httpWant{headers: call("echo"), status: 200},
		},
		{
			name: "tool panics", body: rpc(14, mcp.MethodToolsCall, modern(map[string]any{"name": "boom"})),
			toolError: "tool boom failed: it panicked: kaboom", id: "14",
			http: &httpWant{headers: call("boom"), status: 200},
		},
		{
			// Not JSON text (RFC 8259: JSON text is UTF-8), and an id that
			// cannot go back as sent: a parse error addressed to null.
			name: "id with invalid UTF-8", body: withRaw(rpc("ID", mcp.MethodToolsList, modern(nil)), `"ID"`, "\"a\xff\""),
			code: jsonrpc.CodeParseError, msg: "the id is not valid UTF-8", id: "null",
			http: &httpWant{headers: list, status: 400},
		},
		{
			// Echoed in every progress notification of the request.
			name: "progressToken with invalid UTF-8",
			body: withRaw(rpc(15, mcp.MethodToolsCall, modern(map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"}}, "progressToken", "TOKEN")), `"TOKEN"`, "\"\xfe\xff\""),
			code: jsonrpc.CodeInvalidParams, msg: "progressToken is not valid UTF-8", id: "15",
			http: &httpWant{headers: call("echo"), status: 200},
		},
		{
			// The name comes back in the error, as valid UTF-8.
			name: "method with invalid UTF-8", body: withRaw(rpc(16, "METHOD", modern(nil)), `"METHOD"`, "\"tools/\xff\""),
			code: jsonrpc.CodeMethodNotFound, msg: "tools/\ufffd", id: "16",
		},
		{
			name: "tool name with invalid UTF-8",
			body: withRaw(rpc(17, mcp.MethodToolsCall, modern(map[string]any{"name": "NAME"})), `"NAME"`, "\"e\xffcho\""),
			code: jsonrpc.CodeInvalidParams, msg: "unknown tool", id: "17",
		},
		{
			name: "unknown notification", body: rpc(nil, "notifications/whatever", map[string]any{}),
			noReply: true,
			http:    &httpWant{status: http.StatusAccepted, code: -1},
		},
		{
			name: "malformed cancellation", body: rpc(nil, mcp.NotificationCancelled, map[string]any{"requestId": true}),
			noReply: true,
		},
		{
			name: "response to no request", body: `{"jsonrpc":"2.0","id":"s99","result":{}}`,
			noReply: true, id: `"s99"`,
			http: &httpWant{status: 400, code: jsonrpc.CodeInvalidRequest, msg: "responses belong to a legacy session"},
		},
	}
}

// withRaw returns body with the first old replaced by raw bytes that
// json.Marshal would not write (invalid UTF-8).
func withRaw(body, old, raw string) string {
	if !strings.Contains(body, old) {
		panic(old + " is not in " + body)
	}
	return strings.Replace(body, old, raw, 1)
}

func newBadInputServer(t *testing.T) *mcp.Server {
	srv := newServer(t, echoTool(), addTool(), divideTool(), panicTool())
	srv.MaxMessageSize = badInputMaxMessage
	return srv
}

// checkBadReply checks the server's answer to a bad case.
func checkBadReply(t *testing.T, tc badCase, resp *rpcMsg, code int, msg string) {
	t.Helper()
	if tc.toolError != "" {
		if resp.Error != nil || !resp.hasID(tc.id) {
			t.Fatalf("want a tool error result for id %s, got %s", tc.id, resp)
		}
		text, isError := toolText(t, resp)
		if !isError {
			t.Errorf("result has isError false: %s", resp)
		}
		if !strings.Contains(text, tc.toolError) {
			t.Errorf("tool error %q does not contain %q", text, tc.toolError)
		}
		return
	}
	expectError(t, resp, tc.id, code, msg)
	if code == mcp.CodeUnsupportedProtocolVersion {
		var data struct {
			Supported []string `json:"supported"`
			Requested string   `json:"requested"`
		}
		if err := json.Unmarshal(resp.Error.Data, &data); err != nil {
			t.Fatalf("error data %s: %v", resp.Error.Data, err)
		}
		if !slices.Equal(data.Supported, mcp.SupportedVersions()) || data.Requested != tc.requested {
			t.Errorf("error data = %+v, want supported %v and requested %q", data, mcp.SupportedVersions(), tc.requested)
		}
	}
}

func TestBadInputStdio(t *testing.T) {
	srv := newBadInputServer(t)
	for _, tc := range badCases() {
		if tc.httpOnly {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			c := startStdio(t, srv)
			c.send(tc.body)
			if tc.noReply {
				c.expectQuiet()
			} else {
				checkBadReply(t, tc, c.next(), tc.code, tc.msg)
			}
			// The connection survives: the next request is answered.
			expectTools(t, c.call(mcp.MethodToolsList, modern(nil)), "add", "boom", "divide", "echo")
		})
	}
}

func TestBadInputHTTP(t *testing.T) {
	srv := newBadInputServer(t)
	c := startHTTP(t, srv)
	for _, tc := range badCases() {
		if tc.http == nil {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			hw := tc.http
			if hw.bug != "" {
				t.Skip("BUG: " + hw.bug)
			}
			r := c.post(context.Background(), tc.body, hw.headers)
			if r.status != hw.status {
				t.Errorf("HTTP status = %d, want %d; body %s", r.status, hw.status, r.body)
			}
			code, msg := tc.code, tc.msg
			if hw.code != 0 {
				code = hw.code
			}
			if hw.msg != "" {
				msg = hw.msg
			}
			if code == -1 {
				if r.body != "" {
					t.Errorf("want no body, got %q", r.body)
				}
			} else {
				if ct := r.header.Get("Content-Type"); ct != "application/json" {
					t.Errorf("Content-Type = %q, want application/json", ct)
				}
				checkBadReply(t, tc, r.last(t), code, msg)
			}
			c.expectServing()
		})
	}
}

// TestCancelledRequestStdio cancels a request whose handler ignores its
// context: the client gets no response for it, the connection keeps
// serving, and the handler's goroutine ends when the handler returns.
func TestCancelledRequestStdio(t *testing.T) {
	hang := newBlockingTool("hang")
	srv := newServer(t, hang)
	c := startStdio(t, srv)
	t.Cleanup(hang.unblock)

	c.sendRequest(`"h1"`, mcp.MethodToolsCall, modern(map[string]any{"name": "hang"}))
	ctx := hang.waitStarted(t)
	g := goroutineRunning("mcp.(*conn).serve", "blockingTool).Call")
	if g == 0 {
		t.Fatal("found no goroutine serving the request")
	}
	c.notify(mcp.NotificationCancelled, map[string]any{"requestId": "h1", "reason": "user gave up"})
	select {
	case <-ctx.Done():
	case <-time.After(waitTimeout):
		t.Fatal("the handler's context was not cancelled")
	}

	// The server answers other requests while the handler hangs.
	expectTools(t, c.call(mcp.MethodToolsList, modern(nil)), "hang")
	if n, _ := hang.state(); n != 1 {
		t.Fatalf("%d calls running, want the hung one", n)
	}

	hang.unblock()
	eventually(t, "the handler returns", func() bool { n, _ := hang.state(); return n == 0 })
	eventually(t, "the request's goroutine ends", func() bool { return !goroutineAlive(g) })
	_, ended := hang.state()
	if len(ended) != 1 || ended[0] == nil {
		t.Errorf("handler saw ctx.Err() = %v, want it cancelled", ended)
	}
	// A cancelled request gets no response, not even once its handler returns.
	resp, before := c.await(c.request(mcp.MethodToolsList, modern(nil)))
	expectTools(t, resp, "hang")
	for _, m := range before {
		t.Errorf("unexpected message after cancellation: %s", m)
	}
}

// TestRequestTimeoutStdio shows that a request running past
// Server.RequestTimeout gets an error at once, while its handler (which
// ignores its context) runs on until it returns.
func TestRequestTimeoutStdio(t *testing.T) {
	hang := newBlockingTool("hang")
	srv := newServer(t, hang)
	srv.RequestTimeout = 50 * time.Millisecond
	c := startStdio(t, srv)
	t.Cleanup(hang.unblock)

	start := time.Now()
	id := c.request(mcp.MethodToolsCall, modern(map[string]any{"name": "hang"}))
	resp, _ := c.await(id)
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("timeout error took %v, want about %v", d, srv.RequestTimeout)
	}
	expectError(t, resp, id, jsonrpc.CodeInternalError, "request tools/call timed out after 50ms")

	ctx := hang.waitStarted(t)
	if ctx.Err() == nil {
		t.Error("the handler's context is not done after the timeout")
	}
	if n, _ := hang.state(); n != 1 {
		t.Fatalf("%d calls running after the timeout, want 1 (the handler ignores its context)", n)
	}
	g := goroutineRunning("mcp.(*conn).serve", "blockingTool).Call")
	if g == 0 {
		t.Fatal("found no goroutine serving the timed-out request")
	}
	expectTools(t, c.call(mcp.MethodToolsList, modern(nil)), "hang")

	hang.unblock()
	eventually(t, "the request's goroutine ends with its handler", func() bool {
		n, _ := hang.state()
		return n == 0 && !goroutineAlive(g)
	})
	// The late result is dropped: exactly one response per request.
	resp, before := c.await(c.request(mcp.MethodToolsList, modern(nil)))
	expectTools(t, resp, "hang")
	for _, m := range before {
		t.Errorf("unexpected message after the timeout: %s", m)
	}
}

// TestRequestTimeoutHTTP is TestRequestTimeoutStdio over Streamable HTTP.
func TestRequestTimeoutHTTP(t *testing.T) {
	hang := newBlockingTool("hang")
	srv := newServer(t, hang)
	srv.RequestTimeout = 50 * time.Millisecond
	c := startHTTP(t, srv)
	t.Cleanup(hang.unblock)

	start := time.Now()
	r := c.postModern(1, mcp.MethodToolsCall, "hang", modern(map[string]any{"name": "hang"}))
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("timeout error took %v", d)
	}
	expectError(t, r.last(t), "1", jsonrpc.CodeInternalError, "timed out")
	hang.waitStarted(t)
	if n, _ := hang.state(); n != 1 {
		t.Errorf("%d calls running after the timeout, want 1", n)
	}
	c.expectServing()
	hang.unblock()
	eventually(t, "the handler returns", func() bool { n, _ := hang.state(); return n == 0 })
}

// TestCancelledRequestHTTP: on Streamable HTTP, closing the connection is
// the cancellation.
func TestCancelledRequestHTTP(t *testing.T) {
	hang := newBlockingTool("hang")
	srv := newServer(t, hang)
	c := startHTTP(t, srv)
	t.Cleanup(hang.unblock)

	ctx, cancel := context.WithCancel(context.Background())
	body := rpc(1, mcp.MethodToolsCall, modern(map[string]any{"name": "hang"}))
	done := make(chan struct{})
	go func() {
		defer close(done)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, c.url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range modernHeaders(mcp.MethodToolsCall, "hang") {
			req.Header.Set(k, v)
		}
		if resp, err := c.hc.Do(req); err == nil {
			resp.Body.Close()
			t.Errorf("got a response (%d) to a request cancelled by closing the connection", resp.StatusCode)
		}
	}()
	hctx := hang.waitStarted(t)
	cancel()
	<-done
	select {
	case <-hctx.Done():
	case <-time.After(waitTimeout):
		t.Fatal("closing the connection did not cancel the handler's context")
	}
	c.expectServing()
	hang.unblock()
	eventually(t, "the handler returns", func() bool { n, _ := hang.state(); return n == 0 })
}

// TestRequestTimeoutsStaggered sends two requests that never finish, 60 ms
// apart, and a quick one between them, on one connection with a 150 ms
// timeout: each hung request gets its timeout error about 150 ms after it
// was sent (the connection's one timer is re-armed for the second), and
// the quick one its result.
func TestRequestTimeoutsStaggered(t *testing.T) {
	hang := newBlockingTool("hang")
	srv := newServer(t, hang, echoTool())
	srv.RequestTimeout = 150 * time.Millisecond
	c := startStdio(t, srv)
	t.Cleanup(hang.unblock)

	start := time.Now()
	first := c.request(mcp.MethodToolsCall, modern(map[string]any{"name": "hang"}))
	time.Sleep(60 * time.Millisecond)
	second := c.request(mcp.MethodToolsCall, modern(map[string]any{"name": "hang"}))
	quick := c.request(mcp.MethodToolsCall, modern(map[string]any{"name": "echo", "arguments": map[string]any{"text": "hi"}}))
	got := map[string]time.Duration{}
	for len(got) < 3 {
		m := c.next()
		if !m.isResponse() {
			continue
		}
		got[string(m.ID)] = time.Since(start)
		switch {
		case m.hasID(quick):
			if text, isErr := toolText(t, m); isErr || text != "hi" {
				t.Errorf("quick call: %q (error %v)", text, isErr)
			}
		case m.hasID(first), m.hasID(second):
			expectError(t, m, string(m.ID), jsonrpc.CodeInternalError, "request tools/call timed out after 150ms")
		}
	}
	if d := got[first]; d < 150*time.Millisecond || d > 2*time.Second {
		t.Errorf("first timeout after %v, want about 150ms", d)
	}
	if d := got[second]; d < 210*time.Millisecond || d > 2*time.Second {
		t.Errorf("second timeout after %v, want about 210ms (150ms after it was sent)", d)
	}
}
