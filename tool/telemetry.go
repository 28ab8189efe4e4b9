package tool

import (
	"context"
	"encoding/json"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolwire/toolwire/internal/ctxkey"
	"github.com/toolwire/toolwire/telemetry"
)

// SetTelemetry turns on the registry's execute_tool spans: where they go
// and whether they carry the calls' arguments and results (see
// telemetry.Config; its zero value uses otel's global provider). A
// registry never given one makes no spans and costs its calls nothing.
//
// Each Call is a span "execute_tool {name}" (kind INTERNAL) by the GenAI
// conventions: gen_ai.tool.name, gen_ai.tool.description, the call id the
// caller gave (WithCallID), gen_ai.tool.type "extension" for an MCP
// server's tool (one of a source, or one with a Server method as
// host.RemoteTool has) and "function" for others, and error.type: "tool_error" for an error result, "unknown_tool",
// "invalid_arguments", "panic", "timeout", "canceled" or "_OTHER" for an
// error. While the tool runs, its context carries the span under
// ctxkey.ToolSpan, so that an MCP client adds its attributes to it rather
// than starting a span of its own. With content captured, the span also
// has the arguments as the model wrote them (never injected parameters)
// and a successful result.
func (r *Registry) SetTelemetry(c telemetry.Config) {
	r.tel.Store(&tracing{tracer: c.Tracer(), capture: c.CaptureContent})
}

// tracing is what a registry's spans need of its telemetry.Config.
type tracing struct {
	tracer  trace.Tracer
	capture bool
}

// callIDKey keys the id of the model's tool call a registry call makes.
type callIDKey struct{}

// WithCallID returns a context carrying the id the model gave a tool
// call, for the registry's execute_tool span (gen_ai.tool.call.id).
func WithCallID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, callIDKey{}, id)
}

// spanInfo is what a tool's execute_tool spans start with, made when the
// tool is registered: attrs[1] is gen_ai.tool.name; opts start a span
// with them (made once: the options made per call would allocate).
type spanInfo struct {
	name  string
	attrs []attribute.KeyValue
	opts  []trace.SpanStartOption
}

// spanOptions are the options of an execute_tool span with attributes attrs.
func spanOptions(attrs []attribute.KeyValue) []trace.SpanStartOption {
	return []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...)}
}

func newSpanInfo(t Tool, info Info, source string) spanInfo {
	kind := "function"
	if _, remote := t.(interface{ Server() string }); remote || source != "" {
		kind = "extension" // an MCP server's (host.RemoteTool)
	}
	attrs := []attribute.KeyValue{
		semconv.GenAIOperationNameExecuteTool,
		semconv.GenAIToolName(info.Name),
		semconv.GenAIToolTypeKey.String(kind),
	}
	if info.Description != "" {
		attrs = append(attrs, semconv.GenAIToolDescription(info.Description))
	}
	return spanInfo{name: "execute_tool " + info.Name, attrs: attrs, opts: spanOptions(attrs)}
}

// traced runs call inside an execute_tool span of t, the registry's
// telemetry, when the span records. What it keeps across the call is
// small: the span's making and ending are functions of their own, whose
// frames are gone while the tool runs, so that a traced call's stack
// stays near an untraced one's (TestCallStackDepth).
func (r *Registry) traced(ctx context.Context, t *tracing, name string, call func(context.Context) (*Result, error)) (*Result, error) {
	sctx, span := r.startSpan(ctx, t, name)
	if !span.IsRecording() {
		return call(ctx)
	}
	defer span.End()
	res, err := call(context.WithValue(sctx, ctxkey.ToolSpan{}, span))
	t.outcome(span, res, err)
	return res, err
}

// startSpan starts the execute_tool span of a call of the tool name.
func (r *Registry) startSpan(ctx context.Context, t *tracing, name string) (context.Context, trace.Span) {
	r.mu.RLock()
	e := r.entries[name]
	r.mu.RUnlock()
	var si spanInfo
	if e != nil {
		si = e.span
	} else {
		si = spanInfo{name: "execute_tool " + name, attrs: []attribute.KeyValue{semconv.GenAIOperationNameExecuteTool, semconv.GenAIToolName(name)}}
	}
	opts := si.opts
	if id, _ := ctx.Value(callIDKey{}).(string); id != "" || opts == nil {
		attrs := si.attrs
		if id != "" {
			attrs = append(attrs[:len(attrs):len(attrs)], semconv.GenAIToolCallID(id))
		}
		opts = spanOptions(attrs)
	}
	return t.tracer.Start(ctx, si.name, opts...)
}

// outcome records on span how the call ended: its error type and status,
// and with content captured, its result.
func (t *tracing) outcome(span trace.Span, res *Result, err error) {
	switch {
	case err != nil:
		span.SetAttributes(semconv.ErrorTypeKey.String(callErrorType(err)))
		msg := "the call failed"
		if t.capture {
			msg = err.Error() // may repeat the arguments
		}
		span.SetStatus(codes.Error, msg)
	case res != nil && res.IsError:
		span.SetAttributes(semconv.ErrorTypeKey.String("tool_error"))
		span.SetStatus(codes.Error, "the tool returned an error result")
	case res != nil && t.capture:
		if b, err := json.Marshal(res); err == nil {
			span.SetAttributes(semconv.GenAIToolCallResultKey.String(string(b)))
		}
	}
}

// callErrorType is the error.type of a failed call.
func callErrorType(err error) string {
	var (
		unknown  *UnknownToolError
		args     *ArgumentsError
		panicked *PanicError
	)
	switch {
	case errors.As(err, &unknown):
		return "unknown_tool"
	case errors.As(err, &args):
		return "invalid_arguments"
	case errors.As(err, &panicked):
		return "panic"
	}
	return telemetry.ErrorType(err)
}

// recordArguments adds the arguments to the call's span when content is
// captured: the arguments as the model wrote them, never the completed
// ones (Call.Args), which hold the injected values.
func (r *Registry) recordArguments(ctx context.Context, args json.RawMessage) {
	if t := r.tel.Load(); t != nil && t.capture {
		trace.SpanFromContext(ctx).SetAttributes(semconv.GenAIToolCallArgumentsKey.String(string(args)))
	}
}
