package mcp

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/tool"
)

// modernCall is a stateless 2026-07-28 tools/call of tool name.
func modernCall(t *testing.T, name string) []byte {
	t.Helper()
	return []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + name + `","arguments":{},"_meta":{"` +
		MetaProtocolVersion + `":"` + Version20260728 + `","` + MetaClientCapabilities + `":{}}}}`)
}

// serveStateless serves raw as a stateless request's connection does
// (initRequestConn, then close) and returns its connection and answers.
func serveStateless(t *testing.T, srv *Server, raw []byte) (*conn, *answers) {
	t.Helper()
	m, err := decodeOwned(raw)
	if err != nil {
		t.Fatal(err)
	}
	c := new(conn)
	initRequestConn(c, srv)
	var out answers
	c.serve(context.Background(), m, &out, time.Now())
	c.close()
	return c, &out
}

// The timeout timer a stateless request's connection hands back to the
// server as it closes serves the next request's connection: it ends that
// request at its own deadline, and nothing of the first request's; a
// timer that fired is never handed back.
func TestRequestTimerReuse(t *testing.T) {
	srv := ctServer(t)
	srv.RequestTimeout = 100 * time.Millisecond
	if err := srv.AddTools(
		ctTool("quick", `{"type":"object"}`, func(context.Context, map[string]any) (*tool.Result, error) {
			return tool.Text("quick"), nil
		}),
		ctTool("stuck", `{"type":"object"}`, func(ctx context.Context, _ map[string]any) (*tool.Result, error) {
			<-ctx.Done()
			return tool.Text("late"), nil
		}),
	); err != nil {
		t.Fatal(err)
	}

	first, out := serveStateless(t, srv, modernCall(t, "quick"))
	if len(out.finished) != 1 || !strings.Contains(out.finished[0], `"quick"`) {
		t.Fatalf("quick: answers %q, want its result once", out.finished)
	}
	if first.timer != nil || first.timeouts != nil {
		t.Error("a connection closed before its timeout kept its timer")
	}

	start := time.Now()
	second, out := serveStateless(t, srv, modernCall(t, "stuck"))
	if len(out.finished) != 1 || !strings.Contains(out.finished[0], "timed out") {
		t.Fatalf("stuck: answers %q, want one timeout error", out.finished)
	}
	if d := time.Since(start); d < srv.RequestTimeout || d > 5*time.Second {
		t.Errorf("stuck timed out after %v, want about %v", d, srv.RequestTimeout)
	}
	// Its timer fired: it stays with the connection, never reused.
	rt := second.timer
	if rt == nil {
		t.Fatal("the timed-out connection has no timer")
	}
	for range 10 {
		if got, _ := srv.timers.Get().(*requestTimer); got == rt {
			t.Fatal("a timer that fired was kept for another connection")
		}
	}
}

// A stateless request's connection costs no lock of the server's unless
// the server tracks it (a subscriptions/listen stream), and a tracked one
// is forgotten as it closes.
func TestStatelessConnTracking(t *testing.T) {
	srv := ctServer(t)
	c := new(conn)
	initRequestConn(c, srv)
	srv.track(c)
	if len(srv.connections()) != 1 {
		t.Fatal("the tracked connection is not among the server's")
	}
	c.close()
	if n := len(srv.connections()); n != 0 {
		t.Errorf("%d connections tracked after the only one closed, want 0", n)
	}
}

// A tools/call read from the fields the HTTP handler read of its params
// (readHeaderFields) reads as one whose params are walked again.
func TestReadParamsFromHeaderFields(t *testing.T) {
	srv := ctServer(t)
	meta := `"_meta":{"` + MetaProtocolVersion + `":"` + Version20260728 + `","` + MetaClientCapabilities + `":{}}`
	tests := map[string]string{
		"plain":          `{"name":"add","arguments":{"a":2,"b":3},` + meta + `}`,
		"no arguments":   `{"name":"add",` + meta + `}`,
		"escaped name":   `{"name":"a\u0064d","arguments":{}}`,
		"null _meta":     `{"name":"add","arguments":{},"_meta":null}`,
		"unknown tool":   `{"name":"nope","arguments":{"x":[1,{"y":"z"}]}}`,
		"retry":          `{"name":"add","arguments":{},"requestState":"s",` + meta + `}`,
		"name twice":     `{"name":"x","name":"add"}`,
		"not a string":   `{"name":7}`,
		"arguments last": `{` + meta + `,"name":"add","arguments":{"a":1}}`,
	}
	for name, params := range tests {
		t.Run(name, func(t *testing.T) {
			var want, got CallToolParams
			wantErr := want.readParams([]byte(params), srv, nil)
			fields := readHeaderFields([]byte(params), nil)
			if !fields.whole {
				t.Fatal("readHeaderFields did not read the params whole")
			}
			err := got.readParams([]byte(params), srv, &fields)
			if (err == nil) != (wantErr == nil) {
				t.Fatalf("error %v, walked again: %v", err, wantErr)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("read from the header fields:\n%+v\nwalked again:\n%+v", got, want)
			}
		})
	}
}

// The header fields of a _meta the server's cache keeps, with or without
// a trace context, read as those of the same _meta read afresh; the
// request's own trace context reaches neither.
func TestHeaderFieldsFromMetaCache(t *testing.T) {
	const v, caps = `"` + MetaProtocolVersion + `"`, `"` + MetaClientCapabilities + `"`
	metas := map[string]string{
		"usual":             `{` + v + `:"2026-07-28",` + caps + `:{"x":{}},"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"}}`,
		"trace first":       `{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",` + v + `:"2026-07-28",` + caps + `:{}}`,
		"trace last":        `{` + v + `:"2026-07-28",` + caps + `:{},"baggage":"k=1"}`,
		"escaped version":   `{` + v + `:"2026\u002d07-28",` + caps + `:{}}`,
		"case differs":      `{"IO.modelcontextprotocol/protocolVersion":"2026-07-28",` + caps + `:{}}`,
		"capabilities null": `{` + v + `:"2026-07-28",` + caps + `:null}`,
	}
	for name, meta := range metas {
		t.Run(name, func(t *testing.T) {
			params := []byte(`{"name":"add","arguments":{},"_meta":` + meta + `}`)
			want := readHeaderFields(params, nil)
			var c metaCache
			if _, err := c.get([]byte(meta)); err != nil {
				t.Fatal(err)
			}
			got := readHeaderFields(params, &c)
			if got.decoded == nil {
				t.Fatal("the kept _meta was not found")
			}
			if string(got.version) != string(want.version) || string(got.caps) != string(want.caps) || got.meta != want.meta {
				t.Errorf("from the cache: version %q caps %q meta %v; read afresh: %q %q %v",
					got.version, got.caps, got.meta, want.version, want.caps, want.meta)
			}
			if got.decoded.Traceparent != "" || got.decoded.Baggage != "" {
				t.Errorf("the kept _meta carries a request's trace context: %+v", got.decoded)
			}
		})
	}
}
