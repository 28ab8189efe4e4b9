package mcp_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolwire/toolwire/internal/ctxkey"
	"github.com/toolwire/toolwire/mcp"
)

// telemetry is an in-memory OpenTelemetry SDK: the spans ended, and the
// metrics on demand.
type telemetry struct {
	spans  *tracetest.SpanRecorder
	tp     *sdktrace.TracerProvider
	reader *sdkmetric.ManualReader
	mp     *sdkmetric.MeterProvider
}

func newTelemetry(t *testing.T) *telemetry {
	t.Helper()
	tel := &telemetry{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	tel.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tel.spans))
	tel.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(tel.reader))
	t.Cleanup(func() {
		_ = tel.tp.Shutdown(context.Background())
		_ = tel.mp.Shutdown(context.Background())
	})
	return tel
}

// w3c is the propagator of the tests: W3C trace context and baggage.
var w3c = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})

func (tel *telemetry) config() mcp.Telemetry {
	return mcp.Telemetry{TracerProvider: tel.tp, MeterProvider: tel.mp, Propagator: w3c}
}

// find returns the ended spans named name of kind kind.
func (tel *telemetry) find(name string, kind trace.SpanKind) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range tel.spans.Ended() {
		if s.Name() == name && s.SpanKind() == kind {
			out = append(out, s)
		}
	}
	return out
}

// one returns the one ended span named name of kind kind, waiting a
// moment for it: a server span ends once its response is written, which
// the client may read first.
func (tel *telemetry) one(t *testing.T, name string, kind trace.SpanKind) sdktrace.ReadOnlySpan {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		found := tel.find(name, kind)
		if len(found) == 1 {
			return found[0]
		}
		if len(found) > 1 || time.Now().After(deadline) {
			var names []string
			for _, s := range tel.spans.Ended() {
				names = append(names, s.SpanKind().String()+" "+s.Name())
			}
			t.Fatalf("%d %s spans named %q; the spans: %q", len(found), kind, name, names)
		}
		time.Sleep(time.Millisecond)
	}
}

// count returns how many spans named name of kind have ended, waiting a
// moment for want of them.
func (tel *telemetry) count(name string, kind trace.SpanKind, want int) int {
	deadline := time.Now().Add(waitTimeout)
	for {
		n := len(tel.find(name, kind))
		if n >= want || time.Now().After(deadline) {
			return n
		}
		time.Sleep(time.Millisecond)
	}
}

func attrs(s sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes() {
		m[kv.Key] = kv.Value
	}
	return m
}

// expectAttrs checks attributes of s: a want of "" means the attribute
// must be absent, "*" present with any value.
func expectAttrs(t *testing.T, s sdktrace.ReadOnlySpan, want map[string]string) {
	t.Helper()
	got := attrs(s)
	for k, w := range want {
		v, ok := got[attribute.Key(k)]
		switch {
		case w == "" && ok:
			t.Errorf("%s span %q: %s = %q, want none", s.SpanKind(), s.Name(), k, v.String())
		case w == "":
		case !ok:
			t.Errorf("%s span %q: no %s, want %q", s.SpanKind(), s.Name(), k, w)
		case w != "*" && v.String() != w:
			t.Errorf("%s span %q: %s = %q, want %q", s.SpanKind(), s.Name(), k, v.String(), w)
		}
	}
}

// spanMiddleware stands for the program's HTTP instrumentation (otelhttp):
// a server span around each HTTP request, in the request's context.
func spanMiddleware(tp trace.TracerProvider, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, span := tp.Tracer("http").Start(r.Context(), "POST", trace.WithSpanKind(trace.SpanKindServer))
		defer span.End()
		h.ServeHTTP(w, r.WithContext(ctx))
	})
}

// serveHTTP serves h on a loopback listener and returns its URL.
func serveHTTP(t *testing.T, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: waitTimeout}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	return "http://" + ln.Addr().String() + "/mcp"
}

