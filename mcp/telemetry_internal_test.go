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
