package provider_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/toolwire/toolwire/model"
	"github.com/toolwire/toolwire/model/provider"
	"github.com/toolwire/toolwire/telemetry"
)

// TestChatTelemetry opens a model with telemetry against a server that
// fails once (503) and then answers: one chat span with the provider,
// model, server, answer id, finish reason and usage, an event for the
// retry, no key anywhere; and the token and duration metrics.
func TestChatTelemetry(t *testing.T) {
	const key = "sk-test-KEY-123"
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			w.Header().Set("Retry-After", "0")
			http.Error(w, `{"error":{"message":"busy","type":"overloaded"}}`, http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("x-request-id", "req_7")
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"id":"chatcmpl-1","model":"gpt-t","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":11,"completion_tokens":3}}`))
	}))
	defer srv.Close()
	rec := tracetest.NewSpanRecorder()
	reader := sdkmetric.NewManualReader()
	cfg := &telemetry.Config{
		TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)),
		MeterProvider:  sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)),
	}
	m, err := provider.Open("openai:gpt-t", provider.Options{APIKey: key, BaseURL: srv.URL + "/v1", Telemetry: cfg,
		Retry: model.RetryPolicy{BaseDelay: time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Generate(context.Background(), &model.Request{Messages: []model.Message{{Role: model.RoleUser, Text: "hello"}}}, nil); err != nil {
		t.Fatal(err)
	}
	spans := rec.Ended()
	if len(spans) != 1 || spans[0].Name() != "chat gpt-t" {
		t.Fatalf("spans %v, want one chat gpt-t", spans)
	}
	u, _ := url.Parse(srv.URL)
	got := map[string]string{}
	for _, kv := range spans[0].Attributes() {
		got[string(kv.Key)] = kv.Value.String()
	}
	want := map[string]string{
		"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-t",
		"server.address": "127.0.0.1", "server.port": u.Port(), "gen_ai.response.id": "req_7",
		"gen_ai.response.finish_reasons": `["stop"]`, "gen_ai.usage.input_tokens": "11", "gen_ai.usage.output_tokens": "3",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if ev := spans[0].Events(); len(ev) != 1 || ev[0].Name != "retry" {
		t.Errorf("events %v, want one retry", ev)
	} else if a := attribute.NewSet(ev[0].Attributes...); a.HasValue("error.type") {
		if v, _ := a.Value("error.type"); v.String() != "503" {
			t.Errorf("the retry's error.type is %s, want 503", v.String())
		}
	}
	for k, v := range got {
		if strings.Contains(v, key) {
			t.Errorf("attribute %s holds the API key", k)
		}
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	sums := map[string]int64{}
	var durations uint64
	for _, sm := range rm.ScopeMetrics {
		for _, mt := range sm.Metrics {
			switch d := mt.Data.(type) {
			case metricdata.Histogram[int64]:
				for _, p := range d.DataPoints {
					tt, _ := p.Attributes.Value("gen_ai.token.type")
					sums[mt.Name+"/"+tt.AsString()] += p.Sum
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					if op, _ := p.Attributes.Value("gen_ai.operation.name"); op.AsString() == "chat" && mt.Name == "gen_ai.client.operation.duration" {
						durations += p.Count
					}
				}
			}
		}
	}
	if sums["gen_ai.client.token.usage/input"] != 11 || sums["gen_ai.client.token.usage/output"] != 3 {
		t.Errorf("token usage %v, want input 11, output 3", sums)
	}
	if durations != 1 {
		t.Errorf("%d durations recorded, want 1", durations)
	}
}