// TestTelemetryTrace: a tools/call made within a span is one trace from
// the caller's span through the client span to the server span, over
// stdio-like pipes and Streamable HTTP, in both eras; each span named and
// attributed as the conventions for MCP say, and the HTTP server span of
// the program's middleware linked from the server span.
func TestTelemetryTrace(t *testing.T) {
	for _, tc := range []struct {
		name, version string
		http          bool
	}{
		{"pipe, 2026-07-28", "", false},
		{"pipe, 2025-11-25", mcp.Version20251125, false},
		{"http, 2026-07-28", "", true},
		{"http, 2025-11-25", mcp.Version20251125, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tel := newTelemetry(t)
			srv := newServer(t, addTool())
			srv.Telemetry = tel.config()
			var tr mcp.ClientTransport = &mcp.InMemoryTransport{Server: srv}
			var handler *mcp.HTTPHandler
			if tc.http {
				handler = &mcp.HTTPHandler{Server: srv}
				t.Cleanup(handler.Close)
				tr = &mcp.HTTPTransport{URL: serveHTTP(t, spanMiddleware(tel.tp, handler))}
			}
			ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
			defer cancel()
			bag, _ := baggage.Parse("user=ada")
			ctx = baggage.ContextWithBaggage(ctx, bag)
			client := &mcp.Client{Info: mcp.Implementation{Name: "t", Version: "1"}, ProtocolVersion: tc.version, Telemetry: tel.config()}
			sess, err := client.Connect(ctx, tr)
			if err != nil {
				t.Fatal(err)
			}
			defer sess.Close()
			ctx, agent := tel.tp.Tracer("test").Start(ctx, "invoke_agent")
			res, err := sess.CallTool(ctx, "add", json.RawMessage(`{"a":2,"b":3}`))
			agent.End()
			if err != nil || res.IsError || res.Content[0].Text != "5" {
				t.Fatalf("add(2, 3): %+v, %v", res, err)
			}

			cs := tel.one(t, "tools/call add", trace.SpanKindClient)
			ss := tel.one(t, "tools/call add", trace.SpanKindServer)
			if cs.Parent().SpanID() != agent.SpanContext().SpanID() {
				t.Errorf("the client span's parent is %v, want the caller's span %v", cs.Parent().SpanID(), agent.SpanContext().SpanID())
			}
			if ss.Parent().SpanID() != cs.SpanContext().SpanID() || !ss.Parent().IsRemote() {
				t.Errorf("the server span's parent is %v (remote %v), want the client span %v from _meta", ss.Parent().SpanID(), ss.Parent().IsRemote(), cs.SpanContext().SpanID())
			}
			if ss.SpanContext().TraceID() != agent.SpanContext().TraceID() {
				t.Errorf("the server span is in trace %v, want the caller's %v", ss.SpanContext().TraceID(), agent.SpanContext().TraceID())
			}
			version := mcp.LatestVersion
			if tc.version != "" {
				version = tc.version
			}
			common := map[string]string{
				"mcp.method.name":       "tools/call",
				"gen_ai.tool.name":      "add",
				"gen_ai.operation.name": "execute_tool",
				"mcp.protocol.version":  version,
				"jsonrpc.request.id":    attrs(cs)["jsonrpc.request.id"].String(),
				"error.type":            "",
			}
			if common["jsonrpc.request.id"] == "" {
				t.Error("the client span has no jsonrpc.request.id")
			}
			session := ""
			if tc.http && tc.version != "" {
				session = "*"
			}
			for _, s := range []sdktrace.ReadOnlySpan{cs, ss} {
				expectAttrs(t, s, common)
				expectAttrs(t, s, map[string]string{"mcp.session.id": session})
				if tc.http {
					expectAttrs(t, s, map[string]string{"network.transport": "tcp", "network.protocol.name": "http"})
				} else {
					expectAttrs(t, s, map[string]string{"network.transport": "pipe", "network.protocol.name": ""})
				}
			}
			if tc.http {
				host, port, _ := net.SplitHostPort(strings.TrimPrefix(strings.TrimSuffix(tr.(*mcp.HTTPTransport).URL, "/mcp"), "http://"))
				expectAttrs(t, cs, map[string]string{"server.address": host, "server.port": port, "network.protocol.version": "1.1"})
				expectAttrs(t, ss, map[string]string{"client.address": "127.0.0.1", "client.port": "*", "network.protocol.version": "1.1"})
				if attrs(cs)["mcp.session.id"] != attrs(ss)["mcp.session.id"] {
					t.Errorf("session ids: client %v, server %v", attrs(cs)["mcp.session.id"].String(), attrs(ss)["mcp.session.id"].String())
				}
				// The HTTP server span is linked, not the parent.
				var httpSpan sdktrace.ReadOnlySpan
				for _, s := range tel.find("POST", trace.SpanKindServer) {
					if s.EndTime().After(ss.EndTime()) || s.EndTime().Equal(ss.EndTime()) {
						if s.StartTime().Before(ss.StartTime()) || s.StartTime().Equal(ss.StartTime()) {
							httpSpan = s
						}
					}
				}
				if httpSpan == nil {
					t.Fatal("no HTTP server span around the server span")
				}
				links := ss.Links()
				if len(links) != 1 || links[0].SpanContext.SpanID() != httpSpan.SpanContext().SpanID() {
					t.Errorf("the server span's links are %+v, want the HTTP server span %v", links, httpSpan.SpanContext().SpanID())
				}
			} else if len(ss.Links()) != 0 {
				t.Errorf("the server span over a pipe has links %+v", ss.Links())
			}

			// The handshake has its spans, child of nothing on the client.
			if tc.version == "" {
				tel.one(t, mcp.MethodDiscover, trace.SpanKindClient)
				tel.one(t, mcp.MethodDiscover, trace.SpanKindServer)
			} else {
				ci := tel.one(t, mcp.MethodInitialize, trace.SpanKindClient)
				si := tel.one(t, mcp.MethodInitialize, trace.SpanKindServer)
				if si.Parent().SpanID() != ci.SpanContext().SpanID() {
					t.Errorf("the server's initialize span is not a child of the client's")
				}
				cn := tel.one(t, mcp.NotificationInitialized, trace.SpanKindClient)
				sn := tel.one(t, mcp.NotificationInitialized, trace.SpanKindServer)
				if sn.Parent().SpanID() != cn.SpanContext().SpanID() {
					t.Errorf("the server's notifications/initialized span is not a child of the client's")
				}
				expectAttrs(t, cn, map[string]string{"jsonrpc.request.id": ""})
			}
		})
	}
}

