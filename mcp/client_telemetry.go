package mcp

import (
	"context"
	"errors"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/toolwire/toolwire/internal/ctxkey"
	"github.com/toolwire/toolwire/jsonrpc"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// clientNetAttrs are the network attributes of a client's transport:
// stdio and in-memory pipes, HTTP with the server's host and port.
func clientNetAttrs(t ClientTransport) []attribute.KeyValue {
	var raw string
	switch t := t.(type) {
	case *CommandTransport, *InMemoryTransport:
		return []attribute.KeyValue{keyTransport.String("pipe")}
	case *HTTPTransport:
		raw = t.URL
	case *SSETransport:
		raw = t.URL
	default:
		return nil
	}
	attrs := []attribute.KeyValue{keyTransport.String("tcp"), keyProtocolName.String("http")}
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return attrs
	}
	attrs = append(attrs, keyServerAddress.String(u.Hostname()))
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	if p, err := strconv.Atoi(port); err == nil {
		attrs = append(attrs, keyServerPort.Int(p))
	}
	return attrs
}

// clientOp is the telemetry of one client request in flight.
type clientOp struct {
	span trace.Span
	// own is set when the span is the request's own, which ending the
	// request ends; the execute_tool span of ctxkey.ToolSpan is not.
	own bool
	// start is when the request began, if its duration is measured.
	start time.Time
	// id is the JSON-RPC id of the request's last round trip.
	id jsonrpc.ID
}

// startCall starts the telemetry of a request of method. A tools/call
// whose context carries an execute_tool span (ctxkey.ToolSpan) gets no
// span of its own: its attributes go on that span. The returned context
// carries the span, whose trace context the request's _meta is given.
func (s *ClientSession) startCall(ctx context.Context, method string, p *Params) (context.Context, clientOp) {
	ins := s.tel
	measuring := ins.operation.Enabled(ctx)
	prop := ins.propagator()
	if !measuring && prop == nil && !ins.tracing() {
		return ctx, clientOp{span: ins.none} // telemetry is off
	}
	var op clientOp
	if method == MethodToolsCall {
		if ts, ok := ctx.Value(ctxkey.ToolSpan{}).(trace.Span); ok && ts != nil {
			op.span = ts
			if trace.SpanContextFromContext(ctx).SpanID() != ts.SpanContext().SpanID() {
				ctx = trace.ContextWithSpan(ctx, ts)
			}
		}
	}
	if op.span == nil {
		ctx, op.span = ins.start(ctx, method)
		op.own = true
	}
	if measuring {
		op.start = time.Now()
	}
	if prop != nil && (op.span.SpanContext().IsValid() || baggage.FromContext(ctx).Len() > 0) {
		s.injectTrace(ctx, p, prop)
	}
	return ctx, op
}

// injectTrace puts the trace context of ctx, as prop writes it, in the
// _meta of p: in a copy of the session's shared _meta, in a new one, or in
// the caller's own. The _meta written is the carrier itself, so that
// handing it to prop allocates nothing more.
func (s *ClientSession) injectTrace(ctx context.Context, p *Params, prop propagation.TextMapPropagator) {
	var m *RequestMeta
	switch orig := p.Meta; {
	case orig == nil:
		m = &RequestMeta{}
	case orig == s.meta:
		cp := *orig
		cp.traceOf = orig
		m = &cp
	default:
		m = orig
		m.Traceparent, m.Tracestate, m.Baggage = "", "", "" // of an earlier call
	}
	prop.Inject(ctx, (*metaInjector)(m))
	if m.Traceparent != "" || m.Tracestate != "" || m.Baggage != "" {
		p.Meta = m
	}
}

// metaInjector writes a trace context into the _meta of a request's
// params, as a propagation.TextMapCarrier.
type metaInjector RequestMeta

// Get returns a trace context member already set.
func (m *metaInjector) Get(key string) string {
	switch key {
	case "traceparent":
		return m.Traceparent
	case "tracestate":
		return m.Tracestate
	case "baggage":
		return m.Baggage
	}
	return ""
}

// Set sets a trace context member; _meta carries no others.
func (m *metaInjector) Set(key, value string) {
	switch key {
	case "traceparent":
		m.Traceparent = value
	case "tracestate":
		m.Tracestate = value
	case "baggage":
		m.Baggage = value
	}
}

// Keys returns the trace context members set.
func (m *metaInjector) Keys() []string {
	var keys []string
	for _, k := range [...]string{"traceparent", "tracestate", "baggage"} {
		if m.Get(k) != "" {
			keys = append(keys, k)
		}
	}
	return keys
}

