package mcp

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/tool"
)

// flushOnly wraps a ResponseWriter as middleware may: it flushes, but
// neither hands its connection over nor unwraps.
type flushOnly struct{ http.ResponseWriter }

func (f flushOnly) Flush() { f.ResponseWriter.(http.Flusher).Flush() }

// TestHTTPEarlyResponses: a response that ends while its tool runs on (a
// stream closed for the client to resume, a timeout) reaches the client
// at once, on HTTP/1.1 (the handler's goroutine runs the request and
// hands the connection over, or flushes with Connection: close), on
// HTTP/2 and behind a writer that cannot hand its connection over (a
// worker runs it); the client's next call is served at once although the
// tool still runs, in both eras.
func TestHTTPEarlyResponses(t *testing.T) {
	for _, setup := range []string{"HTTP/1.1", "HTTP/2.0", "HTTP/1.1 wrapped"} {
		proto, wrapped := strings.CutSuffix(setup, " wrapped")
		for _, version := range []string{Version20251125, LatestVersion} {
			t.Run(setup+"/"+version, func(t *testing.T) {
				t.Parallel()
				release := make(chan struct{})
				var running atomic.Int32
				srv := ctServer(t)
				srv.RequestTimeout = 2 * time.Second // past the client's wait before it resumes (1 s)
				if err := srv.AddTools(ctTool("hang", `{"type":"object"}`, func(context.Context, map[string]any) (*tool.Result, error) {
					running.Add(1)
					defer running.Add(-1)
					<-release // ignores its context
					return tool.Text("late"), nil
				})); err != nil {
					t.Fatal(err)
				}
				// poll closes its stream and waits until the client resumes
				// it: the response must end while the tool runs.
				resumed := make(chan struct{})
				var resumedOnce sync.Once
				if err := srv.AddTools(ctTool("poll", `{"type":"object"}`, func(ctx context.Context, _ map[string]any) (*tool.Result, error) {
					if !CloseSSEStream(ctx) {
						return tool.Text("not closed"), nil
					}
					select {
					case <-resumed:
						return tool.Text("resumed"), nil
					case <-time.After(5 * time.Second):
						return tool.Text("the stream did not end while the tool ran"), nil
					}
				})); err != nil {
					t.Fatal(err)
				}
				h := &HTTPHandler{Server: srv}
				var served atomic.Value
				ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.Method == http.MethodGet && r.Header.Get(HeaderLastEventID) != "" {
						resumedOnce.Do(func() { close(resumed) })
					}
					served.Store(r.Proto)
					if wrapped {
						w = flushOnly{w}
					}
					h.ServeHTTP(w, r)
				}))
				ts.EnableHTTP2 = proto == "HTTP/2.0"
				ts.StartTLS()
				t.Cleanup(func() {
					close(release)
					ts.Close()
					h.Close()
				})
				s := ctConnect(t, &Client{ProtocolVersion: version}, &HTTPTransport{URL: ts.URL, HTTPClient: ts.Client()})

				if version == Version20251125 {
					res, err := s.CallTool(ctContext(t), "poll", nil)
					if err != nil {
						t.Fatal(err)
					}
					if got := ctText(t, res); got != "resumed" {
						t.Errorf("poll: got %q, want the result on the stream resumed while the tool ran", got)
					}
				}

				start := time.Now()
				_, err := s.CallTool(ctContext(t), "hang", nil)
				if err == nil || !strings.Contains(err.Error(), "timed out") {
					t.Errorf("hang: got %v, want a timeout", err)
				}
				if d := time.Since(start); d > 5*time.Second {
					t.Errorf("the timeout took %v", d)
				}
				if running.Load() != 1 {
					t.Errorf("%d hanging calls run, want 1 (it ignores its context)", running.Load())
				}
				start = time.Now()
				res, err := s.CallTool(ctContext(t), "progress", nil)
				if err != nil || ctText(t, res) != "done" {
					t.Fatalf("the next call: %v", err)
				}
				if d := time.Since(start); d > 2*time.Second {
					t.Errorf("the next call took %v: it waited for the hanging one", d)
				}
				if got := served.Load(); got != proto {
					t.Errorf("served %v, want %s", got, proto)
				}
			})
		}
	}
}

// TestHTTPTimeoutRacesResult: a tool that returns just as its request
// times out gets exactly one answer, the result or the timeout error,
// never an empty response (the handler must not return while the timer
// writes).
func TestHTTPTimeoutRacesResult(t *testing.T) {
	srv := ctServer(t)
	srv.RequestTimeout = 5 * time.Millisecond
	var n atomic.Int64
	if err := srv.AddTools(ctTool("edge", `{"type":"object"}`, func(context.Context, map[string]any) (*tool.Result, error) {
		// Around the timeout, a little earlier or later each time.
		time.Sleep(time.Duration(4000+n.Add(1)%20*100) * time.Microsecond)
		return tool.Text("in time"), nil
	})); err != nil {
		t.Fatal(err)
	}
	ts, _, _ := ctServe(t, srv)
	for _, version := range []string{Version20251125, LatestVersion} {
		s := ctConnect(t, &Client{ProtocolVersion: version}, &HTTPTransport{URL: ts.URL})
		results, timeouts := 0, 0
		for range 150 {
			res, err := s.CallTool(ctContext(t), "edge", nil)
			switch {
			case err == nil && ctText(t, res) == "in time":
				results++
			case err != nil && strings.Contains(err.Error(), "timed out"):
				timeouts++
			default:
				t.Fatalf("%s: got %v, %v; want the result or the timeout error", version, res, err)
			}
		}
		t.Logf("%s: %d results, %d timeouts", version, results, timeouts)
	}
}