// TestTelemetryBaggage: the baggage of the caller's context reaches the
// tool's, over the wire, with the trace context, up to the 64 members
// OpenTelemetry's baggage holds (TestTelemetryBadTraceContext sends
// more, and more than 8192 bytes, as another client may).
func TestTelemetryBaggage(t *testing.T) {
	tel := newTelemetry(t)
	got := make(chan baggage.Baggage, 1)
	srv := newServer(t, textTool("who", func(ctx context.Context, _ map[string]any) (string, error) {
		got <- baggage.FromContext(ctx)
		return "ok", nil
	}))
	srv.Telemetry = tel.config()
	members := func(n, size int) baggage.Baggage {
		var ms []baggage.Member
		for i := range n {
			m, err := baggage.NewMemberRaw("k"+strconv.Itoa(i), strings.Repeat("v", size))
			if err != nil {
				t.Fatal(err)
			}
			ms = append(ms, m)
		}
		b, err := baggage.New(ms...)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	user, _ := baggage.Parse("user=ada%20lovelace")
	for _, version := range []string{"", mcp.Version20251125} {
		sess := connectWith(t, &mcp.Client{Info: mcp.Implementation{Name: "t", Version: "1"}, ProtocolVersion: version, Telemetry: tel.config()},
			&mcp.InMemoryTransport{Server: srv})
		for _, tc := range []struct {
			name string
			bag  baggage.Baggage
			want int
		}{
			{"one member", user, 1},
			{"64 members", members(64, 8), 64},
		} {
			ctx := baggage.ContextWithBaggage(context.Background(), tc.bag)
			if _, err := sess.CallTool(ctx, "who", json.RawMessage(`{}`)); err != nil {
				t.Fatal(err)
			}
			b := <-got
			if b.Len() != tc.want {
				t.Errorf("version %q, %s: the tool's baggage has %d members, want %d", version, tc.name, b.Len(), tc.want)
			}
			if tc.name == "one member" && b.Member("user").Value() != "ada lovelace" {
				t.Errorf("version %q: the tool's baggage has user %q, want %q", version, b.Member("user").Value(), "ada lovelace")
			}
		}
	}
}

func connectWith(t *testing.T, c *mcp.Client, tr mcp.ClientTransport) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	s, err := c.Connect(ctx, tr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestTelemetryErrors: a JSON-RPC error and a tool's error result mark
// both spans failed, with the error.type the conventions give.
func TestTelemetryErrors(t *testing.T) {
	tel := newTelemetry(t)
	srv := newServer(t, divideTool())
	srv.Telemetry = tel.config()
	sess := connectWith(t, &mcp.Client{Info: mcp.Implementation{Name: "t", Version: "1"}, Telemetry: tel.config()},
		&mcp.InMemoryTransport{Server: srv})
	ctx := context.Background()

	res, err := sess.CallTool(ctx, "divide", json.RawMessage(`{"a":1,"b":0}`))
	if err != nil || !res.IsError {
		t.Fatalf("divide by zero: %+v, %v; want an error result", res, err)
	}
	for _, kind := range []trace.SpanKind{trace.SpanKindClient, trace.SpanKindServer} {
		s := tel.one(t, "tools/call divide", kind)
		expectAttrs(t, s, map[string]string{"error.type": "tool_error", "rpc.response.status_code": ""})
		if s.Status().Code != codes.Error {
			t.Errorf("%s span status %v, want Error", kind, s.Status())
		}
	}

	_, err = sess.CallTool(ctx, "nosuchtool", json.RawMessage(`{}`))
	if err == nil {
		t.Fatal("calling an unknown tool succeeded")
	}
	cs := tel.one(t, "tools/call nosuchtool", trace.SpanKindClient)
	// The server names no tool it does not have (see
	// TestTelemetryCardinality).
	ss := tel.one(t, "tools/call", trace.SpanKindServer)
	for _, s := range []sdktrace.ReadOnlySpan{cs, ss} {
		expectAttrs(t, s, map[string]string{"error.type": "-32602", "rpc.response.status_code": "-32602", "gen_ai.tool.name": "nosuchtool"})
		if s.Status().Code != codes.Error || !strings.Contains(s.Status().Description, "unknown tool") {
			t.Errorf("%s span status %+v, want Error with the JSON-RPC message", s.SpanKind(), s.Status())
		}
	}
}

// TestTelemetryToolSpan: within the execute_tool span of the tool
// registry (marked with ctxkey.ToolSpan), the client starts no span of
// its own for tools/call: its attributes go on that span, whose trace
// context the request carries.
func TestTelemetryToolSpan(t *testing.T) {
	tel := newTelemetry(t)
	srv := newServer(t, addTool())
	srv.Telemetry = tel.config()
	sess := connectWith(t, &mcp.Client{Info: mcp.Implementation{Name: "t", Version: "1"}, Telemetry: tel.config()},
		&mcp.InMemoryTransport{Server: srv})
	ctx, toolSpan := tel.tp.Tracer("registry").Start(context.Background(), "execute_tool calc__add",
		trace.WithAttributes(attribute.String("gen_ai.tool.name", "calc__add")))
	ctx = context.WithValue(ctx, ctxkey.ToolSpan{}, toolSpan)
	if _, err := sess.CallTool(ctx, "add", json.RawMessage(`{"a":1,"b":1}`)); err != nil {
		t.Fatal(err)
	}
	if n := len(tel.find("tools/call add", trace.SpanKindClient)); n != 0 {
		t.Errorf("%d client spans for the tools/call, want none", n)
	}
	toolSpan.End()
	ts := tel.one(t, "execute_tool calc__add", trace.SpanKindInternal)
	expectAttrs(t, ts, map[string]string{"mcp.method.name": "tools/call", "mcp.protocol.version": mcp.LatestVersion, "jsonrpc.request.id": "*", "network.transport": "pipe",
		"gen_ai.tool.name": "calc__add"})
	ss := tel.one(t, "tools/call add", trace.SpanKindServer)
	if ss.Parent().SpanID() != ts.SpanContext().SpanID() {
		t.Errorf("the server span's parent is %v, want the execute_tool span %v", ss.Parent().SpanID(), ts.SpanContext().SpanID())
	}
}

// TestTelemetryMetrics: the operation and session durations, in seconds,
// with the conventions' buckets and attributes.
func TestTelemetryMetrics(t *testing.T) {
	tel := newTelemetry(t)
	srv := newServer(t, addTool())
	srv.Telemetry = tel.config()
	stdio := startStdio(t, srv) // a stdio session of its own, to end
	stdio.initialize(nil)
	c := &mcp.Client{Info: mcp.Implementation{Name: "t", Version: "1"}, Telemetry: tel.config()}
	sess := connectWith(t, c, &mcp.InMemoryTransport{Server: srv})
	for range 3 {
		if _, err := sess.CallTool(context.Background(), "add", json.RawMessage(`{"a":1,"b":1}`)); err != nil {
			t.Fatal(err)
		}
	}
	sess.Close()
	stdio.in.Close()
	<-stdio.done
	stdio.done <- nil // for the cleanup

	var rm metricdata.ResourceMetrics
	if err := tel.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	hist := map[string]metricdata.Histogram[float64]{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != "github.com/toolwire/toolwire/mcp" {
			continue
		}
		for _, m := range sm.Metrics {
			if m.Unit != "s" {
				t.Errorf("%s has unit %q, want s", m.Name, m.Unit)
			}
			hist[m.Name] = m.Data.(metricdata.Histogram[float64])
		}
	}
	buckets := []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}
	for _, name := range []string{"mcp.client.operation.duration", "mcp.server.operation.duration"} {
		var calls uint64
		for _, dp := range hist[name].DataPoints {
			if !slices.Equal(dp.Bounds, buckets) {
				t.Errorf("%s buckets %v, want %v", name, dp.Bounds, buckets)
			}
			m, _ := dp.Attributes.Value("mcp.method.name")
			tn, _ := dp.Attributes.Value("gen_ai.tool.name")
			tr, _ := dp.Attributes.Value("network.transport")
			if m.AsString() == "tools/call" {
				if tn.AsString() != "add" || tr.AsString() != "pipe" {
					t.Errorf("%s: tools/call point with attributes %v", name, dp.Attributes.ToSlice())
				}
				calls += dp.Count
			}
		}
		if calls != 3 {
			t.Errorf("%s counts %d tools/call, want 3", name, calls)
		}
	}
	for _, name := range []string{"mcp.client.session.duration", "mcp.server.session.duration"} {
		var n uint64
		for _, dp := range hist[name].DataPoints {
			n += dp.Count
		}
		if n < 1 {
			t.Errorf("%s recorded no session", name)
		}
	}
}

// recordingPropagator is a propagator that trusts what it is given: it
// records what the carrier's Get returns for each of its fields.
type recordingPropagator struct {
	mu  sync.Mutex
	got map[string][]string
}

func (p *recordingPropagator) Inject(context.Context, propagation.TextMapCarrier) {}

func (p *recordingPropagator) Extract(ctx context.Context, c propagation.TextMapCarrier) context.Context {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c.Get("probe") == "yes" {
		for _, k := range p.Fields() {
			p.got[k] = append(p.got[k], c.Get(k))
		}
	}
	return ctx
}

func (p *recordingPropagator) Fields() []string { return []string{"traceparent", "baggage"} }

// TestTelemetryBadTraceContext: malformed trace context in _meta is
// ignored (the request served as without it, its span a new trace's
// root), and no propagator is handed a value past the W3C baggage limit.
func TestTelemetryBadTraceContext(t *testing.T) {
	tel := newTelemetry(t)
	rec := &recordingPropagator{got: map[string][]string{}}
	srv := newServer(t, addTool(), textTool("bag", func(ctx context.Context, _ map[string]any) (string, error) {
		return strconv.Itoa(baggage.FromContext(ctx).Len()), nil
	}))
	srv.Telemetry = tel.config()
	stdio := startStdio(t, srv)
	stdio.initialize(nil)

	// The W3C Baggage propagator keeps 64 members of more, none of a
	// baggage past 8192 bytes.
	many := make([]string, 100)
	for i := range many {
		many[i] = "k" + strconv.Itoa(i) + "=v"
	}
	for _, tc := range []struct {
		bag  string
		want string
	}{
		{strings.Join(many, ","), "64"},
		{strings.Join(many[:3], ","), "3"},
		{"k=" + strings.Repeat("v", 9000), "0"},
	} {
		resp := stdio.call("tools/call", map[string]any{"name": "bag", "arguments": map[string]any{}, "_meta": map[string]any{"baggage": tc.bag}})
		if text, _ := toolText(t, resp); text != tc.want {
			t.Errorf("a baggage of %d bytes reached the tool with %s members, want %s", len(tc.bag), text, tc.want)
		}
	}

	huge := strings.Repeat("k=v,", 3000)[:12000-1]
	maxed := "k=" + strings.Repeat("v", 8190)
	args := map[string]any{"a": 1, "b": 2}
	for _, tc := range []struct {
		name string
		meta any
	}{
		{"malformed traceparent", map[string]any{"traceparent": "00-xyz-00f067aa0ba902b7-01"}},
		{"all-zero trace id", map[string]any{"traceparent": "00-00000000000000000000000000000000-00f067aa0ba902b7-01"}},
		{"traceparent not a string", map[string]any{"traceparent": 7}},
		{"malformed baggage", map[string]any{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "baggage": "=,;;%%%"}},
		{"huge baggage", map[string]any{"baggage": huge}},
		{"baggage at the limit", map[string]any{"baggage": maxed}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tel.spans.Reset()
			resp := stdio.call("tools/call", map[string]any{"name": "add", "arguments": args, "_meta": tc.meta})
			if text, isErr := toolText(t, resp); text != "3" || isErr {
				t.Fatalf("add with %s: %s", tc.name, resp)
			}
			ss := tel.one(t, "tools/call add", trace.SpanKindServer)
			if tc.name == "malformed baggage" {
				if got := ss.Parent().TraceID().String(); got != "4bf92f3577b34da6a3ce929d0e0e4736" {
					t.Errorf("the valid traceparent beside malformed baggage was not the parent: trace %s", got)
				}
				return
			}
			if ss.Parent().IsValid() {
				t.Errorf("the server span has parent %v, want a new trace", ss.Parent())
			}
		})
	}

	// What a propagator is given: nothing past the limit.
	srv2 := newServer(t, addTool())
	srv2.Telemetry = mcp.Telemetry{TracerProvider: tel.tp, Propagator: rec}
	stdio2 := startStdio(t, srv2)
	stdio2.initialize(nil)
	for _, b := range []string{huge, maxed} {
		resp := stdio2.call("tools/call", map[string]any{"name": "add", "arguments": args, "_meta": map[string]any{"baggage": b, "probe": "yes"}})
		if text, _ := toolText(t, resp); text != "3" {
			t.Fatalf("add: %s", resp)
		}
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if got := rec.got["baggage"]; len(got) != 2 || got[0] != "" || got[1] != maxed {
		t.Errorf("the propagator got baggage of %d values, lengths %v; want \"\" for %d bytes and all %d bytes at the limit",
			len(got), lengths(got), len(huge), len(maxed))
	}
}

func lengths(ss []string) []int {
	var n []int
	for _, s := range ss {
		n = append(n, len(s))
	}
	return n
}

// TestTelemetryMetaNotObject: a _meta that is not an object is the same
// error with telemetry as without, and its span a new trace.
func TestTelemetryMetaNotObject(t *testing.T) {
	tel := newTelemetry(t)
	plain := newServer(t, addTool())
	traced := newServer(t, addTool())
	traced.Telemetry = tel.config()
	for _, meta := range []any{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", []any{"traceparent"}, 7} {
		var want string
		for i, srv := range []*mcp.Server{plain, traced} {
			c := startStdio(t, srv)
			c.initialize(nil)
			resp := c.call("tools/call", map[string]any{"name": "add", "arguments": map[string]any{"a": 1, "b": 2}, "_meta": meta})
			var got struct {
				Error json.RawMessage `json:"error"`
			}
			_ = json.Unmarshal([]byte(resp.raw), &got)
			if i == 0 {
				want = string(got.Error)
			} else if string(got.Error) != want {
				t.Errorf("_meta %v: with telemetry %s, without %s", meta, got.Error, want)
			}
		}
		tel.spans.Reset()
	}
	for _, s := range tel.spans.Ended() {
		if s.Parent().IsValid() {
			t.Errorf("span %q has parent %v", s.Name(), s.Parent())
		}
	}
}

// TestTelemetryCardinality: what a client sends cannot make span names
// and metric attributes of any cardinality: a method the server does not
// know is _OTHER, and a tool it does not have is not named.
func TestTelemetryCardinality(t *testing.T) {
	tel := newTelemetry(t)
	srv := newServer(t, addTool())
	srv.Telemetry = tel.config()
	stdio := startStdio(t, srv)
	stdio.initialize(nil)
	for i := range 3 {
		stdio.call("x/made-up-"+strconv.Itoa(i), map[string]any{})
		stdio.call("tools/call", map[string]any{"name": "made-up-" + strconv.Itoa(i), "arguments": map[string]any{}})
	}
	if n := tel.count("_OTHER", trace.SpanKindServer, 3); n != 3 {
		t.Errorf("%d _OTHER spans for 3 unknown methods", n)
	}
	if n := tel.count("tools/call", trace.SpanKindServer, 3); n != 3 {
		t.Errorf("%d spans named tools/call alone for 3 unknown tools", n)
	}
	var rm metricdata.ResourceMetrics
	if err := tel.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "mcp.server.operation.duration" {
				continue
			}
			for _, dp := range m.Data.(metricdata.Histogram[float64]).DataPoints {
				for _, kv := range dp.Attributes.ToSlice() {
					if strings.Contains(kv.Value.String(), "made-up") {
						t.Errorf("a metric point has %s = %q", kv.Key, kv.Value.String())
					}
				}
			}
		}
	}
}

