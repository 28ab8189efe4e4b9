//go:build !race

// The race detector allocates on its own: allocations are counted without it.

package mcp

import (
	"context"
	"testing"
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
	w := newSpanWork(t)
	req := new(request)
	server := testing.AllocsPerRun(200, func() { w.serverSpan(ctx, req) })
	if !req.op.span.SpanContext().IsValid() || req.op.span.SpanContext().TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" {
		t.Fatalf("server span %v, want one in the trace of the request's traceparent", req.op.span.SpanContext())
	}
	client := testing.AllocsPerRun(200, func() { w.clientSpan(ctx) })
	if w.call.Meta == nil || len(w.call.Meta.Traceparent) != 55 {
		t.Fatalf("client _meta %+v, want a traceparent", w.call.Meta)
	}
	t.Logf("allocations per traced tools/call: server %v, client %v", server, client)
	const wantServer, wantClient = 8, 6
	if server > wantServer || client > wantClient {
		t.Errorf("allocations per traced tools/call: server %v (want at most %d), client %v (want at most %d)",
			server, wantServer, client, wantClient)
	}
}
