package tool_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/toolwire/toolwire/telemetry"
	"github.com/toolwire/toolwire/tool"
)

// discard is a span exporter that drops what it gets.
type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }

// processCPU is the CPU time this process has used (every goroutine's:
// the batch processor's export and, for otlp, the receiver's too).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// telemetrySlice is how many calls BenchmarkRegistryTelemetry makes on
// one side before it turns to the next.
const telemetrySlice = 256

// telemetrySide is one registry of BenchmarkRegistryTelemetry and the CPU
// its calls took.
type telemetrySide struct {
	name  string
	reg   tool.Registry
	tp    *sdktrace.TracerProvider // nil: no telemetry
	cpu   time.Duration
	calls int
}

// measure makes a slice of calls and flushes the spans they made (so that
// their export counts here).
func (s *telemetrySide) measure(b *testing.B, ctx context.Context, raw json.RawMessage) {
	start := processCPU()
	for range telemetrySlice {
		if _, err := s.reg.Call(ctx, "bench", raw); err != nil {
			b.Fatal(err)
		}
	}
	if s.tp != nil {
		_ = s.tp.ForceFlush(ctx)
	}
	s.cpu += processCPU() - start
	s.calls += telemetrySlice
}

// BenchmarkRegistryTelemetry is BenchmarkRegistryCall on three registries
// at once: without telemetry (off), with execute_tool spans to a batch
// span processor whose exporter drops them (batch), and to one exporting
// OTLP/HTTP to a receiver in this process (otlp). Each b.N is a slice of
// telemetrySlice calls on each side, in turn (A B C, C B A, ...), each
// ended by a flush of its spans, so that a machine getting faster or
// slower weighs on all alike. cpu-ns is the process's CPU per call,
// exports (and for otlp the receiver) included; span-cpu-ns is a span's
// cost: the difference to off.
//
//	go test -run '^$' -bench RegistryTelemetry -benchtime 200x -count 5 ./tool
func BenchmarkRegistryTelemetry(b *testing.B) {
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
	}))
	defer receiver.Close()
	otlp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpointURL(receiver.URL+"/v1/traces"))
	if err != nil {
		b.Fatal(err)
	}
	sides := []*telemetrySide{
		{name: "off"},
		{name: "batch", tp: sdktrace.NewTracerProvider(sdktrace.WithBatcher(discard{}))},
		{name: "otlp", tp: sdktrace.NewTracerProvider(sdktrace.WithBatcher(otlp))},
	}
	ctx := context.Background()
	raw := json.RawMessage(benchCall)
	for _, s := range sides {
		if err := s.reg.Add(benchTool(b)); err != nil {
			b.Fatal(err)
		}
		if s.tp != nil {
			defer func() { _ = s.tp.Shutdown(ctx) }()
			s.reg.SetTelemetry(telemetry.Config{TracerProvider: s.tp})
		}
		s.measure(b, ctx, raw) // warm up
		s.cpu, s.calls = 0, 0
	}
	for i := 0; b.Loop(); i++ {
		for k := range sides {
			if i%2 == 1 {
				k = len(sides) - 1 - k
			}
			sides[k].measure(b, ctx, raw)
		}
	}
	off := float64(sides[0].cpu) / float64(sides[0].calls)
	for _, s := range sides {
		per := float64(s.cpu) / float64(s.calls)
		b.ReportMetric(per, s.name+"-cpu-ns/call")
		if s.tp != nil {
			b.ReportMetric(per-off, s.name+"-span-cpu-ns")
		}
	}
}