// TestHTTPRequestOutlastsReadTimeout: a request whose tool runs past the
// server's ReadTimeout (which bounds the arrival of its body) is neither
// cancelled nor cut, and its connection serves the next call, on HTTP/1.1
// and HTTP/2 in both eras: the read deadline ends with the body.
func TestHTTPRequestOutlastsReadTimeout(t *testing.T) {
	// The read deadline covers the TLS handshake too, which a loaded
	// machine can take a few hundred milliseconds over.
	const readTimeout = time.Second
	for _, proto := range []string{"HTTP/1.1", "HTTP/2.0"} {
		for _, version := range []string{Version20251125, LatestVersion} {
			t.Run(proto+"/"+version, func(t *testing.T) {
				t.Parallel()
				srv := ctServer(t)
				if err := srv.AddTools(ctTool("outlast", `{"type":"object"}`, func(ctx context.Context, _ map[string]any) (*tool.Result, error) {
					select {
					case <-time.After(4 * readTimeout):
						return tool.Text("ran"), nil
					case <-ctx.Done():
						return tool.Text("cancelled: " + context.Cause(ctx).Error()), nil
					}
				})); err != nil {
					t.Fatal(err)
				}
				h := &HTTPHandler{Server: srv}
				var conns atomic.Int32
				ts := httptest.NewUnstartedServer(h)
				ts.Config = NewHTTPServer(h, nil)
				ts.Config.ReadTimeout = readTimeout
				ts.Config.ConnState = func(_ net.Conn, s http.ConnState) {
					if s == http.StateNew {
						conns.Add(1)
					}
				}
				ts.EnableHTTP2 = proto == "HTTP/2.0"
				ts.StartTLS()
				t.Cleanup(func() {
					ts.Close()
					h.Close()
				})
				s := ctConnect(t, &Client{ProtocolVersion: version}, &HTTPTransport{URL: ts.URL, HTTPClient: ts.Client()})
				before := conns.Load()
				for i := range 2 {
					res, err := s.CallTool(ctContext(t), "outlast", nil)
					if err != nil {
						t.Fatalf("call %d: %v", i, err)
					}
					if got := ctText(t, res); got != "ran" {
						t.Errorf("call %d: got %q, want %q", i, got, "ran")
					}
				}
				if n := conns.Load() - before; n != 0 {
					t.Errorf("%d new connections for the calls, want 0: the read deadline cut the one in use", n)
				}
			})
		}
	}
}

// TestHTTPSessionEndCancelsRequests: ending a legacy session, by the
// client's DELETE or by closing the handler, cancels the requests it has
// in flight.
func TestHTTPSessionEndCancelsRequests(t *testing.T) {
	for _, end := range []string{"DELETE", "handler Close"} {
		t.Run(end, func(t *testing.T) {
			started := make(chan struct{})
			ended := make(chan error, 1)
			srv := ctServer(t)
			if err := srv.AddTools(ctTool("wait", `{"type":"object"}`, func(ctx context.Context, _ map[string]any) (*tool.Result, error) {
				close(started)
				select {
				case <-ctx.Done():
					ended <- ctx.Err()
				case <-time.After(10 * time.Second):
					ended <- nil
				}
				return tool.Text("done"), nil
			})); err != nil {
				t.Fatal(err)
			}
			ts, h, _ := ctServe(t, srv)
			s := ctConnect(t, &Client{ProtocolVersion: Version20251125}, &HTTPTransport{URL: ts.URL})
			go func() { _, _ = s.CallTool(ctContext(t), "wait", nil) }()
			select {
			case <-started:
			case <-time.After(5 * time.Second):
				t.Fatal("the tool did not start")
			}
			if end == "DELETE" {
				_ = s.Close()
			} else {
				h.Close()
			}
			select {
			case err := <-ended:
				if err == nil {
					t.Errorf("the tool's context was not cancelled when the session ended")
				}
			case <-time.After(15 * time.Second):
				t.Fatal("the tool did not end")
			}
		})
	}
}

// answers records what a connection sends back for its requests.
type answers struct {
	mu       sync.Mutex
	finished []string // each response's encoding; "" for none
}

func (a *answers) send(*jsonrpc.Message) error { return nil }

func (a *answers) finish(m *jsonrpc.Message) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	var b []byte
	if m != nil {
		b = m.Append(nil)
	}
	a.finished = append(a.finished, string(b))
	return nil
}

// A request that reaches a legacy session's connection after the session
// ended (close ran) does not run and gets no response: its context does
// not derive from the session's (conn.detached), so nothing but close's
// own bookkeeping can stop it.
func TestClosedConnCancelsLateRequest(t *testing.T) {
	srv := ctServer(t)
	var ran atomic.Bool
	if err := srv.AddTools(ctTool("probe", `{"type":"object"}`, func(context.Context, map[string]any) (*tool.Result, error) {
		ran.Store(true)
		return tool.Text("ran"), nil
	})); err != nil {
		t.Fatal(err)
	}
	c := newConn(srv, nil)
	c.detached = context.Background()
	c.initialized, c.version = true, Version20251125
	c.close()
	m, err := decodeOwned([]byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"probe"}}`))
	if err != nil {
		t.Fatal(err)
	}
	var out answers
	c.serve(context.Background(), m, &out, time.Now())
	if ran.Load() {
		t.Error("the tool ran on a closed connection")
	}
	if len(out.finished) != 1 || out.finished[0] != "" {
		t.Errorf("the late request was answered with %q, want no response (finish(nil) once)", out.finished)
	}
}
