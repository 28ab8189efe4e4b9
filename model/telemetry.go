package model

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolwire/toolwire/model/internal/retryevent"
	"github.com/toolwire/toolwire/telemetry"
)

// Info describes a model for telemetry.
type Info struct {
	// Provider is the gen_ai.provider.name of the conventions: one of
	// their well-known values where one applies ("openai", "anthropic",
	// "gcp.gemini", "deepseek"), else the provider's own name ("ollama").
	Provider string
	// Name is the model asked for (gen_ai.request.model).
	Name string
	// URL is the base URL of the API, for server.address and server.port;
	// empty when unknown.
	URL string
}

// Describer is a model that says what it is: the models Instrument
// returns are. Package agent reads it for its invoke_agent span.
type Describer interface {
	Describe() Info
}

// Instrument returns m with telemetry by the GenAI conventions: each
// Generate is a span "chat {model}" (kind CLIENT) with the provider, the
// model, server.address and server.port, the answer's id, finish reason
// and token usage, error.type on failure and an event "retry" per retry
// the adapter makes (see RetryPolicy); it records the metrics gen_ai.client.token.usage
// and gen_ai.client.operation.duration. With c.CaptureContent the span
// also carries the system prompt, the messages sent and the answer.
// The model's API key and headers are never recorded.
func Instrument(m Model, info Info, c telemetry.Config) Model {
	in := &instrumented{m: m, info: info, tracer: c.Tracer(), capture: c.CaptureContent, spanName: "chat " + info.Name}
	attrs := []attribute.KeyValue{
		semconv.GenAIOperationNameChat,
		semconv.GenAIProviderNameKey.String(info.Provider),
	}
	if info.Name != "" {
		attrs = append(attrs, semconv.GenAIRequestModel(info.Name))
	}
	if host, port, ok := hostPort(info.URL); ok {
		attrs = append(attrs, semconv.ServerAddress(host), semconv.ServerPort(port))
	}
	in.start = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...)}
	in.metricAttrs = attrs
	meter := c.Meter()
	// The conventions' bucket boundaries, for tokens and seconds.
	in.tokens, _ = meter.Int64Histogram("gen_ai.client.token.usage",
		metric.WithDescription("Number of input and output tokens used."), metric.WithUnit("{token}"),
		metric.WithExplicitBucketBoundaries(1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864))
	in.duration, _ = meter.Float64Histogram("gen_ai.client.operation.duration",
		metric.WithDescription("GenAI operation duration."), metric.WithUnit("s"),
		metric.WithExplicitBucketBoundaries(0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92))
	return in
}

// hostPort reads server.address and server.port from a base URL, the
// port defaulting to the scheme's.
func hostPort(raw string) (string, int, bool) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "", 0, false
	}
	host, p := u.Hostname(), u.Port()
	if p == "" {
		p = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	port, err := strconv.Atoi(p)
	if err != nil || host == "" {
		return "", 0, false
	}
	return host, port, true
}

type instrumented struct {
	m           Model
	info        Info
	tracer      trace.Tracer
	capture     bool
	spanName    string
	start       []trace.SpanStartOption
	metricAttrs []attribute.KeyValue
	tokens      metric.Int64Histogram
	duration    metric.Float64Histogram
}

func (in *instrumented) Describe() Info { return in.info }

