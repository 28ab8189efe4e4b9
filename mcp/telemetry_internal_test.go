package mcp

import (
	"context"
	"strconv"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/trace"
)

// TestRecordOptionsBounded: the record options kept per metric attribute
// set are bounded, whatever sets come (a server choosing the error codes
// a client's durations are recorded with).
func TestRecordOptionsBounded(t *testing.T) {
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	defer mp.Shutdown(context.Background())
	ins := Telemetry{MeterProvider: mp}.instruments("client", trace.SpanKindClient)
	for i := range 2 * maxCachedSets {
		ins.record(context.Background(), ins.operation, 0.001, []attribute.KeyValue{keyErrorType.String(strconv.Itoa(-i))})
	}
	n := 0
	ins.recordOpts.Range(func(_, _ any) bool { n++; return true })
	if n == 0 || n > maxCachedSets {
		t.Errorf("%d record options kept after %d attribute sets, want 1 to %d", n, 2*maxCachedSets, maxCachedSets)
	}
}

// TestMetaCacheIgnoresTraceContext: the _meta of requests that differ
// only in their trace context is decoded once, and what is kept carries
// no request's trace context.
func TestMetaCacheIgnoresTraceContext(t *testing.T) {
	var c metaCache
	var first *RequestMeta
	for i := range 3 {
		raw := []byte(`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","traceparent":"00-4bf92f3577b34da6a3ce929d0e0e473` +
			strconv.Itoa(i) + `-00f067aa0ba902b7-01","baggage":"k=` + strconv.Itoa(i) + `"}`)
		m, err := c.get(raw)
		if err != nil {
			t.Fatal(err)
		}
		if m.ProtocolVersion != Version20260728 || m.Traceparent != "" || m.Baggage != "" {
			t.Errorf("request %d: cached _meta %+v", i, m)
		}
		if first == nil {
			first = m
		} else if m != first {
			t.Errorf("request %d: its _meta was decoded again", i)
		}
	}
}
