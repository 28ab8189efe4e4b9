package mcp

import (
	"context"
	"encoding/json"
	"runtime"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/tool"
)

// BenchmarkTelemetrySpan: this package's work for one traced tools/call
// on each side, without the call path around it, with the SDK's tracer
// sampling every span into a batch processor that exports nowhere and
// the W3C propagators: the server extracts the trace context from _meta
// as the client writes it, starts and ends its span; the client starts
// its span, injects the trace context and ends the span. side=sdk is the
// SDK's own span with the same attributes: a side's ns/op less sdk's is
// this package's share of a span, sdk's the floor. thread-cpu-ns/op is
// the CPU time of the benchmark's own thread (locked to it), which a
// machine busy with other work inflates less than the time per op; it
// leaves out the batch processor's goroutine.
func BenchmarkTelemetrySpan(b *testing.B) {
	ctx := context.Background()
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))
	defer func() { _ = tp.Shutdown(ctx) }()
	tel := Telemetry{TracerProvider: tp,
		Propagator: propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})}
	b.Run("side=server", func(b *testing.B) {
		srv := &Server{Telemetry: tel}
		add := tool.NewFunc(tool.Info{Name: "add", InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, json.RawMessage) (*tool.Result, error) { return tool.Text("5"), nil })
		if err := srv.AddTools(add); err != nil {
			b.Fatal(err)
		}
		c := newConn(srv, lineSender{})
		params := json.RawMessage(`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
			`"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"},` +
			`"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},"name":"add","arguments":{"a":2,"b":3}}`)
		resp := &jsonrpc.Message{ID: jsonrpc.Int64ID(7), Result: json.RawMessage(`{}`)}
		defer threadCPU(b)()
		for b.Loop() {
			req := request{conn: c, id: resp.ID, method: MethodToolsCall, params: params, out: lineSender{},
				subject: "add", version: Version20260728, modern: true}
			_ = srv.tel.startServerSpan(ctx, &req, time.Now())
			req.endServerSpan(resp)
		}
	})
	b.Run("side=client", func(b *testing.B) {
		t := &InMemoryTransport{}
		s := &ClientSession{tel: tel.instruments("client", trace.SpanKindClient), netAttrs: clientNetAttrs(t), version: Version20260728}
		p := &CallToolParams{Name: "add"}
		res := &CallToolResult{}
		defer threadCPU(b)()
		for b.Loop() {
			p.Meta = nil
			cctx, op := s.startCall(ctx, MethodToolsCall, &p.Params)
			op.id = jsonrpc.Int64ID(7)
			s.endCall(cctx, &op, MethodToolsCall, p, res, nil)
		}
	})
	b.Run("side=sdk", func(b *testing.B) {
		tracer := tp.Tracer("bench")
		attrs := []attribute.KeyValue{
			keyMethod.String(MethodToolsCall), keyToolName.String("add"), keyOperation.String(operationExecuteTool),
			keyProtocolVersion.String(Version20260728), keyTransport.String("pipe"), keyRequestID.String("7"),
		}
		opts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient)}
		defer threadCPU(b)()
		for b.Loop() {
			_, span := tracer.Start(ctx, MethodToolsCall, opts...)
			span.SetName("tools/call add")
			span.SetAttributes(attrs...)
			span.End()
		}
	})
}

// threadCPU locks the benchmark to its thread and returns the function
// that reports the thread's CPU time per op from then on.
func threadCPU(b *testing.B) func() {
	b.ReportAllocs()
	runtime.LockOSThread()
	start := threadTime()
	return func() {
		b.ReportMetric(float64(threadTime()-start)/float64(b.N), "thread-cpu-ns/op")
		runtime.UnlockOSThread()
	}
}

// threadTime is the CPU time the calling thread has used, in nanoseconds.
func threadTime() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_THREAD, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}
