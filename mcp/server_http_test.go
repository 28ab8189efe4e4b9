package mcp_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/mcp"
)

// shutdownWait bounds the wait for RunHTTPServer to return after its
// context ends: well beyond mcp.ShutdownTimeout.
const shutdownWait = mcp.ShutdownTimeout + 10*time.Second

// TestRunHTTPServerShutdown ends RunHTTPServer's context while a call is in
// flight, and checks that the server stops accepting connections, that the
// call still gets its answer when it finishes within ShutdownTimeout, and
// that a call that does not finish is cut off and RunHTTPServer returns
// all the same.
func TestRunHTTPServerShutdown(t *testing.T) {
	for _, tt := range []struct {
		name   string
		finish bool // the call finishes during the shutdown
	}{
		{"call finishes", true},
		{"call never finishes", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			block := newBlockingTool("block")
			defer block.unblock()
			h := &mcp.HTTPHandler{Server: newServer(t, block)}
			defer h.Close()
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			url := "http://" + ln.Addr().String()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			served := make(chan error, 1)
			go func() { served <- mcp.RunHTTPServer(ctx, mcp.NewHTTPServer(h, nil), ln) }()

			type answer struct {
				status int
				body   string
				err    error
			}
			answered := make(chan answer, 1)
			body := mustJSON(t, map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
				"params": modern(map[string]any{"name": "block", "arguments": map[string]any{}})})
			go func() {
				req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				for k, v := range modernHeaders("tools/call", "block") {
					req.Header.Set(k, v)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					answered <- answer{err: err}
					return
				}
				defer resp.Body.Close()
				b, err := io.ReadAll(resp.Body)
				answered <- answer{resp.StatusCode, string(b), err}
			}()
			block.waitStarted(t)
			cancel()
			eventually(t, "the listener closes", func() bool {
				c, err := net.Dial("tcp", ln.Addr().String())
				if err == nil {
					c.Close()
				}
				return err != nil
			})
			if tt.finish {
				block.unblock()
			}
			select {
			case a := <-answered:
				switch {
				case tt.finish && (a.err != nil || a.status != http.StatusOK || !strings.Contains(a.body, "released")):
					t.Errorf("call in flight during shutdown: HTTP %d %q, %v; want 200 with its result", a.status, a.body, a.err)
				case !tt.finish && a.err == nil:
					t.Errorf("call still running at the end of the shutdown: HTTP %d %q; want the connection closed", a.status, a.body)
				}
			case <-time.After(shutdownWait):
				t.Fatalf("no answer to the call in flight within %v of the shutdown", shutdownWait)
			}
			select {
			case err := <-served:
				if err != nil {
					t.Errorf("RunHTTPServer = %v, want nil after a shutdown", err)
				}
			case <-time.After(shutdownWait):
				t.Fatalf("RunHTTPServer did not return within %v of its context's end", shutdownWait)
			}
		})
	}
}

// TestRunHTTPServerEndsStreams ends RunHTTPServer's context while legacy
// SSE streams are open (the HTTP+SSE transport's and a Streamable HTTP
// session's standalone stream) and checks that both streams end and that
// RunHTTPServer returns.
func TestRunHTTPServerEndsStreams(t *testing.T) {
	srv := newServer(t, echoTool())
	h := &mcp.HTTPHandler{Server: srv}
	defer h.Close()
	sse := &mcp.SSEHandler{Server: srv}
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	mux.Handle("/sse", sse)
	mux.Handle("/message", sse)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- mcp.RunHTTPServer(ctx, mcp.NewHTTPServer(mux, nil), ln) }()

	// A session of the Streamable HTTP transport, and its GET stream.
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	req, _ := http.NewRequest(http.MethodPost, url+"/mcp", strings.NewReader(init))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	sid := resp.Header.Get(mcp.HeaderSessionID)
	if sid == "" {
		t.Fatalf("initialize: HTTP %d without a session id", resp.StatusCode)
	}
	streams := map[string]*http.Request{"/sse": nil, "/mcp": nil}
	for path := range streams {
		req, _ := http.NewRequest(http.MethodGet, url+path, nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set(mcp.HeaderSessionID, sid)
		streams[path] = req
	}
	ended := make(chan string, len(streams))
	for path, req := range streams {
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %v, %v", path, resp, err)
		}
		go func() {
			defer resp.Body.Close()
			_, _ = io.Copy(io.Discard, resp.Body) // until the stream ends
			ended <- path
		}()
	}
	cancel()
	for range streams {
		select {
		case <-ended:
		case <-time.After(shutdownWait):
			t.Fatalf("an SSE stream was still open %v after the shutdown began", shutdownWait)
		}
	}
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("RunHTTPServer = %v, want nil after a shutdown", err)
		}
	case <-time.After(shutdownWait):
		t.Fatalf("RunHTTPServer did not return within %v of its context's end", shutdownWait)
	}
}
