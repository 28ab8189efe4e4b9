package agent_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolwire/toolwire/agent"
	"github.com/toolwire/toolwire/internal/ctxkey"
	"github.com/toolwire/toolwire/model"
	"github.com/toolwire/toolwire/telemetry"
	"github.com/toolwire/toolwire/tool"
)

// The values the telemetry tests look for in exported spans.
const (
	argValue      = "Zanzibar-42"   // an argument the model writes
	injectedValue = "inj-SECRET-77" // a value the host injects
)

// tracedRun runs an agent whose model, registry and loop all send spans to
// a recorder: the model calls greet (with an injected token) and fail,
// then answers.
func tracedRun(t *testing.T, capture bool) []sdktrace.ReadOnlySpan {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	cfg := telemetry.Config{TracerProvider: tp, CaptureContent: capture}
	var seen trace.Span // the span the greet tool's context carries
	greet := tool.NewFunc(tool.Info{
		Name: "greet", Description: "Greets someone.",
		InputSchema:    json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`),
		Injected:       []string{"token"},
		InjectedValues: map[string]any{"token": injectedValue},
	}, func(ctx context.Context, args json.RawMessage) (*tool.Result, error) {
		seen, _ = ctx.Value(ctxkey.ToolSpan{}).(trace.Span)
		if !strings.Contains(string(args), injectedValue) {
			t.Errorf("greet got %s, without the injected token", args)
		}
		return tool.Text("hello " + argValue), nil
	})
	fail := tool.NewFunc(tool.Info{Name: "fail", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, json.RawMessage) (*tool.Result, error) { return tool.Errorf("it failed"), nil })
	var reg tool.Registry
	if err := reg.Add(greet, fail); err != nil {
		t.Fatal(err)
	}
	reg.SetTelemetry(cfg)
	s := &script{answers: []model.Message{calls("greet", `{"name":"`+argValue+`"}`, "fail", `{}`), answer("done")}}
	a := &agent.Agent{
		Name:      "tester",
		Model:     model.Instrument(s, model.Info{Provider: "openai", Name: "gpt-x", URL: "http://127.0.0.1:9/v1"}, cfg),
		Tools:     &reg,
		Telemetry: cfg,
	}
	if _, err := a.Run(context.Background(), []model.Message{{Role: model.RoleUser, Text: "greet " + argValue}}); err != nil {
		t.Fatal(err)
	}
	spans := rec.Ended()
	for _, sp := range spans {
		if sp.Name() == "execute_tool greet" && (seen == nil || seen.SpanContext().SpanID() != sp.SpanContext().SpanID()) {
			t.Errorf("the tool's context carries %v under ctxkey.ToolSpan, want its execute_tool span", seen)
		}
	}
	return spans
}

func attrs(sp sdktrace.ReadOnlySpan) map[string]attribute.Value {
	m := map[string]attribute.Value{}
	for _, kv := range sp.Attributes() {
		m[string(kv.Key)] = kv.Value
	}
	return m
}

// TestSpans checks the tree of a run's spans, their names, kinds and the
// attributes the GenAI conventions require.
func TestSpans(t *testing.T) {
	spans := tracedRun(t, false)
	byName := map[string]sdktrace.ReadOnlySpan{}
	count := map[string]int{}
	for _, sp := range spans {
		byName[sp.Name()] = sp
		count[sp.Name()]++
	}
	root, ok := byName["invoke_agent tester"]
	if !ok {
		t.Fatalf("no invoke_agent span among %v", count)
	}
	if want := map[string]int{"invoke_agent tester": 1, "chat gpt-x": 2, "execute_tool greet": 1, "execute_tool fail": 1}; len(count) != len(want) {
		t.Errorf("spans %v, want %v", count, want)
	} else {
		for n, c := range want {
			if count[n] != c {
				t.Errorf("%d spans %q, want %d", count[n], n, c)
			}
		}
	}
	for _, sp := range spans {
		if sp.SpanContext().TraceID() != root.SpanContext().TraceID() {
			t.Errorf("span %s is in trace %s, want %s", sp.Name(), sp.SpanContext().TraceID(), root.SpanContext().TraceID())
		}
		if sp != root && sp.Parent().SpanID() != root.SpanContext().SpanID() {
			t.Errorf("span %s is not a child of invoke_agent", sp.Name())
		}
	}
	tests := []struct {
		span string
		kind trace.SpanKind
		want map[string]string
	}{
		{"invoke_agent tester", trace.SpanKindInternal, map[string]string{
			"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "tester", "gen_ai.provider.name": "openai",
			"gen_ai.request.model": "gpt-x", "gen_ai.usage.input_tokens": "20", "gen_ai.usage.output_tokens": "4"}},
		{"chat gpt-x", trace.SpanKindClient, map[string]string{
			"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-x",
			"server.address": "127.0.0.1", "server.port": "9", "gen_ai.usage.input_tokens": "10", "gen_ai.usage.output_tokens": "2",
			"gen_ai.response.finish_reasons": `["stop"]`, "gen_ai.request.stream": "true"}},
		{"execute_tool greet", trace.SpanKindInternal, map[string]string{
			"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "greet", "gen_ai.tool.call.id": "c1",
			"gen_ai.tool.type": "function", "gen_ai.tool.description": "Greets someone."}},
		{"execute_tool fail", trace.SpanKindInternal, map[string]string{
			"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "fail", "gen_ai.tool.call.id": "c2", "error.type": "tool_error"}},
	}
	for _, tt := range tests {
		sp := byName[tt.span]
		if sp == nil {
			continue // reported above
		}
		if sp.SpanKind() != tt.kind {
			t.Errorf("%s: kind %v, want %v", tt.span, sp.SpanKind(), tt.kind)
		}
		got := attrs(sp)
		for k, v := range tt.want {
			if g, ok := got[k]; !ok || g.String() != v {
				t.Errorf("%s: %s = %q, want %q", tt.span, k, g.String(), v)
			}
		}
		if _, ok := got["error.type"]; ok && tt.want["error.type"] == "" {
			t.Errorf("%s: error.type %s on a success", tt.span, got["error.type"].String())
		}
	}
}

// TestContentOptIn checks that spans carry the arguments, results and
// messages only when content capture is on, and never an injected value.
func TestContentOptIn(t *testing.T) {
	for _, capture := range []bool{false, true} {
		var all strings.Builder
		found := map[string]bool{}
		for _, sp := range tracedRun(t, capture) {
			for k, v := range attrs(sp) {
				all.WriteString(v.String())
				found[k] = true
			}
			for _, e := range sp.Events() {
				for _, kv := range e.Attributes {
					all.WriteString(kv.Value.String())
				}
			}
			all.WriteString(sp.Status().Description)
		}
		if got := strings.Contains(all.String(), argValue); got != capture {
			t.Errorf("capture %v: the argument value in the spans: %v", capture, got)
		}
		if strings.Contains(all.String(), injectedValue) {
			t.Errorf("capture %v: the injected value is in the spans", capture)
		}
		for _, k := range []string{"gen_ai.tool.call.arguments", "gen_ai.tool.call.result", "gen_ai.input.messages", "gen_ai.output.messages"} {
			if found[k] != capture {
				t.Errorf("capture %v: attribute %s present: %v", capture, k, found[k])
			}
		}
	}
}
