package data

import (
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/toolwire/toolwire/telemetry"
)

// TestSpanRowsAndBytes: a call that makes a table puts its rows and size
// on the call's execute_tool span.
func TestSpanRowsAndBytes(t *testing.T) {
	e := newEnv(t, Config{})
	rec := tracetest.NewSpanRecorder()
	e.reg.SetTelemetry(telemetry.Config{TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))})
	h, _ := e.load(e.write("m.csv", "a,b\n1,x\n2,y\n3,z\n"))
	e.must("query", map[string]any{"sql": "SELECT * FROM t WHERE a > 1", "tables": map[string]string{"t": h}})
	spans := rec.Ended()
	if len(spans) != 2 || spans[1].Name() != "execute_tool query" {
		t.Fatalf("spans %v, want execute_tool load_csv and query", spans)
	}
	got := map[string]int64{}
	for _, kv := range spans[1].Attributes() {
		got[string(kv.Key)] = kv.Value.AsInt64()
	}
	if got["db.response.returned_rows"] != 2 || got["toolwire.data.table_bytes"] <= 0 {
		t.Errorf("attributes %v, want 2 rows and a size", got)
	}
}
