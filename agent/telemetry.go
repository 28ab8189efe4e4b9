package agent

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolwire/toolwire/model"
	"github.com/toolwire/toolwire/telemetry"
)

// startRun starts the run's invoke_agent span (kind INTERNAL, the agent
// runs in this process): the agent's name, and the model's provider and
// name when the model says them (model.Describer, as the models of
// model.Instrument do).
func (a *Agent) startRun(ctx context.Context) (context.Context, trace.Span) {
	name := "invoke_agent"
	if a.Name != "" {
		name += " " + a.Name
	}
	attrs := []attribute.KeyValue{semconv.GenAIOperationNameInvokeAgent}
	if a.Name != "" {
		attrs = append(attrs, semconv.GenAIAgentName(a.Name))
	}
	if d, ok := a.Model.(model.Describer); ok {
		info := d.Describe()
		attrs = append(attrs, semconv.GenAIProviderNameKey.String(info.Provider))
		if info.Name != "" {
			attrs = append(attrs, semconv.GenAIRequestModel(info.Name))
		}
	}
	return a.Telemetry.Tracer().Start(ctx, name, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
}

// endRun ends the invoke_agent span with the run's usage and its error.
func endRun(span trace.Span, res *Result, err error) {
	if !span.IsRecording() {
		return
	}
	span.SetAttributes(
		semconv.GenAIUsageInputTokens(res.Usage.InputTokens),
		semconv.GenAIUsageOutputTokens(res.Usage.OutputTokens),
	)
	if err != nil {
		span.SetAttributes(semconv.ErrorTypeKey.String(telemetry.ErrorType(err)))
		span.SetStatus(codes.Error, "the run failed")
	}
	span.End()
}