// TestTelemetryOff: with the default providers (OpenTelemetry's global
// ones, with no SDK installed) no trace context goes into _meta.
func TestTelemetryOff(t *testing.T) {
	srv := newServer(t, addTool())
	for _, version := range []string{"", mcp.Version20251125} {
		sess := connectWith(t, &mcp.Client{Info: mcp.Implementation{Name: "t", Version: "1"}, ProtocolVersion: version},
			&mcp.InMemoryTransport{Server: srv})
		var p mcp.CallToolParams
		p.Name, p.Arguments = "add", json.RawMessage(`{"a":1,"b":1}`)
		var res mcp.CallToolResult
		if err := sess.Call(context.Background(), mcp.MethodToolsCall, &p, &res); err != nil {
			t.Fatal(err)
		}
		if p.Meta != nil && (p.Meta.Traceparent != "" || p.Meta.Baggage != "") {
			t.Errorf("version %q: without telemetry the request's _meta is %+v", version, p.Meta)
		}
	}
}

// TestTelemetryAmbientParent: a request with no trace context in _meta
// (from a client without telemetry) is a child of the span it is served
// in (the HTTP server span of the program's middleware), not linked to
// it as well.
func TestTelemetryAmbientParent(t *testing.T) {
	tel := newTelemetry(t)
	srv := newServer(t, addTool())
	srv.Telemetry = tel.config()
	h := &mcp.HTTPHandler{Server: srv}
	t.Cleanup(h.Close)
	url := serveHTTP(t, spanMiddleware(tel.tp, h))
	sess := connectWith(t, &mcp.Client{Info: mcp.Implementation{Name: "t", Version: "1"}}, &mcp.HTTPTransport{URL: url})
	if _, err := sess.CallTool(context.Background(), "add", json.RawMessage(`{"a":1,"b":1}`)); err != nil {
		t.Fatal(err)
	}
	ss := tel.one(t, "tools/call add", trace.SpanKindServer)
	parent := ""
	for _, s := range tel.find("POST", trace.SpanKindServer) {
		if s.SpanContext().SpanID() == ss.Parent().SpanID() {
			parent = s.Name()
		}
	}
	if parent == "" || ss.Parent().IsRemote() {
		t.Errorf("the server span's parent %v is not the HTTP server span", ss.Parent())
	}
	if len(ss.Links()) != 0 {
		t.Errorf("the server span links %+v besides its parent", ss.Links())
	}
}