func (in *instrumented) Generate(ctx context.Context, req *Request, onDelta func(Delta)) (*Response, error) {
	begin := time.Now()
	sctx, span := in.tracer.Start(ctx, in.spanName, in.start...)
	recording := span.IsRecording()
	if recording {
		defer span.End()
		ctx = retryevent.With(sctx, chatSpan{span})
		attrs := []attribute.KeyValue{attribute.Bool("gen_ai.request.stream", onDelta != nil)}
		if req.MaxTokens > 0 {
			attrs = append(attrs, semconv.GenAIRequestMaxTokens(req.MaxTokens))
		}
		if req.Temperature != nil {
			attrs = append(attrs, semconv.GenAIRequestTemperature(*req.Temperature))
		}
		if in.capture {
			if req.System != "" {
				attrs = append(attrs, semconv.GenAISystemInstructionsKey.String(jsonString([]part{{Type: "text", Content: req.System}})))
			}
			attrs = append(attrs, semconv.GenAIInputMessagesKey.String(jsonString(messagesOf(req.Messages))))
		}
		span.SetAttributes(attrs...)
	}
	resp, err := in.m.Generate(ctx, req, onDelta)
	mattrs := in.metricAttrs
	if err != nil {
		et := errorType(err)
		mattrs = append(mattrs[:len(mattrs):len(mattrs)], semconv.ErrorTypeKey.String(et))
		if recording {
			span.SetAttributes(semconv.ErrorTypeKey.String(et))
			span.SetStatus(codes.Error, err.Error())
		}
	}
	if in.duration.Enabled(ctx) {
		in.duration.Record(ctx, time.Since(begin).Seconds(), metric.WithAttributes(mattrs...))
	}
	if err != nil {
		return resp, err
	}
	if in.tokens.Enabled(ctx) {
		in.tokens.Record(ctx, int64(resp.Usage.InputTokens), metric.WithAttributes(append(mattrs[:len(mattrs):len(mattrs)], semconv.GenAITokenTypeInput)...))
		in.tokens.Record(ctx, int64(resp.Usage.OutputTokens), metric.WithAttributes(append(mattrs[:len(mattrs):len(mattrs)], semconv.GenAITokenTypeOutput)...))
	}
	if recording {
		reason := finishReason(resp.StopReason)
		attrs := []attribute.KeyValue{
			semconv.GenAIResponseFinishReasons(reason),
			semconv.GenAIUsageInputTokens(resp.Usage.InputTokens),
			semconv.GenAIUsageOutputTokens(resp.Usage.OutputTokens),
		}
		if resp.RequestID != "" {
			attrs = append(attrs, semconv.GenAIResponseID(resp.RequestID))
		}
		if resp.Usage.CachedTokens > 0 {
			attrs = append(attrs, attribute.Int("gen_ai.usage.cache_read.input_tokens", resp.Usage.CachedTokens))
		}
		if resp.Usage.ReasoningTokens > 0 {
			attrs = append(attrs, attribute.Int("gen_ai.usage.reasoning.output_tokens", resp.Usage.ReasoningTokens))
		}
		if in.capture {
			out := outputMessage{message: messageOf(resp.Message), FinishReason: reason}
			attrs = append(attrs, semconv.GenAIOutputMessagesKey.String(jsonString([]outputMessage{out})))
		}
		span.SetAttributes(attrs...)
	}
	return resp, nil
}

// errorType is the error.type of a failed request: the HTTP status of an
// error answer, the provider's error type for one inside a stream.
func errorType(err error) string {
	var ae *APIError
	if errors.As(err, &ae) {
		switch {
		case ae.Status != 0:
			return strconv.Itoa(ae.Status)
		case ae.Type != "":
			return ae.Type
		}
	}
	return telemetry.ErrorType(err)
}

// finishReason is the conventions' name of a stop reason.
func finishReason(r StopReason) string {
	switch r {
	case StopEnd:
		return "stop"
	case StopFilter:
		return "content_filter"
	}
	return string(r) // "tool_calls", "length"
}

// chatSpan is the chat span of a request, which records its retries.
type chatSpan struct{ span trace.Span }

// Retried adds an event to the chat span for a request about to be
// retried after err, in wait.
func (c chatSpan) Retried(n int, err error, wait time.Duration) {
	c.span.AddEvent("retry", trace.WithAttributes(
		attribute.Int("retry.attempt", n+1),
		semconv.ErrorTypeKey.String(errorType(err)),
		attribute.Float64("retry.wait", wait.Seconds()),
	))
}

// The shapes of gen_ai.input.messages and gen_ai.output.messages.
type (
	message struct {
		Role  string `json:"role"`
		Parts []part `json:"parts"`
	}
	outputMessage struct {
		message
		FinishReason string `json:"finish_reason"`
	}
	part struct {
		Type      string          `json:"type"`
		Content   string          `json:"content,omitempty"`
		ID        string          `json:"id,omitempty"`
		Name      string          `json:"name,omitempty"`
		Arguments json.RawMessage `json:"arguments,omitempty"`
		Result    string          `json:"result,omitempty"`
		MimeType  string          `json:"mime_type,omitempty"`
		Modality  string          `json:"modality,omitempty"`
	}
)

func messagesOf(ms []Message) []message {
	out := make([]message, len(ms))
	for i, m := range ms {
		out[i] = messageOf(m)
	}
	return out
}

// messageOf is a message in the conventions' shape; images are named by
// their media type, without their data.
func messageOf(m Message) message {
	out := message{Role: string(m.Role), Parts: []part{}}
	for _, r := range m.Reasoning {
		if r.Text != "" {
			out.Parts = append(out.Parts, part{Type: "reasoning", Content: r.Text})
		}
	}
	if m.Text != "" {
		out.Parts = append(out.Parts, part{Type: "text", Content: m.Text})
	}
	for _, img := range m.Images {
		out.Parts = append(out.Parts, part{Type: "blob", Modality: "image", MimeType: img.MimeType})
	}
	for _, c := range m.ToolCalls {
		args := c.Arguments
		if c.Invalid != "" || !json.Valid(args) {
			args = nil
		}
		out.Parts = append(out.Parts, part{Type: "tool_call", ID: c.ID, Name: c.Name, Arguments: args})
	}
	for _, r := range m.ToolResults {
		out.Parts = append(out.Parts, part{Type: "tool_call_response", ID: r.CallID, Result: r.Text})
	}
	return out
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
