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

// TestWithoutTraceContextKeys: the _meta cache's key is the same for two
// _meta objects that differ only in their trace context, wherever it
// stands, and differs when anything else does (a nested traceparent
// included).
func TestWithoutTraceContextKeys(t *testing.T) {
	const tp1, tp2 = `"traceparent":"00-aa-01"`, `"traceparent":"00-bb-01"`
	tests := []struct {
		name string
		a, b string
		same bool
	}{
		{"first", `{` + tp1 + `,"x":1,"y":2}`, `{` + tp2 + `,"x":1,"y":2}`, true},
		{"middle", `{"x":1,` + tp1 + `,"y":2}`, `{"x":1,` + tp2 + `,"y":2}`, true},
		{"last", `{"x":1,"y":2,` + tp1 + `}`, `{"x":1,"y":2,` + tp2 + `}`, true},
		{"all three", `{"tracestate":"a=1",` + tp1 + `,"x":1,"baggage":"k=1"}`, `{"tracestate":"a=2",` + tp2 + `,"x":1,"baggage":"k=2"}`, true},
		{"with and without", `{"x":1,` + tp1 + `}`, `{"x":1}`, true},
		{"other member differs", `{"x":1,` + tp1 + `}`, `{"x":2,` + tp1 + `}`, false},
		{"first, other differs", `{` + tp1 + `,"x":1}`, `{` + tp1 + `,"x":2}`, false},
		{"nested", `{"x":{` + tp1 + `}}`, `{"x":{` + tp2 + `}}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := string(withoutTraceContext(nil, []byte(tt.a)))
			b := string(withoutTraceContext(nil, []byte(tt.b)))
			if (a == b) != tt.same {
				t.Errorf("keys %s and %s: same = %v, want %v", a, b, a == b, tt.same)
			}
		})
	}
}

// TestMetaCarrierMalformedMeta: a _meta that is not valid JSON gives the
// propagator no trace context, even the members read before the error,
// whether _meta comes first in params or not.
func TestMetaCarrierMalformedMeta(t *testing.T) {
	const tp = `"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"`
	for _, params := range []string{
		`{"_meta":{` + tp + `,"x":}}`,
		`{"name":"add","_meta":{` + tp + `,"x":}}`,
	} {
		c := (*metaCarrier)(&request{params: []byte(params)})
		if got := c.Get("traceparent"); got != "" {
			t.Errorf("params %s: traceparent %q, want none", params, got)
		}
	}
	c := (*metaCarrier)(&request{params: []byte(`{"_meta":{` + tp + `,"x":1},"name":"add"}`)})
	if got := c.Get("traceparent"); got == "" {
		t.Error("a well-formed _meta: no traceparent")
	}
}

// TestSpanNamesBounded: the span names kept per (method, target) are
// bounded, whatever targets come (a caller choosing the tool names a
// client calls).
func TestSpanNamesBounded(t *testing.T) {
	ins := Telemetry{}.instruments("client", trace.SpanKindClient)
	for i := range 2 * maxCachedSets {
		target := strconv.Itoa(i)
		if got := ins.spanName(MethodToolsCall, target); got != MethodToolsCall+" "+target {
			t.Fatalf("spanName(%q, %q) = %q", MethodToolsCall, target, got)
		}
	}
	if n := len(ins.names); n == 0 || n > maxCachedSets {
		t.Errorf("%d span names kept after %d targets, want 1 to %d", n, 2*maxCachedSets, maxCachedSets)
	}
	if got := ins.spanName(MethodToolsList, ""); got != MethodToolsList {
		t.Errorf("spanName without a target = %q, want %q", got, MethodToolsList)
	}
}