// TestTelemetryReusedParams: params a caller passes again carry the trace
// context of the call they are passed to, not what an earlier call left
// in their _meta.
func TestTelemetryReusedParams(t *testing.T) {
	tel := newTelemetry(t)
	got := make(chan string, 1)
	srv := newServer(t, textTool("who", func(ctx context.Context, _ map[string]any) (string, error) {
		got <- baggage.FromContext(ctx).Member("user").Value()
		return "ok", nil
	}))
	srv.Telemetry = tel.config()
	sess := connectWith(t, &mcp.Client{Info: mcp.Implementation{Name: "t", Version: "1"}, Telemetry: tel.config()},
		&mcp.InMemoryTransport{Server: srv})
	p := &mcp.CallToolParams{Name: "who", Arguments: json.RawMessage(`{}`)}
	p.Meta = &mcp.RequestMeta{ProgressToken: json.RawMessage(`"tok"`)}
	bag, _ := baggage.Parse("user=ada")
	for i, ctx := range []context.Context{baggage.ContextWithBaggage(context.Background(), bag), context.Background()} {
		var res mcp.CallToolResult
		if err := sess.Call(ctx, mcp.MethodToolsCall, p, &res); err != nil {
			t.Fatal(err)
		}
		want := []string{"ada", ""}[i]
		if v := <-got; v != want {
			t.Errorf("call %d: the tool's baggage has user %q, want %q", i+1, v, want)
		}
	}
}

