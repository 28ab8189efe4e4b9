package testjaeger_test

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/toolwire/toolwire/internal/testjaeger"
)

// TestRoundTrip exports a parent and a child span over OTLP/HTTP and
// reads them back from the query API, with their attributes and link.
func TestRoundTrip(t *testing.T) {
	j := testjaeger.Start(t)
	ctx := context.Background()
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(j.OTLPHTTP+"/v1/traces"))
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp),
		sdktrace.WithResource(resource.NewSchemaless(semconv.ServiceName("roundtrip"))))
	tr := tp.Tracer("test")
	pctx, parent := tr.Start(ctx, "parent")
	_, child := tr.Start(pctx, "child")
	child.SetAttributes(semconv.GenAIToolName("greet"))
	child.End()
	parent.End()
	if err := tp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	traces := j.WaitTraces(t, "roundtrip", 10*time.Second, func(ts []testjaeger.Trace) bool { return len(ts) == 1 && len(ts[0].Spans) == 2 })
	spans := map[string]testjaeger.Span{}
	for _, sp := range traces[0].Spans {
		spans[sp.OperationName] = sp
	}
	if spans["child"].Parent() != spans["parent"].SpanID || spans["parent"].Parent() != "" {
		t.Errorf("the tree is not parent → child:\n%s", testjaeger.Describe(traces))
	}
	if v, _ := spans["child"].Tag("gen_ai.tool.name"); v != "greet" {
		t.Errorf("child's gen_ai.tool.name = %q, want greet", v)
	}
	if got := traces[0].TraceID; got != parent.SpanContext().TraceID().String() {
		t.Errorf("trace id %s, want %s", got, parent.SpanContext().TraceID())
	}
}
