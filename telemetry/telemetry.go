// Package telemetry configures the OpenTelemetry spans and metrics that
// toolwire's core packages emit by the GenAI semantic conventions: the
// agent's invoke_agent span (package agent), a chat span and the
// gen_ai.client.* metrics per model request (model.Instrument), an
// execute_tool span per call through a tool.Registry.
//
// It depends only on the OpenTelemetry API: a program chooses the SDK and
// exporters, and with none installed every span is a no-op. toolwire's
// CLI installs the SDK from the standard OTEL_* variables.
package telemetry

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// ScopeName is the instrumentation scope of toolwire's spans and metrics.
const ScopeName = "github.com/toolwire/toolwire"

// Config says where spans and metrics go and whether they carry content.
// The zero value uses otel's global providers and records no content.
type Config struct {
	// TracerProvider and MeterProvider make the tracer and meter; nil
	// means otel.GetTracerProvider() and otel.GetMeterProvider().
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider
	// CaptureContent adds the opt-in content attributes: messages
	// (gen_ai.input.messages, gen_ai.output.messages,
	// gen_ai.system_instructions), tool arguments and results
	// (gen_ai.tool.call.arguments, gen_ai.tool.call.result). They may hold
	// anything the user or a tool wrote: leave it off unless the trace
	// backend may see that. Values a host injects into a tool's arguments
	// (tool parameters it hides from the model), keys, tokens and
	// Authorization headers are never recorded, either way. toolwire's
	// CLI sets it from OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT.
	CaptureContent bool
}

// Tracer returns the tracer of toolwire's instrumentation scope.
func (c Config) Tracer() trace.Tracer {
	tp := c.TracerProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	return tp.Tracer(ScopeName)
}

// Meter returns the meter of toolwire's instrumentation scope.
func (c Config) Meter() metric.Meter {
	mp := c.MeterProvider
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	return mp.Meter(ScopeName)
}

// ErrorType is the error.type of err when none more specific is known:
// "timeout" for a deadline, "canceled" for a cancellation, else "_OTHER"
// (the conventions' fallback), which keeps the attribute's cardinality low.
func ErrorType(err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	}
	return "_OTHER"
}