// TestTelemetryServerRequests: a request a legacy server sends its client
// while serving a call (here roots/list) is a CLIENT span on the server,
// child of the call's span, and a SERVER span on the client, child of
// that one through the request's _meta; over pipes and HTTP.
func TestTelemetryServerRequests(t *testing.T) {
	for _, useHTTP := range []bool{false, true} {
		t.Run("http="+strconv.FormatBool(useHTTP), func(t *testing.T) {
			tel := newTelemetry(t)
			srv := newServer(t, textTool("roots", func(ctx context.Context, _ map[string]any) (string, error) {
				res, err := mcp.ListRoots(ctx)
				if err != nil {
					return "", err
				}
				return strconv.Itoa(len(res.Roots)), nil
			}))
			srv.Telemetry = tel.config()
			var tr mcp.ClientTransport = &mcp.InMemoryTransport{Server: srv}
			if useHTTP {
				h := &mcp.HTTPHandler{Server: srv}
				t.Cleanup(h.Close)
				tr = &mcp.HTTPTransport{URL: serveHTTP(t, h)}
			}
			c := &mcp.Client{Info: mcp.Implementation{Name: "t", Version: "1"}, ProtocolVersion: mcp.Version20251125, Telemetry: tel.config(),
				Roots: func(context.Context) ([]mcp.Root, error) { return []mcp.Root{{URI: "file:///tmp"}}, nil }}
			sess := connectWith(t, c, tr)
			res, err := sess.CallTool(context.Background(), "roots", json.RawMessage(`{}`))
			if err != nil || res.IsError || res.Content[0].Text != "1" {
				t.Fatalf("roots: %+v, %v", res, err)
			}
			call := tel.one(t, "tools/call roots", trace.SpanKindServer)
			asked := tel.one(t, mcp.MethodListRoots, trace.SpanKindClient)
			answered := tel.one(t, mcp.MethodListRoots, trace.SpanKindServer)
			if asked.Parent().SpanID() != call.SpanContext().SpanID() {
				t.Errorf("the server's roots/list span is not a child of the call's")
			}
			if answered.Parent().SpanID() != asked.SpanContext().SpanID() || !answered.Parent().IsRemote() {
				t.Errorf("the client's roots/list span is not a child of the server's, through _meta")
			}
			for _, s := range []sdktrace.ReadOnlySpan{asked, answered} {
				expectAttrs(t, s, map[string]string{"mcp.method.name": "roots/list", "jsonrpc.request.id": "*", "mcp.protocol.version": mcp.Version20251125, "error.type": ""})
			}
		})
	}
}

