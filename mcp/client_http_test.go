package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/sse"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/tool"
)

// ctTimeout bounds every client operation of these tests.
const ctTimeout = 10 * time.Second

func ctContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), ctTimeout)
	t.Cleanup(cancel)
	return ctx
}

func ctTool(name, schema string, fn func(ctx context.Context, args map[string]any) (*tool.Result, error)) tool.Tool {
	return tool.NewFunc(
		tool.Info{Name: name, Description: name, InputSchema: json.RawMessage(schema)},
		func(ctx context.Context, raw json.RawMessage) (*tool.Result, error) {
			var args map[string]any
			if len(raw) > 0 {
				if err := json.Unmarshal(raw, &args); err != nil {
					return nil, err
				}
			}
			return fn(ctx, args)
		})

}

// ctServer is a server with the tools these tests call.
func ctServer(t *testing.T) *Server {
	t.Helper()
	srv := &Server{Info: Implementation{Name: "ct-server", Version: "1.0.0"}}
	err := srv.AddTools(
		ctTool("add", `{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}`,
			func(_ context.Context, a map[string]any) (*tool.Result, error) {
				x, _ := a["a"].(float64)
				y, _ := a["b"].(float64)
				return tool.Text(fmt.Sprint(x + y)), nil
			}),
		ctTool("ask", `{"type":"object"}`, func(ctx context.Context, _ map[string]any) (*tool.Result, error) {
			prev := State(ctx)
			if err := SetState(ctx, "asked"); err != nil {
				return nil, err
			}
			res, err := Elicit(ctx, &ElicitParams{Message: "Your name?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"},"lang":{"type":"string","default":"go"}}}`)})
			if err != nil {
				return nil, err
			}
			return tool.Text(fmt.Sprintf("%s %v %v state=%s", res.Action, res.Content["name"], res.Content["lang"], prev)), nil
		}),
		ctTool("progress", `{"type":"object"}`, func(ctx context.Context, _ map[string]any) (*tool.Result, error) {
			for i := 1; i <= 3; i++ {
				if err := tool.Progress(ctx, float64(i), 3, fmt.Sprintf("step %d", i)); err != nil {
					return nil, err
				}
			}
			return tool.Text("done"), nil
		}),
		ctTool("region", `{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"tenant":{"type":"object","properties":{"id":{"type":"integer","x-mcp-header":"Tenant"}}}},"required":["region"]}`,
			func(_ context.Context, a map[string]any) (*tool.Result, error) {
				return tool.Text(fmt.Sprint(a["region"])), nil
			}),
		ctTool("bad_header", `{"type":"object","properties":{"score":{"type":"number","x-mcp-header":"Score"}}}`,
			func(context.Context, map[string]any) (*tool.Result, error) { return tool.Text("called"), nil }),
		ctTool("slow", `{"type":"object"}`, func(ctx context.Context, _ map[string]any) (*tool.Result, error) {
			// Free the connection; the client resumes the stream.
			if !CloseSSEStream(ctx) {
				return tool.Text("not closed"), nil
			}
			time.Sleep(100 * time.Millisecond)
			return tool.Text("resumed"), nil
		}),
	)
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

// ctRecorder records the requests an HTTP server receives.
type ctRecorder struct {
	mu   sync.Mutex
	reqs []ctRequest
}

type ctRequest struct {
	httpMethod string
	header     http.Header
	body       string
}

func (r *ctRecorder) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		req.Body = io.NopCloser(strings.NewReader(string(body)))
		r.mu.Lock()
		r.reqs = append(r.reqs, ctRequest{req.Method, req.Header.Clone(), string(body)})
		r.mu.Unlock()
		h.ServeHTTP(w, req)
	})
}

// find returns the recorded requests whose body names method (and, for a
// GET or DELETE, whose HTTP method is method).
func (r *ctRecorder) find(method string) []ctRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []ctRequest
	for _, q := range r.reqs {
		if q.httpMethod == method || q.httpMethod == http.MethodPost && strings.Contains(q.body, `"method":"`+method+`"`) {
			out = append(out, q)
		}
	}
	return out
}

// ctServe serves srv over Streamable HTTP on 127.0.0.1.
func ctServe(t *testing.T, srv *Server) (*httptest.Server, *HTTPHandler, *ctRecorder) {
	t.Helper()
	h := &HTTPHandler{Server: srv}
	rec := &ctRecorder{}
	ts := httptest.NewServer(rec.wrap(h))
	t.Cleanup(func() {
		ts.Close()
		h.Close()
	})
	return ts, h, rec
}

func ctConnect(t *testing.T, c *Client, tr ClientTransport) *ClientSession {
	t.Helper()
	if c.Info.Name == "" {
		c.Info = Implementation{Name: "ct-client", Version: "1.0.0"}
	}
	s, err := c.Connect(ctContext(t), tr)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func ctText(t *testing.T, res *CallToolResult) string {
	t.Helper()
	if len(res.Content) == 0 {
		t.Fatalf("empty result: %+v", res)
	}
	return res.Content[0].Text
}

func TestHTTPTransportListCall(t *testing.T) {
	tests := []struct {
		name, force, want string
	}{
		{"probe", "", Version20260728},
		{"modern", Version20260728, Version20260728},
		{"legacy 2025-11-25", Version20251125, Version20251125},
		{"legacy 2025-03-26", Version20250326, Version20250326},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ts, _, rec := ctServe(t, ctServer(t))
			s := ctConnect(t, &Client{ProtocolVersion: tc.force}, &HTTPTransport{URL: ts.URL, Header: http.Header{"Authorization": {"Bearer xyz"}}})
			if s.ProtocolVersion() != tc.want {
				t.Fatalf("version %q, want %q", s.ProtocolVersion(), tc.want)
			}
			if s.ServerInfo().Name != "ct-server" {
				t.Errorf("server info %+v", s.ServerInfo())
			}
			ctx := ctContext(t)
			tools, err := s.ListTools(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(tools) < 5 {
				t.Errorf("got %d tools", len(tools))
			}
			res, err := s.CallTool(ctx, "add", json.RawMessage(`{"a":2,"b":40}`))
			if err != nil {
				t.Fatal(err)
			}
			if got := ctText(t, res); got != "42" {
				t.Errorf("add = %q", got)
			}
			calls := rec.find(MethodToolsCall)
			if len(calls) != 1 {
				t.Fatalf("%d tools/call requests", len(calls))
			}
			hd := calls[0].header
			if hd.Get("Authorization") != "Bearer xyz" {
				t.Errorf("custom header lost: %v", hd)
			}
			if IsModern(tc.want) {
				if hd.Get(HeaderMethod) != MethodToolsCall || hd.Get(HeaderName) != "add" || hd.Get(HeaderProtocolVersion) != tc.want {
					t.Errorf("modern headers: %v", hd)
				}
				if hd.Get(HeaderSessionID) != "" {
					t.Errorf("modern request with a session id")
				}
				return
			}
			if hd.Get(HeaderSessionID) == "" || hd.Get(HeaderProtocolVersion) != tc.want {
				t.Errorf("legacy headers: %v", hd)
			}
			if len(rec.find(http.MethodGet)) == 0 {
				t.Errorf("no standalone GET stream was opened")
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if len(rec.find(http.MethodDelete)) != 1 {
				t.Errorf("the session was not ended with DELETE")
			}
		})
	}
}

func TestHTTPTransportElicitation(t *testing.T) {
	for _, v := range []string{Version20251125, Version20260728} {
		t.Run(v, func(t *testing.T) {
			ts, _, _ := ctServe(t, ctServer(t))
			var asked int
			c := &Client{ProtocolVersion: v, Elicitation: func(_ context.Context, p *ElicitParams) (*ElicitResult, error) {
				asked++
				if p.Message != "Your name?" {
					return nil, fmt.Errorf("unexpected message %q", p.Message)
				}
				return &ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
			}}
			s := ctConnect(t, c, &HTTPTransport{URL: ts.URL})
			res, err := s.CallTool(ctContext(t), "ask", nil)
			if err != nil {
				t.Fatal(err)
			}
			want := "accept Ada go state="
			if IsModern(v) {
				want += `"asked"` // the state saved on the first round came back
			}
			if got := ctText(t, res); got != want {
				t.Errorf("got %q, want %q", got, want)
			}
			if asked != 1 {
				t.Errorf("the elicitation handler ran %d times", asked)
			}
		})
	}
}

func TestHTTPTransportProgress(t *testing.T) {
	for _, v := range []string{Version20251125, Version20260728} {
		t.Run(v, func(t *testing.T) {
			ts, _, _ := ctServe(t, ctServer(t))
			var mu sync.Mutex
			var got []string
			c := &Client{ProtocolVersion: v, Notify: func(method string, params json.RawMessage) {
				if method != NotificationProgress {
					return
				}
				var p ProgressParams
				_ = json.Unmarshal(params, &p)
				mu.Lock()
				got = append(got, p.Message)
				mu.Unlock()
			}}
			s := ctConnect(t, c, &HTTPTransport{URL: ts.URL})
			var res CallToolResult
			p := &CallToolParams{Name: "progress", Params: Params{Meta: &RequestMeta{ProgressToken: json.RawMessage(`"tok"`)}}}
			if err := s.Call(ctContext(t), MethodToolsCall, p, &res); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			if strings.Join(got, ",") != "step 1,step 2,step 3" {
				t.Errorf("progress notifications: %q", got)
			}
		})
	}
}

func TestHTTPTransportParamHeaders(t *testing.T) {
	ts, _, rec := ctServe(t, ctServer(t))
	s := ctConnect(t, &Client{ProtocolVersion: Version20260728}, &HTTPTransport{URL: ts.URL})
	ctx := ctContext(t)

	// Without tools/list the client cannot know the annotation, sends no
	// header, and the server refuses the call.
	_, err := s.CallTool(ctx, "region", json.RawMessage(`{"region":"us-west1"}`))
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != CodeHeaderMismatch {
		t.Fatalf("call before tools/list: %v, want a HeaderMismatch error", err)
	}

	tools, err := s.ListTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools {
		if tl.Name == "bad_header" {
			t.Errorf("a tool with an x-mcp-header on a number was kept")
		}
	}
	tests := []struct {
		args, region, tenant string
	}{
		{`{"region":"us-west1","tenant":{"id":7}}`, "us-west1", "7"},
		{`{"region":"Hello, 世界"}`, "=?base64?SGVsbG8sIOS4lueVjA==?=", ""},
		{`{"region":" padded "}`, "=?base64?IHBhZGRlZCA=?=", ""},
		{`{"region":"=?base64?literal?="}`, "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=", ""},
		{`{"region":"line1\nline2","tenant":{"id":null}}`, "=?base64?bGluZTEKbGluZTI=?=", ""},
	}
	for _, tc := range tests {
		if _, err := s.CallTool(ctx, "region", json.RawMessage(tc.args)); err != nil {
			t.Errorf("%s: %v", tc.args, err)
			continue
		}
		calls := rec.find(MethodToolsCall)
		hd := calls[len(calls)-1].header
		if got := hd.Get("Mcp-Param-Region"); got != tc.region {
			t.Errorf("%s: Mcp-Param-Region %q, want %q", tc.args, got, tc.region)
		}
		if got, ok := hd["Mcp-Param-Tenant"]; tc.tenant == "" && ok || tc.tenant != "" && (len(got) != 1 || got[0] != tc.tenant) {
			t.Errorf("%s: Mcp-Param-Tenant %q, want %q", tc.args, got, tc.tenant)
		}
	}
}

func TestHTTPTransportSessionExpiry(t *testing.T) {
	ts, h, rec := ctServe(t, ctServer(t))
	s := ctConnect(t, &Client{ProtocolVersion: Version20251125}, &HTTPTransport{URL: ts.URL})
	ctx := ctContext(t)
	if _, err := s.ListTools(ctx); err != nil {
		t.Fatal(err)
	}
	h.Close() // the server forgets every session
	res, err := s.CallTool(ctx, "add", json.RawMessage(`{"a":1,"b":1}`))
	if err != nil {
		t.Fatalf("call after the session expired: %v", err)
	}
	if got := ctText(t, res); got != "2" {
		t.Errorf("got %q", got)
	}
	inits := rec.find(MethodInitialize)
	if len(inits) != 2 {
		t.Fatalf("%d initialize requests, want 2", len(inits))
	}
	if sid := inits[1].header.Get(HeaderSessionID); sid != "" {
		t.Errorf("the new initialize carried the old session id %q", sid)
	}
}

// TestHTTPTransportLegacyFallback talks to a server that only speaks the
// legacy revisions: the probe fails and the client falls back.
func TestHTTPTransportLegacyFallback(t *testing.T) {
	inner := &HTTPHandler{Server: ctServer(t)}
	t.Cleanup(inner.Close)
	tests := []struct {
		name   string
		refuse func(w http.ResponseWriter)
	}{
		{"400 text", func(w http.ResponseWriter) {
			http.Error(w, "Bad Request: Server not initialized", http.StatusBadRequest)
		}},
		{"404", func(w http.ResponseWriter) { http.NotFound(w, nil) }},
		{"405", func(w http.ResponseWriter) { w.WriteHeader(http.StatusMethodNotAllowed) }},
		{"400 JSON-RPC", func(w http.ResponseWriter) {
			writeJSONError(w, http.StatusBadRequest, jsonrpc.ID{}, jsonrpc.NewError(-32000, "Bad Request: No valid session ID provided"))
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodPost && IsModern(r.Header.Get(HeaderProtocolVersion)) {
					tc.refuse(w)
					return
				}
				inner.ServeHTTP(w, r)
			}))
			t.Cleanup(ts.Close)
			s := ctConnect(t, &Client{}, &HTTPTransport{URL: ts.URL})
			if s.ProtocolVersion() != LatestLegacyVersion {
				t.Fatalf("version %q", s.ProtocolVersion())
			}
			res, err := s.CallTool(ctContext(t), "add", json.RawMessage(`{"a":1,"b":2}`))
			if err != nil {
				t.Fatal(err)
			}
			if ctText(t, res) != "3" {
				t.Errorf("got %q", ctText(t, res))
			}
		})
	}
}

// TestHTTPTransportResume: the server closes a legacy response stream
// early; the client resumes it with GET and Last-Event-ID.
func TestHTTPTransportResume(t *testing.T) {
	ts, _, rec := ctServe(t, ctServer(t))
	s := ctConnect(t, &Client{ProtocolVersion: Version20251125}, &HTTPTransport{URL: ts.URL})
	res, err := s.CallTool(ctContext(t), "slow", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := ctText(t, res); got != "resumed" {
		t.Fatalf("got %q", got)
	}
	resumed := false
	for _, q := range rec.find(http.MethodGet) {
		if q.header.Get(HeaderLastEventID) != "" {
			resumed = true
		}
	}
	if !resumed {
		t.Errorf("no GET carried Last-Event-ID")
	}
}

func TestHTTPTransportHTTPErrors(t *testing.T) {
	tests := []struct {
		name    string
		handler http.HandlerFunc
		want    []string // in the error text
		rpcCode int      // when a *jsonrpc.Error is expected
	}{
		{"404 plain", func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) }, []string{"404 Not Found", "404 page not found"}, 0},
		{"500 HTML", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, "<!DOCTYPE html><html><head><title>Oops</title><style>p{color:red}</style></head><body><h1>Internal Server Error</h1><p>The proxy broke.</p></body></html>")
		}, []string{"500 Internal Server Error", "Oops Internal Server Error The proxy broke."}, 0},
		{"500 JSON-RPC", func(w http.ResponseWriter, r *http.Request) {
			writeJSONError(w, http.StatusInternalServerError, jsonrpc.ID{}, jsonrpc.NewError(jsonrpc.CodeInternalError, "database down"))
		}, []string{"database down"}, jsonrpc.CodeInternalError},
		{"200 HTML", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, "<html><body>Login required</body></html>")
		}, []string{"text/html", "Login required"}, 0},
		{"202 for a request", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusAccepted) }, []string{"202 Accepted"}, 0},
	}
	for _, tc := range tests {
		for _, v := range []string{Version20251125, Version20260728} {
			t.Run(tc.name+" "+v, func(t *testing.T) {
				ts := httptest.NewServer(tc.handler)
				t.Cleanup(ts.Close)
				_, err := (&Client{ProtocolVersion: v}).Connect(ctContext(t), &HTTPTransport{URL: ts.URL})
				if err == nil {
					t.Fatal("Connect succeeded")
				}
				for _, w := range tc.want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not contain %q", err, w)
					}
				}
				if strings.Contains(err.Error(), "invalid character") {
					t.Errorf("error %q is a JSON parse error", err)
				}
				var rpcErr *jsonrpc.Error
				if tc.rpcCode != 0 && (!errors.As(err, &rpcErr) || rpcErr.Code != tc.rpcCode) {
					t.Errorf("error %v: want a *jsonrpc.Error with code %d", err, tc.rpcCode)
				}
			})
		}
	}
}

// TestHTTPTransportStreamCut: a response stream that ends or breaks in the
// middle of an event gives an error, not a hang.
func TestHTTPTransportStreamCut(t *testing.T) {
	half := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"res"
	tests := []struct {
		name    string
		version string
		body    string
		abort   bool
		want    string
	}{
		{"modern end", Version20260728, half, false, "closed the response stream in the middle of an event"},
		{"modern abort", Version20260728, half, true, "broke"},
		{"legacy end", Version20251125, half, false, "closed the response stream in the middle of an event"},
		{"legacy abort", Version20251125, half, true, "broke"},
		{"legacy resume refused", Version20251125, "id: e1\nretry: 10\ndata: \n\n" + half, false, "resuming it failed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method != http.MethodPost {
					w.WriteHeader(http.StatusMethodNotAllowed)
					return
				}
				w.Header().Set("Content-Type", "text/event-stream")
				w.WriteHeader(http.StatusOK)
				io.WriteString(w, tc.body)
				http.NewResponseController(w).Flush()
				if tc.abort {
					panic(http.ErrAbortHandler)
				}
			}))
			t.Cleanup(ts.Close)
			start := time.Now()
			_, err := (&Client{ProtocolVersion: tc.version}).Connect(ctContext(t), &HTTPTransport{URL: ts.URL})
			if err == nil {
				t.Fatal("Connect succeeded")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not contain %q", err, tc.want)
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
}

func TestHTTPTransportServerDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	downURL := "http://" + ln.Addr().String() + "/mcp"
	ln.Close()
	stop := make(chan struct{})
	silent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	t.Cleanup(silent.Close)
	t.Cleanup(func() { close(stop) })
	tests := []struct {
		name, url, want string
	}{
		{"refused", downURL, "cannot reach MCP server at " + downURL},
		{"silent", silent.URL, "deadline exceeded"},
	}
	for _, tc := range tests {
		for _, v := range []string{"", Version20251125} {
			t.Run(tc.name+" "+v, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
				defer cancel()
				start := time.Now()
				_, err := (&Client{ProtocolVersion: v}).Connect(ctx, &HTTPTransport{URL: tc.url})
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("error %v, want one containing %q", err, tc.want)
				}
				if d := time.Since(start); d > 2*time.Second {
					t.Errorf("took %v, past the 500ms deadline", d)
				}
			})
		}
	}
}

func TestSSETransport(t *testing.T) {
	srv := ctServer(t)
	mux := http.NewServeMux()
	sh := &SSEHandler{Server: srv}
	mux.Handle("/sse", sh)
	mux.Handle("/message", sh)
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)

	var mu sync.Mutex
	var progress int
	c := &Client{
		Elicitation: func(context.Context, *ElicitParams) (*ElicitResult, error) {
			return &ElicitResult{Action: "accept", Content: map[string]any{"name": "Bob"}}, nil
		},
		Notify: func(method string, _ json.RawMessage) {
			if method == NotificationProgress {
				mu.Lock()
				progress++
				mu.Unlock()
			}
		},
	}
	s := ctConnect(t, c, &SSETransport{URL: ts.URL + "/sse"})
	if IsModern(s.ProtocolVersion()) {
		t.Fatalf("an HTTP+SSE session speaks %s", s.ProtocolVersion())
	}
	ctx := ctContext(t)
	if _, err := s.ListTools(ctx); err != nil {
		t.Fatal(err)
	}
	res, err := s.CallTool(ctx, "add", json.RawMessage(`{"a":20,"b":22}`))
	if err != nil {
		t.Fatal(err)
	}
	if ctText(t, res) != "42" {
		t.Errorf("add = %q", ctText(t, res))
	}
	res, err = s.CallTool(ctx, "ask", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := ctText(t, res); got != "accept Bob go state=" {
		t.Errorf("ask = %q", got)
	}
	var pres CallToolResult
	if err := s.Call(ctx, MethodToolsCall, &CallToolParams{Name: "progress", Params: Params{Meta: &RequestMeta{ProgressToken: json.RawMessage(`1`)}}}, &pres); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if progress != 3 {
		t.Errorf("%d progress notifications", progress)
	}
	mu.Unlock()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ListTools(ctx); err == nil {
		t.Errorf("ListTools after Close succeeded")
	}
}

func TestSSETransportErrors(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + ln.Addr().String() + "/sse"
	ln.Close()
	tests := []struct {
		name    string
		handler http.HandlerFunc // nil: nothing listens
		want    string
	}{
		{"down", nil, "cannot reach MCP server"},
		{"not SSE", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "{}") }, "did not open an event stream"},
		{"no endpoint", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, ": hello\n\n")
		}, "before naming its message endpoint"},
		{"other origin", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "event: endpoint\ndata: http://evil.example/message\n\n")
		}, "another origin"},
		{"500", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "boom", 500) }, "500 Internal Server Error: boom"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u := down
			if tc.handler != nil {
				ts := httptest.NewServer(tc.handler)
				t.Cleanup(ts.Close)
				u = ts.URL + "/sse"
			}
			_, err := (&Client{}).Connect(ctContext(t), &SSETransport{URL: u})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestEncodeHeaderValue(t *testing.T) {
	tests := []struct{ in, want string }{
		{"us-west1", "us-west1"},
		{"us west 1", "us west 1"},
		{"", ""},
		{"Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="},
		{" padded ", "=?base64?IHBhZGRlZCA=?="},
		{"line1\nline2", "=?base64?bGluZTEKbGluZTI=?="},
		{"\tindented", "=?base64?CWluZGVudGVk?="},
		{"=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="},
	}
	for _, tc := range tests {
		got := encodeHeaderValue(tc.in)
		if got != tc.want {
			t.Errorf("encodeHeaderValue(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if back, err := decodeHeaderValue(got); err != nil || back != tc.in {
			t.Errorf("decodeHeaderValue(%q) = %q, %v", got, back, err)
		}
	}
}

// TestSSEReader covers what the client adds to internal/sse's reader (which
// has the parsing tests): an oversized event is a jsonrpc.ErrTooLarge, a
// cut one is sse.ErrTruncated, and the retry delay has a default.
func TestSSEReader(t *testing.T) {
	tests := []struct {
		name   string
		stream string
		want   []string
		err    error
		retry  time.Duration
	}{
		{"events", "event: message\ndata: {\"a\":1}\n\nretry: 500\ndata: b\n\n", []string{`{"a":1}`, "b"}, io.EOF, 500 * time.Millisecond},
		{"truncated", "data: one\n\nid: 2\ndata: tw", []string{"one"}, sse.ErrTruncated, defaultSSERetry},
		{"too large", "data: 0123456789abcdef\n\n", nil, jsonrpc.ErrTooLarge, defaultSSERetry},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newSSEReader(strings.NewReader(tc.stream), 5+len(`{"a":1}`))
			var got []string
			var err error
			for {
				var ev sse.Event
				if ev, err = r.next(); err != nil {
					break
				}
				got = append(got, string(ev.Data))
			}
			if !errors.Is(err, tc.err) {
				t.Errorf("error %v, want %v", err, tc.err)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("events %q, want %q", got, tc.want)
			}
			if r.retryDelay() != tc.retry {
				t.Errorf("retryDelay %v, want %v", r.retryDelay(), tc.retry)
			}
		})
	}
}

// A client reaches a server over Streamable HTTP; it settles the protocol
// revision by itself.
func ExampleHTTPTransport() {
	srv := &Server{Info: Implementation{Name: "greeter", Version: "1.0.0"}}
	_ = srv.AddTools(ctTool("greet", `{"type":"object","properties":{"name":{"type":"string"}}}`,
		func(_ context.Context, a map[string]any) (*tool.Result, error) {
			return tool.Text(fmt.Sprintf("Hello, %v!", a["name"])), nil
		}))
	h := &HTTPHandler{Server: srv}
	defer h.Close()
	ts := httptest.NewServer(h)
	defer ts.Close()

	ctx := context.Background()
	c := &Client{Info: Implementation{Name: "example-client", Version: "1.0.0"}}
	s, err := c.Connect(ctx, &HTTPTransport{URL: ts.URL, Header: http.Header{"Authorization": {"Bearer token"}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	res, err := s.CallTool(ctx, "greet", json.RawMessage(`{"name":"Ada"}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(s.ProtocolVersion(), s.ServerInfo().Name, res.Content[0].Text)
	// Output: 2026-07-28 greeter Hello, Ada!
}

// A call given up on sends its cancellation from a goroutine of the
// connection's, which may start while the connection closes and waits for
// its goroutines: nothing new starts once the wait began (the race
// detector tells a WaitGroup grown from zero during its Wait).
func TestInboundRunnerStartDuringWait(t *testing.T) {
	for range 200 {
		var r inboundRunner
		var both sync.WaitGroup
		both.Go(func() { r.goRun(func() {}) })
		both.Go(func() { r.wait(time.Second) })
		both.Wait()
	}
}
