package mcp_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/tool"
)

// waitTimeout bounds every wait of these tests for a message that should
// come; quietWait is how long a test watches for one that should not.
const (
	waitTimeout = 5 * time.Second
	quietWait   = 100 * time.Millisecond
)

// rpcMsg is a message from the server, read with encoding/json rather than
// the package's own codec, so the tests check the wire form independently.
type rpcMsg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`

	raw string
}

type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (m *rpcMsg) String() string { return m.raw }

func (m *rpcMsg) isResponse() bool { return m.Method == "" }

// hasID reports whether the message carries id (JSON text: `1`, `"a"`);
// "null" matches an absent or null id.
func (m *rpcMsg) hasID(id string) bool {
	got := string(m.ID)
	if got == "" {
		got = "null"
	}
	return got == id
}

// decodeResult decodes a response's result into v.
func (m *rpcMsg) decodeResult(t *testing.T, v any) {
	t.Helper()
	if m.Error != nil {
		t.Fatalf("response is an error, want a result: %s", m)
	}
	if err := json.Unmarshal(m.Result, v); err != nil {
		t.Fatalf("decoding result %s: %v", m.Result, err)
	}
}

func parseMsg(t *testing.T, line []byte) *rpcMsg {
	t.Helper()
	m := &rpcMsg{raw: string(line)}
	if !utf8.Valid(line) {
		t.Errorf("the server wrote a line that is not UTF-8, so not JSON text (RFC 8259): %q", line)
	}
	if err := json.Unmarshal(line, m); err != nil {
		t.Errorf("the server wrote a line that is not a JSON-RPC message: %q: %v", line, err)
		return nil
	}
	if m.JSONRPC != "2.0" {
		t.Errorf(`the server wrote a message without "jsonrpc":"2.0": %s`, line)
	}
	return m
}

// meta returns the _meta of a modern (2026-07-28) request, with extra keys.
func meta(kv ...any) map[string]any {
	m := map[string]any{
		mcp.MetaProtocolVersion:    mcp.LatestVersion,
		mcp.MetaClientCapabilities: map[string]any{},
	}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

// modern returns params p (may be nil) with a modern _meta.
func modern(p map[string]any, kv ...any) map[string]any {
	out := map[string]any{"_meta": meta(kv...)}
	for k, v := range p {
		out[k] = v
	}
	return out
}

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// stdioClient drives Server.ServeStream over a pair of pipes, as a client
// process would over stdio.
type stdioClient struct {
	t      *testing.T
	in     *io.PipeWriter
	done   chan error
	nextID int

	mu    sync.Mutex
	queue []*rpcMsg
	more  chan struct{} // signalled when queue grows or the output ends
	ended bool
}

// startStdio serves srv on a new stdio connection. At the end of the test
// the client closes its end and expects ServeStream to return.
func startStdio(t *testing.T, srv *mcp.Server) *stdioClient {
	t.Helper()
	return startStdioCtx(t, context.Background(), srv)
}

// startStdioCtx is startStdio serving in a context derived from parent.
func startStdioCtx(t *testing.T, parent context.Context, srv *mcp.Server) *stdioClient {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(parent)
	c := &stdioClient{t: t, in: inW, done: make(chan error, 1), more: make(chan struct{}, 1)}
	go func() {
		err := srv.ServeStream(ctx, inR, outW)
		outW.Close()
		c.done <- err
	}()
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 64<<10), 64<<20)
		for sc.Scan() {
			m := parseMsg(t, sc.Bytes())
			if m == nil {
				continue
			}
			c.mu.Lock()
			c.queue = append(c.queue, m)
			c.mu.Unlock()
			c.signal()
		}
		c.mu.Lock()
		c.ended = true
		c.mu.Unlock()
		c.signal()
	}()
	t.Cleanup(func() {
		defer cancel()
		inW.Close()
		select {
		case err := <-c.done:
			if err != nil {
				t.Errorf("ServeStream after stdin closed: %v", err)
			}
		case <-time.After(waitTimeout):
			t.Errorf("ServeStream did not return within %v of stdin closing", waitTimeout)
		}
	})
	return c
}

func (c *stdioClient) signal() {
	select {
	case c.more <- struct{}{}:
	default:
	}
}

// send writes one line to the server.
func (c *stdioClient) send(line string) {
	c.t.Helper()
	errc := make(chan error, 1)
	go func() {
		_, err := io.WriteString(c.in, line+"\n")
		errc <- err
	}()
	select {
	case err := <-errc:
		if err != nil {
			c.t.Fatalf("writing to the server: %v", err)
		}
	case <-time.After(waitTimeout):
		c.t.Fatalf("the server did not read a line within %v", waitTimeout)
	}
}

// request sends a request and returns its id as JSON text.
func (c *stdioClient) request(method string, params any) string {
	c.t.Helper()
	c.nextID++
	id := strconv.Itoa(c.nextID)
	c.sendRequest(id, method, params)
	return id
}

// sendRequest sends a request with the given id (JSON text).
func (c *stdioClient) sendRequest(id, method string, params any) {
	c.t.Helper()
	m := map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(id), "method": method}
	if params != nil {
		m["params"] = params
	}
	c.send(mustJSON(c.t, m))
}

func (c *stdioClient) notify(method string, params any) {
	c.t.Helper()
	m := map[string]any{"jsonrpc": "2.0", "method": method}
	if params != nil {
		m["params"] = params
	}
	c.send(mustJSON(c.t, m))
}

// next returns the next message from the server, failing the test after
// waitTimeout.
func (c *stdioClient) next() *rpcMsg {
	c.t.Helper()
	m, ok := c.nextWithin(waitTimeout)
	if !ok {
		c.t.Fatalf("no message from the server within %v", waitTimeout)
	}
	return m
}

// nextWithin returns the next message, or false if none comes within d.
func (c *stdioClient) nextWithin(d time.Duration) (*rpcMsg, bool) {
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		if len(c.queue) > 0 {
			m := c.queue[0]
			c.queue = c.queue[1:]
			c.mu.Unlock()
			return m, true
		}
		ended := c.ended
		c.mu.Unlock()
		if ended {
			return nil, false
		}
		select {
		case <-c.more:
		case <-deadline.C:
			return nil, false
		}
	}
}

// await reads messages until the response to id, returning it and the
// messages that came before it.
func (c *stdioClient) await(id string) (resp *rpcMsg, before []*rpcMsg) {
	c.t.Helper()
	for {
		m := c.next()
		if m.isResponse() && m.hasID(id) {
			return m, before
		}
		before = append(before, m)
	}
}

// call sends a request and waits for its response, failing on any message
// other than notifications in between.
func (c *stdioClient) call(method string, params any) *rpcMsg {
	c.t.Helper()
	resp, _ := c.await(c.request(method, params))
	return resp
}

// expectQuiet fails if the server sends anything within quietWait.
func (c *stdioClient) expectQuiet() {
	c.t.Helper()
	if m, ok := c.nextWithin(quietWait); ok {
		c.t.Errorf("unexpected message from the server: %s", m)
	}
}

// initialize opens a legacy session with the given client capabilities.
func (c *stdioClient) initialize(caps map[string]any) {
	c.t.Helper()
	if caps == nil {
		caps = map[string]any{}
	}
	resp := c.call(mcp.MethodInitialize, map[string]any{
		"protocolVersion": mcp.LatestLegacyVersion,
		"capabilities":    caps,
		"clientInfo":      map[string]any{"name": "test", "version": "1"},
	})
	var res mcp.InitializeResult
	resp.decodeResult(c.t, &res)
	if res.ProtocolVersion != mcp.LatestLegacyVersion {
		c.t.Fatalf("initialize: protocol %q, want %q", res.ProtocolVersion, mcp.LatestLegacyVersion)
	}
	c.notify(mcp.NotificationInitialized, nil)
}

// expectTools checks that resp is a tools/list result naming exactly names.
func expectTools(t *testing.T, resp *rpcMsg, names ...string) *mcp.ListToolsResult {
	t.Helper()
	var res mcp.ListToolsResult
	resp.decodeResult(t, &res)
	var got []string
	for _, tl := range res.Tools {
		got = append(got, tl.Name)
	}
	if strings.Join(got, ",") != strings.Join(names, ",") {
		t.Errorf("tools = %v, want %v", got, names)
	}
	return &res
}

// expectError checks that resp is an error response with code, a message
// containing msg, addressed to id.
func expectError(t *testing.T, resp *rpcMsg, id string, code int, msg string) {
	t.Helper()
	if resp.Error == nil {
		t.Fatalf("want error %d, got %s", code, resp)
	}
	if resp.Error.Code != code {
		t.Errorf("error code = %d, want %d (%s)", resp.Error.Code, code, resp)
	}
	if !strings.Contains(resp.Error.Message, msg) {
		t.Errorf("error message %q does not contain %q", resp.Error.Message, msg)
	}
	if !resp.hasID(id) {
		t.Errorf("error response id = %s, want %s", resp.ID, id)
	}
}

// toolText returns the text of a tools/call result and whether it is an
// error result.
func toolText(t *testing.T, resp *rpcMsg) (string, bool) {
	t.Helper()
	var res mcp.CallToolResult
	resp.decodeResult(t, &res)
	var parts []string
	for _, c := range res.Content {
		parts = append(parts, c.Text)
	}
	return strings.Join(parts, "\n"), res.IsError
}

// httpClient posts JSON-RPC messages to an HTTPHandler over a real
// loopback server.
type httpClient struct {
	t   *testing.T
	url string
	hc  *http.Client
}

// startHTTP serves srv on the net/http server `toolwire serve --http`
// uses (mcp.NewHTTPServer) over a real loopback listener.
func startHTTP(t *testing.T, srv *mcp.Server) *httpClient {
	t.Helper()
	h := &mcp.HTTPHandler{Server: srv}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := mcp.NewHTTPServer(h, nil)
	go hs.Serve(ln)
	t.Cleanup(func() {
		h.Close()
		hs.Close()
	})
	return &httpClient{t: t, url: "http://" + ln.Addr().String(), hc: &http.Client{Timeout: waitTimeout}}
}

// httpReply is what an HTTP POST got back.
type httpReply struct {
	status int
	header http.Header
	body   string
	msgs   []*rpcMsg // the JSON body, or the events of an SSE body
}

// last returns the last message of the reply, normally the response.
func (r *httpReply) last(t *testing.T) *rpcMsg {
	t.Helper()
	if len(r.msgs) == 0 {
		t.Fatalf("HTTP %d with no JSON-RPC message; body %q", r.status, r.body)
	}
	return r.msgs[len(r.msgs)-1]
}

// modernHeaders are the headers of a modern POST of method (and name, for
// tools/call, prompts/get and resources/read).
func modernHeaders(method, name string) map[string]string {
	h := map[string]string{
		mcp.HeaderProtocolVersion: mcp.LatestVersion,
		mcp.HeaderMethod:          method,
	}
	if name != "" {
		h[mcp.HeaderName] = name
	}
	return h
}

func (c *httpClient) post(ctx context.Context, body string, headers map[string]string) *httpReply {
	c.t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		c.t.Fatalf("POST: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatalf("reading the response body: %v", err)
	}
	r := &httpReply{status: resp.StatusCode, header: resp.Header, body: string(b)}
	r.msgs = parseHTTPBody(c.t, resp.Header.Get("Content-Type"), b)
	return r
}

// parseHTTPBody reads the messages of a JSON or SSE body.
func parseHTTPBody(t *testing.T, contentType string, b []byte) []*rpcMsg {
	t.Helper()
	var out []*rpcMsg
	switch {
	case strings.HasPrefix(contentType, "application/json"):
		if m := parseMsg(t, b); m != nil {
			out = append(out, m)
		}
	case strings.HasPrefix(contentType, "text/event-stream"):
		for _, ev := range bytes.Split(b, []byte("\n\n")) {
			for _, line := range bytes.Split(ev, []byte("\n")) {
				// An empty data line is a legacy stream's priming event.
				if data, ok := bytes.CutPrefix(line, []byte("data: ")); ok && len(data) > 0 {
					if m := parseMsg(t, data); m != nil {
						out = append(out, m)
					}
				}
			}
		}
	case len(b) > 0:
		t.Errorf("body of Content-Type %q: %q", contentType, b)
	}
	return out
}

// postModern posts a modern request with matching headers.
func (c *httpClient) postModern(id int, method, name string, params map[string]any) *httpReply {
	c.t.Helper()
	body := mustJSON(c.t, map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	return c.post(context.Background(), body, modernHeaders(method, name))
}

// expectServing checks that the server still answers a modern tools/list.
func (c *httpClient) expectServing() {
	c.t.Helper()
	r := c.postModern(99, mcp.MethodToolsList, "", modern(nil))
	if r.status != http.StatusOK {
		c.t.Fatalf("follow-up tools/list: HTTP %d %s", r.status, r.body)
	}
	if m := r.last(c.t); m.Error != nil || !m.hasID("99") {
		c.t.Fatalf("follow-up tools/list: %s", m)
	}
}

// Tools used by the tests.

func textTool(name string, fn func(ctx context.Context, args map[string]any) (string, error)) tool.Tool {
	return tool.NewFunc(
		tool.Info{Name: name, Description: "test tool " + name, InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, raw json.RawMessage) (*tool.Result, error) {
			var args map[string]any
			if err := json.Unmarshal(raw, &args); err != nil {
				return nil, fmt.Errorf("arguments must be an object: %w", err)
			}
			s, err := fn(ctx, args)
			if err != nil {
				return nil, err
			}
			return tool.Text(s), nil
		})

}

// sleepTool answers {us, tag} with tag after us microseconds, or fails
// when its context ends first.
func sleepTool() tool.Tool {
	return textTool("sleep", func(ctx context.Context, args map[string]any) (string, error) {
		us, _ := args["us"].(float64)
		select {
		case <-time.After(time.Duration(us) * time.Microsecond):
		case <-ctx.Done():
			return "", ctx.Err()
		}
		return fmt.Sprint(args["tag"]), nil
	})
}

func echoTool() tool.Tool {
	return textTool("echo", func(_ context.Context, args map[string]any) (string, error) {
		return fmt.Sprint(args["text"]), nil
	})
}

// addTool adds two numbers. Its arguments are checked against its schema by
// the tool package's argument pipeline before Call runs.
func addTool() tool.Tool {
	return tool.NewFunc(
		tool.Info{Name: "add", InputSchema: json.RawMessage(
			`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}`)},
		func(_ context.Context, raw json.RawMessage) (*tool.Result, error) {
			var args struct{ A, B float64 }
			if err := json.Unmarshal(raw, &args); err != nil {
				return nil, err
			}
			return tool.Text(strconv.FormatFloat(args.A+args.B, 'g', -1, 64)), nil
		})

}

// divideTool divides two numbers, and rejects a zero divisor itself: a
// check no schema expresses.
func divideTool() tool.Tool {
	return tool.NewFunc(
		tool.Info{Name: "divide", InputSchema: json.RawMessage(
			`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}`)},
		func(_ context.Context, raw json.RawMessage) (*tool.Result, error) {
			var args struct{ A, B float64 }
			if err := json.Unmarshal(raw, &args); err != nil {
				return nil, err
			}
			if args.B == 0 {
				return nil, fmt.Errorf(`argument "b" must not be 0: cannot divide by zero`)
			}
			return tool.Text(strconv.FormatFloat(args.A/args.B, 'g', -1, 64)), nil
		})

}

func panicTool() tool.Tool {
	return textTool("boom", func(context.Context, map[string]any) (string, error) {
		panic("kaboom")
	})
}

// blockingTool never looks at its context: it returns only when release is
// closed. running counts its calls in progress; started gets a value as
// each call begins.
type blockingTool struct {
	name    string
	started chan context.Context
	release chan struct{}
	once    sync.Once
	mu      sync.Mutex
	running int
	ended   []error // ctx.Err() of each finished call
}

func newBlockingTool(name string) *blockingTool {
	return &blockingTool{name: name, started: make(chan context.Context, 16), release: make(chan struct{})}
}

func (b *blockingTool) Info() tool.Info { return tool.Info{Name: b.name} }

func (b *blockingTool) Call(ctx context.Context, _ json.RawMessage) (*tool.Result, error) {
	b.mu.Lock()
	b.running++
	b.mu.Unlock()
	b.started <- ctx
	<-b.release
	b.mu.Lock()
	b.running--
	b.ended = append(b.ended, ctx.Err())
	b.mu.Unlock()
	return tool.Text("released"), nil
}

func (b *blockingTool) unblock() { b.once.Do(func() { close(b.release) }) }

func (b *blockingTool) state() (running int, ended []error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.running, append([]error(nil), b.ended...)
}

// waitStarted waits for a call of the tool to begin.
func (b *blockingTool) waitStarted(t *testing.T) context.Context {
	t.Helper()
	select {
	case ctx := <-b.started:
		return ctx
	case <-time.After(waitTimeout):
		t.Fatalf("tool %s was not called within %v", b.name, waitTimeout)
		return nil
	}
}

// goroutineStacks returns the stack of every goroutine, by goroutine id.
func goroutineStacks() map[int]string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	out := map[int]string{}
	for _, g := range strings.Split(string(buf), "\n\n") {
		var id int
		if _, err := fmt.Sscanf(g, "goroutine %d ", &id); err == nil {
			out[id] = g
		}
	}
	return out
}

// goroutineRunning finds the goroutine whose stack contains every one of
// fns; it returns its id, or 0.
func goroutineRunning(fns ...string) int {
	for id, stack := range goroutineStacks() {
		all := true
		for _, fn := range fns {
			all = all && strings.Contains(stack, fn)
		}
		if all {
			return id
		}
	}
	return 0
}

// goroutineAlive reports whether the goroutine with this id still exists.
func goroutineAlive(id int) bool {
	_, ok := goroutineStacks()[id]
	return ok
}

// eventually polls cond until it holds or waitTimeout passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, waitTimeout)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func newServer(t *testing.T, tools ...tool.Tool) *mcp.Server {
	t.Helper()
	srv := &mcp.Server{Info: mcp.Implementation{Name: "test-server", Version: "1.0.0"}}
	if err := srv.AddTools(tools...); err != nil {
		t.Fatal(err)
	}
	return srv
}
