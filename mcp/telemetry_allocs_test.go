//go:build !race

// The race detector allocates on its own: allocations are counted without it.

package mcp

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/tool"
)

// TestTelemetrySpanAllocs pins the allocations of one traced tools/call
// on each side (BenchmarkTelemetrySpan's work) with the SDK sampling every
// span into a batch processor: the SDK's own span makes 4 (the span, its
// context, its attributes, the snapshot ended); the server adds the
// request's trace context (its state, the traceparent string, the remote
// parent's context and span), the client the _meta it writes it in and the
// traceparent string.
func TestTelemetrySpanAllocs(t *testing.T) {
	ctx := context.Background()
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))
	defer func() { _ = tp.Shutdown(ctx) }()
	tel := Telemetry{TracerProvider: tp,
		Propagator: propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})}

	srv := &Server{Telemetry: tel}
	add := tool.NewFunc(tool.Info{Name: "add", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, json.RawMessage) (*tool.Result, error) { return tool.Text("5"), nil })
	if err := srv.AddTools(add); err != nil {
		t.Fatal(err)
	}
	c := newConn(srv, lineSender{})
	params := json.RawMessage(`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
		`"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},"name":"add","arguments":{"a":2,"b":3}}`)
	resp := &jsonrpc.Message{ID: jsonrpc.Int64ID(7), Result: json.RawMessage(`{}`)}
	req := new(request)
	server := testing.AllocsPerRun(200, func() {
		*req = request{conn: c, id: resp.ID, method: MethodToolsCall, params: params, out: lineSender{},
			subject: "add", version: Version20260728, modern: true}
		_ = srv.tel.startServerSpan(ctx, req, time.Now())
		req.endServerSpan(resp)
	})
	if !req.op.span.SpanContext().IsValid() || req.op.span.SpanContext().TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" {
		t.Fatalf("server span %v, want one in the trace of the request's traceparent", req.op.span.SpanContext())
	}

	s := &ClientSession{tel: tel.instruments("client", trace.SpanKindClient), netAttrs: clientNetAttrs(&InMemoryTransport{}), version: Version20260728}
	p := &CallToolParams{Name: "add"}
	res := &CallToolResult{}
	client := testing.AllocsPerRun(200, func() {
		p.Meta = nil
		cctx, op := s.startCall(ctx, MethodToolsCall, &p.Params)
		op.id = jsonrpc.Int64ID(7)
		s.endCall(cctx, &op, MethodToolsCall, p, res, nil)
	})
	if p.Meta == nil || len(p.Meta.Traceparent) != 55 {
		t.Fatalf("client _meta %+v, want a traceparent", p.Meta)
	}
	t.Logf("allocations per traced tools/call: server %v, client %v", server, client)
	const wantServer, wantClient = 8, 6
	if server > wantServer || client > wantClient {
		t.Errorf("allocations per traced tools/call: server %v (want at most %d), client %v (want at most %d)",
			server, wantServer, client, wantClient)
	}
}