// TestTelemetryMetaAnywhere: the trace context is read from _meta
// wherever it is among the params (this package's client writes it
// first, other clients may not).
func TestTelemetryMetaAnywhere(t *testing.T) {
	tel := newTelemetry(t)
	srv := newServer(t, addTool())
	srv.Telemetry = tel.config()
	stdio := startStdio(t, srv)
	stdio.initialize(nil)
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	for i, params := range []string{
		`{"_meta":{"traceparent":"00-` + traceID + `-00f067aa0ba902b7-01"},"name":"add","arguments":{"a":1,"b":2}}`,
		`{"name":"add","arguments":{"a":1,"b":2},"_meta":{"traceparent":"00-` + traceID + `-00f067aa0ba902b7-01"}}`,
		`{"name":"add", "_meta" : {"x":{"traceparent":"no"},"traceparent":"00-` + traceID + `-00f067aa0ba902b7-01"},"arguments":{"a":1,"b":2}}`,
	} {
		tel.spans.Reset()
		id := "m" + strconv.Itoa(i)
		stdio.send(`{"jsonrpc":"2.0","id":"` + id + `","method":"tools/call","params":` + params + `}`)
		resp, _ := stdio.await(`"` + id + `"`)
		if text, _ := toolText(t, resp); text != "3" {
			t.Fatalf("params %s: %s", params, resp)
		}
		if got := tel.one(t, "tools/call add", trace.SpanKindServer).Parent().TraceID().String(); got != traceID {
			t.Errorf("params %s: the server span's parent is in trace %q, want %q", params, got, traceID)
		}
	}
}
