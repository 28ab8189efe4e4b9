package mcp

import (
	"context"
	"runtime"
	"syscall"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// BenchmarkTelemetrySpan: this package's work for one traced tools/call
// on each side (spanWork). side=sdk is the SDK's own span with the same
// attributes: a side's ns/op less sdk's is this package's share of a
// span, sdk's the floor. thread-cpu-ns/op is the CPU time of the
// benchmark's own thread (locked to it), which a machine busy with other
// work inflates less than the time per op; it leaves out the batch
// processor's goroutine.
func BenchmarkTelemetrySpan(b *testing.B) {
	ctx := context.Background()
	w := newSpanWork(b)
	b.Run("side=server", func(b *testing.B) {
		var req request
		defer threadCPU(b)()
		for b.Loop() {
			w.serverSpan(ctx, &req)
		}
	})
	b.Run("side=client", func(b *testing.B) {
		defer threadCPU(b)()
		for b.Loop() {
			w.clientSpan(ctx)
		}
	})
	b.Run("side=sdk", func(b *testing.B) {
		tracer := w.tp.Tracer("bench")
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