// endCall ends the telemetry of a request of method with params, which
// ended with err or result.
func (s *ClientSession) endCall(ctx context.Context, op *clientOp, method string, params RequestParams, result any, err error) {
	ins := s.tel
	span := op.span
	recording := span.IsRecording()
	measuring := !op.start.IsZero()
	if !recording && !measuring {
		if op.own {
			span.End()
		}
		return
	}
	buf := ins.attrBuf()
	attrs := append(*buf, keyMethod.String(method))
	defer func() { ins.putAttrs(buf, attrs) }()
	target := ""
	switch p := params.(type) {
	case *CallToolParams:
		target = p.Name
		attrs = append(attrs, keyToolName.String(p.Name), keyOperation.String(operationExecuteTool))
	case *GetPromptParams:
		target = p.Name
		attrs = append(attrs, keyPromptName.String(p.Name))
	}
	if v := s.ProtocolVersion(); v != "" {
		attrs = append(attrs, keyProtocolVersion.String(v))
	}
	attrs = append(attrs, s.netAttrs...)
	if c, ok := s.conn.(interface{ protocolVersion() string }); ok {
		if v := c.protocolVersion(); v != "" {
			attrs = append(attrs, keyProtocolVer.String(v))
		}
	}
	failed, errMsg := true, ""
	switch {
	case err != nil:
		attrs, errMsg = clientErrorAttrs(attrs, err)
	default:
		if r, ok := result.(*CallToolResult); ok && r.IsError {
			attrs = append(attrs, keyErrorType.String(errorToolError))
		} else {
			failed = false
		}
	}
	if measuring {
		ins.record(ctx, ins.operation, time.Since(op.start).Seconds(), attrs)
	}
	if !recording {
		if op.own {
			span.End()
		}
		return
	}
	if op.own && target != "" {
		span.SetName(ins.spanName(method, target))
	}
	if !op.id.IsZero() {
		attrs = append(attrs, keyRequestID.String(requestID(op.id)))
	}
	if p, ok := params.(*ReadResourceParams); ok {
		attrs = append(attrs, keyResourceURI.String(p.URI))
	}
	if sc, ok := s.conn.(interface{ legacySession() string }); ok {
		if id := sc.legacySession(); id != "" {
			attrs = append(attrs, keySessionID.String(id))
		}
	}
	if !op.own {
		// The execute_tool span names the tool (as its registry does,
		// which may differ from the server's name), and its outcome.
		attrs = slices.DeleteFunc(attrs, func(kv attribute.KeyValue) bool {
			return kv.Key == keyToolName || kv.Key == keyOperation || kv.Key == keyErrorType
		})
		span.SetAttributes(attrs...)
		return
	}
	span.SetAttributes(attrs...)
	if failed {
		span.SetStatus(codes.Error, errMsg)
	}
	span.End()
}

// clientErrorAttrs appends the attributes of a request that failed with
// err to attrs, and returns them with the span's status message. Apart
// from endCall, so that the error a successful request lacks is not
// looked for (errors.As's target would be allocated).
func clientErrorAttrs(attrs []attribute.KeyValue, err error) ([]attribute.KeyValue, string) {
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) {
		return rpcErrorAttrs(attrs, rpcErr), rpcErr.Message
	}
	return append(attrs, keyErrorType.String(clientErrorType(err))), err.Error()
}

// clientNotification records the span of a notification the client
// sends, which send sends with the trace context in p's _meta.
func (s *ClientSession) clientNotification(ctx context.Context, method string, p *Params, send func(context.Context) error) error {
	ctx, op := s.startCall(ctx, method, p)
	err := send(ctx)
	s.endCall(ctx, &op, method, p, nil, err)
	return err
}

// sessionEnded records the duration of the client's session, which ended
// with err (nil when closed).
func (s *ClientSession) sessionEnded(err error) {
	ctx := context.Background()
	if !s.tel.session.Enabled(ctx) {
		return
	}
	attrs := make([]attribute.KeyValue, 0, 4)
	if v := s.ProtocolVersion(); v != "" {
		attrs = append(attrs, keyProtocolVersion.String(v))
	}
	for _, a := range s.netAttrs {
		if a.Key == keyTransport || a.Key == keyProtocolName {
			attrs = append(attrs, a)
		}
	}
	if err != nil {
		attrs = append(attrs, keyErrorType.String(clientErrorType(err)))
	}
	s.tel.session.Record(ctx, time.Since(s.opened).Seconds(), metric.WithAttributes(attrs...))
}

// startInbound starts the SERVER span of request m that the server sent
// the client (legacy), its parent the trace context in m's _meta; end
// ends it with the error the client answers with (nil for a result).
func (s *ClientSession) startInbound(ctx context.Context, m *jsonrpc.Message) (_ context.Context, end func(*jsonrpc.Error)) {
	ins := s.tel
	pctx := ctx
	if p := ins.propagator(); p != nil {
		pctx = p.Extract(ctx, (*metaCarrier)(&request{params: m.Params}))
	}
	sctx, span := ins.startWith(pctx, knownMethod(m.Method), ins.peerOpts)
	return sctx, func(e *jsonrpc.Error) {
		if !span.IsRecording() {
			span.End()
			return
		}
		attrs := []attribute.KeyValue{keyMethod.String(knownMethod(m.Method)), keyRequestID.String(requestID(m.ID))}
		if v := s.ProtocolVersion(); v != "" {
			attrs = append(attrs, keyProtocolVersion.String(v))
		}
		attrs = append(attrs, s.netAttrs...)
		if e != nil {
			attrs = rpcErrorAttrs(attrs, e)
			span.SetStatus(codes.Error, e.Message)
		}
		span.SetAttributes(attrs...)
		span.End()
	}
}
