package mcp_test

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolwire/toolwire/mcp"
)

// BenchmarkTelemetry: what spans and metrics cost on the call path of
// BenchmarkCallPath (2026-07-28), with no SDK (off), with the SDK's
// tracer sampling every span into a batch processor that exports nowhere
// (traces), and with its meter aggregating the histograms too. Each call
// makes two spans, the client's and the server's, and records two
// durations; cpu-µs/op is the CPU time of the whole process (the batch
// processor's goroutine included) per call: (traces - off) / 2 is the
// CPU cost of a span.
func BenchmarkTelemetry(b *testing.B) {
	for _, on := range []string{"off", "traces", "traces+metrics"} {
		b.Run("telemetry="+on, func(b *testing.B) {
			var tel mcp.Telemetry
			if on != "off" {
				tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))
				defer tp.Shutdown(context.Background())
				tel = mcp.Telemetry{TracerProvider: tp, Propagator: w3c}
			}
			if on == "traces+metrics" {
				mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
				defer mp.Shutdown(context.Background())
				tel.MeterProvider = mp
			}
			srv := &mcp.Server{Info: mcp.Implementation{Name: "bench", Version: "1"}, Telemetry: tel}
			if err := srv.AddTools(addTool()); err != nil {
				b.Fatal(err)
			}
			benchCalls(b, srv, &mcp.Client{Info: mcp.Implementation{Name: "bench", Version: "1"}, Telemetry: tel})
		})
	}
}

// BenchmarkSDKSpan: the SDK's own cost of a span like those of
// BenchmarkTelemetry (started, named, six attributes, ended into the
// same batch processor), without this package: the floor under its
// cost per span.
func BenchmarkSDKSpan(b *testing.B) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))
	defer tp.Shutdown(context.Background())
	tracer := tp.Tracer("bench")
	attrs := []attribute.KeyValue{
		attribute.String("mcp.method.name", "tools/call"), attribute.String("gen_ai.tool.name", "add"),
		attribute.String("gen_ai.operation.name", "execute_tool"), attribute.String("mcp.protocol.version", mcp.LatestVersion),
		attribute.String("network.transport", "pipe"), attribute.String("jsonrpc.request.id", "12"),
	}
	ctx := context.Background()
	b.ReportAllocs()
	before := cpuTime()
	for b.Loop() {
		_, span := tracer.Start(ctx, "tools/call", trace.WithSpanKind(trace.SpanKindClient))
		span.SetName("tools/call add")
		span.SetAttributes(attrs...)
		span.End()
	}
	b.ReportMetric(float64((cpuTime()-before).Nanoseconds())/1e3/float64(b.N), "cpu-µs/op")
}
