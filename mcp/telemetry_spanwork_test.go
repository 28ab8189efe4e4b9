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

// spanWork is this package's work for one traced tools/call of add on
// each side, without the call path around it, with the SDK's tracer
// sampling every span into a batch processor that exports nowhere and
// the W3C propagators: the server extracts the trace context from _meta
// as the client writes it, starts and ends its span; the client starts
// its span, injects the trace context and ends the span.
type spanWork struct {
	tp     *sdktrace.TracerProvider
	srv    *Server
	conn   *conn
	params json.RawMessage
	resp   *jsonrpc.Message
	client *ClientSession
	call   *CallToolParams
	res    *CallToolResult
}

// newSpanWork sets up the two sides; the tracer provider is shut down
// when tb ends.
func newSpanWork(tb testing.TB) *spanWork {
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))
	tb.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	tel := Telemetry{TracerProvider: tp,
		Propagator: propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})}
	srv := &Server{Telemetry: tel}
	add := tool.NewFunc(tool.Info{Name: "add", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, json.RawMessage) (*tool.Result, error) { return tool.Text("5"), nil })
	if err := srv.AddTools(add); err != nil {
		tb.Fatal(err)
	}
	return &spanWork{
		tp:   tp,
		srv:  srv,
		conn: newConn(srv, lineSender{}),
		params: json.RawMessage(`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
			`"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"},` +
			`"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},"name":"add","arguments":{"a":2,"b":3}}`),
		resp: &jsonrpc.Message{ID: jsonrpc.Int64ID(7), Result: json.RawMessage(`{}`)},
		client: &ClientSession{tel: tel.instruments("client", trace.SpanKindClient),
			netAttrs: clientNetAttrs(&InMemoryTransport{}), version: Version20260728},
		call: &CallToolParams{Name: "add"},
		res:  &CallToolResult{},
	}
}

// serverSpan is the server's span of the call, in req.
func (w *spanWork) serverSpan(ctx context.Context, req *request) {
	*req = request{conn: w.conn, id: w.resp.ID, method: MethodToolsCall, params: w.params, out: lineSender{},
		subject: "add", version: Version20260728, modern: true}
	_ = w.srv.tel.startServerSpan(ctx, req, time.Now())
	req.endServerSpan(w.resp)
}

// clientSpan is the client's span of the call; w.call.Meta holds the
// trace context it wrote.
func (w *spanWork) clientSpan(ctx context.Context) {
	w.call.Meta = nil
	cctx, op := w.client.startCall(ctx, MethodToolsCall, &w.call.Params)
	op.id = jsonrpc.Int64ID(7)
	w.client.endCall(cctx, &op, MethodToolsCall, w.call, w.res, nil)
}
