package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"time"

	"github.com/toolwire/toolwire/internal/jsonvalue"
	"github.com/toolwire/toolwire/jsonrpc"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// makeInstruments makes the server's instruments from its Telemetry, when
// it starts serving.
func (s *Server) makeInstruments() { s.tel = s.Telemetry.instruments("server", trace.SpanKindServer) }

// metaCarrier reads the trace context of a request from the _meta object
// of its params, as a propagation.TextMapCarrier: it is the request
// itself, so that handing it to a propagator allocates nothing.
type metaCarrier request

// serverOp is the telemetry of a request being served, made only when
// there is some: its span (when recording or its duration measured), when
// it arrived, and what its params._meta holds for the propagator, read
// once the propagator asks (see metaCarrier).
type serverOp struct {
	span    trace.Span
	started time.Time
	// meta is params._meta (nil when there is none or it is not an
	// object), and w3c its W3C trace context members (the JSON strings);
	// set once metaRead.
	meta     []byte
	w3c      [3][]byte
	metaRead bool
}

// w3cKeys are the _meta members of the W3C trace context, in the order of
// traceMeta.w3c.
var w3cKeys = [3]string{"traceparent", "tracestate", "baggage"}

// fields reads the request's _meta, in one pass, the first time.
func (c *metaCarrier) fields() *serverOp {
	if c.op == nil {
		c.op = new(serverOp)
	}
	t := c.op
	if t.metaRead {
		return t
	}
	t.metaRead = true
	p := c.params
	const first = `{"_meta":{` // as this package's client writes params
	if bytes.HasPrefix(p, []byte(first)) {
		// _meta alone, not the arguments after it, in one walk.
		meta := p[len(first)-1:]
		if end, err := jsonvalue.Object(meta, 0, t.w3cMember(meta)); err == nil {
			t.meta = meta[:end]
		} else {
			t.w3c = [3][]byte{}
		}
		return t
	}
	if len(p) > 0 && p[0] == '{' {
		_, _ = jsonvalue.Object(p, 0, func(key string, start, end int) {
			if key == "_meta" && p[start] == '{' {
				t.meta = p[start:end]
			}
		})
	}
	_, _ = jsonvalue.Object(t.meta, 0, t.w3cMember(t.meta))
	return t
}

// w3cMember returns the function that keeps the W3C trace context members
// of the _meta object meta, for jsonvalue.Object.
func (t *serverOp) w3cMember(meta []byte) func(key string, start, end int) {
	return func(key string, start, end int) {
		for i, k := range w3cKeys {
			if key == k && meta[start] == '"' {
				t.w3c[i] = meta[start:end]
			}
		}
	}
}

// Get returns the string member key of _meta; "" when there is none, it
// is not a string, or its JSON text is longer than maxTraceValue.
func (c *metaCarrier) Get(key string) string {
	t := c.fields()
	var raw []byte
	switch key {
	case w3cKeys[0]:
		raw = t.w3c[0]
	case w3cKeys[1]:
		raw = t.w3c[1]
	case w3cKeys[2]:
		raw = t.w3c[2]
	default:
		raw = stringMember(t.meta, key)
	}
	if raw == nil || len(raw) > maxTraceValue+2 { // the value and its quotes
		return "" // nil without the error String would make
	}
	s, _ := jsonvalue.String(raw)
	return s
}

// stringMember returns the JSON text of the string member key of obj, a
// JSON object checked already; nil when there is none or it is not a
// string.
func stringMember(obj []byte, key string) []byte {
	var raw []byte
	if len(obj) > 0 && obj[0] == '{' {
		_, _ = jsonvalue.Object(obj, 0, func(k string, start, end int) {
			if k == key && obj[start] == '"' {
				raw = obj[start:end]
			}
		})
	}
	return raw
}

// Set does nothing: a server never writes its requests' trace context.
func (c *metaCarrier) Set(string, string) {}

// Keys returns the names of the string members of _meta.
func (c *metaCarrier) Keys() []string {
	meta := c.fields().meta
	var keys []string
	if meta != nil {
		_, _ = jsonvalue.Object(meta, 0, func(k string, start, _ int) {
			if meta[start] == '"' {
				keys = append(keys, k)
			}
		})
	}
	return keys
}

// startServerSpan starts the span of request req, to be served in ctx, and
// returns the context the request runs in. The trace context in the
// request's _meta is the span's parent; the span of ctx (an HTTP server
// span) is then linked.
func (ins *instruments) startServerSpan(ctx context.Context, req *request, start time.Time) context.Context {
	pctx := ctx
	if p := ins.propagator(); p != nil {
		pctx = p.Extract(ctx, (*metaCarrier)(req))
	}
	sctx, span := ins.start(pctx, knownMethod(req.method))
	recording := span.IsRecording()
	if !recording && !ins.operation.Enabled(sctx) {
		return sctx // a span that records nothing needs no end
	}
	if req.op == nil {
		req.op = new(serverOp)
	}
	req.op.span, req.op.started = span, start
	if recording {
		ambient := trace.SpanContextFromContext(ctx)
		if remote := trace.SpanContextFromContext(pctx); ambient.IsValid() && !remote.Equal(ambient) {
			span.AddLink(trace.Link{SpanContext: ambient})
		}
	}
	return sctx
}

// endServerSpan ends the span of request r, answered with m (nil when it
// was cancelled), and records its duration.
func (r *request) endServerSpan(m *jsonrpc.Message) {
	if r.op == nil || r.op.span == nil {
		return // no telemetry
	}
	ins := r.conn.srv.tel
	span := r.op.span
	recording := span.IsRecording()
	measuring := ins.operation.Enabled(r)
	if !recording && !measuring {
		span.End()
		return
	}
	s := r.conn.srv
	method := knownMethod(r.method)
	// Attributes for the span and the metric alike; a name only when the
	// server knows it, so that a client cannot make metrics of any
	// cardinality.
	buf := ins.attrBuf()
	attrs := append(*buf, keyMethod.String(method))
	defer func() { ins.putAttrs(buf, attrs) }()
	target := ""
	switch r.method {
	case MethodToolsCall:
		attrs = append(attrs, keyOperation.String(operationExecuteTool))
		if _, ok := s.tools.Lookup(r.subject); ok {
			target = r.subject
			attrs = append(attrs, keyToolName.String(target))
		}
	case MethodPromptsGet:
		s.mu.RLock()
		_, ok := s.prompts[r.subject]
		s.mu.RUnlock()
		if ok {
			target = r.subject
			attrs = append(attrs, keyPromptName.String(target))
		}
	}
	if r.version != "" {
		attrs = append(attrs, keyProtocolVersion.String(r.version))
	}
	if p, ok := r.out.(*postSender); ok {
		attrs = append(attrs, keyTransport.String("tcp"), keyProtocolName.String("http"))
		if p.req != nil {
			attrs = append(attrs, keyProtocolVer.String(httpVersion(p.req.ProtoMajor, p.req.ProtoMinor)))
		}
	} else if _, ok := r.out.(lineSender); ok {
		attrs = append(attrs, keyTransport.String("pipe"))
	} else {
		attrs = append(attrs, keyTransport.String("tcp"), keyProtocolName.String("http"))
	}
	failed, errMsg := true, ""
	switch {
	case m == nil:
		attrs = append(attrs, keyErrorType.String(errorCancelled))
		errMsg = "cancelled by the client"
	case m.Error != nil:
		attrs = rpcErrorAttrs(attrs, m.Error)
		errMsg = m.Error.Message
	case r.method == MethodToolsCall && r.parts != nil && r.parts.toolResult.IsError:
		attrs = append(attrs, keyErrorType.String(errorToolError))
	default:
		failed = false
	}
	if measuring {
		ins.record(r, ins.operation, time.Since(r.op.started).Seconds(), attrs)
	}
	if !recording {
		span.End()
		return
	}
	// Attributes for the span only.
	if target != "" {
		span.SetName(ins.spanName(method, target))
	}
	if !r.id.IsZero() {
		attrs = append(attrs, keyRequestID.String(requestID(r.id)))
	}
	switch r.method {
	case MethodToolsCall:
		if target == "" && r.subject != "" {
			attrs = append(attrs, keyToolName.String(r.subject))
		}
	case MethodPromptsGet:
		if target == "" && r.subject != "" {
			attrs = append(attrs, keyPromptName.String(r.subject))
		}
	case MethodResourcesRead:
		if r.subject != "" {
			attrs = append(attrs, keyResourceURI.String(r.subject))
		}
	case MethodResourcesSubscribe, MethodResourcesUnsubscribe:
		if uri, err := jsonvalue.String(stringMember(r.params, "uri")); err == nil {
			attrs = append(attrs, keyResourceURI.String(uri))
		}
	}
	if c := r.conn; !r.modern && c.session != "" {
		if _, stdio := r.out.(lineSender); !stdio {
			attrs = append(attrs, keySessionID.String(c.session))
		}
	}
	if p, ok := r.out.(*postSender); ok && p.req != nil {
		attrs = hostPort(attrs, p.req.RemoteAddr, keyClientAddress, keyClientPort)
	}
	span.SetAttributes(attrs...)
	if failed {
		span.SetStatus(codes.Error, errMsg)
	}
	span.End()
}

// serverNotification records the span and duration of a notification
// from the client, which handle handles.
func (ins *instruments) serverNotification(ctx context.Context, c *conn, m *jsonrpc.Message, stdio bool, handle func()) {
	req := request{method: m.Method, params: m.Params}
	_ = ins.startServerSpan(ctx, &req, time.Now())
	handle()
	if req.op == nil || req.op.span == nil {
		return // no telemetry
	}
	span := req.op.span
	recording := span.IsRecording()
	measuring := ins.operation.Enabled(ctx)
	if !recording && !measuring {
		span.End()
		return
	}
	attrs := make([]attribute.KeyValue, 0, 4)
	attrs = append(attrs, keyMethod.String(knownMethod(m.Method)))
	attrs = c.transportAttrs(attrs, stdio)
	if measuring {
		ins.record(ctx, ins.operation, time.Since(req.op.started).Seconds(), attrs)
	}
	if recording {
		if !stdio && c.session != "" {
			attrs = append(attrs, keySessionID.String(c.session))
		}
		span.SetAttributes(attrs...)
	}
	span.End()
}

// sessionEnded records the duration of a session of the server: a stdio
// connection or a legacy HTTP session.
func (ins *instruments) sessionEnded(c *conn, stdio bool) {
	ctx := context.Background()
	if c.opened.IsZero() || !ins.session.Enabled(ctx) {
		return
	}
	attrs := c.transportAttrs(make([]attribute.KeyValue, 0, 3), stdio)
	ins.session.Record(ctx, time.Since(c.opened).Seconds(), metric.WithAttributes(attrs...))
}

// transportAttrs appends the attributes of the connection's transport
// and its protocol version, when known, to attrs.
func (c *conn) transportAttrs(attrs []attribute.KeyValue, stdio bool) []attribute.KeyValue {
	if stdio {
		attrs = append(attrs, keyTransport.String("pipe"))
	} else {
		attrs = append(attrs, keyTransport.String("tcp"), keyProtocolName.String("http"))
	}
	c.mu.Lock()
	version := c.version
	c.mu.Unlock()
	if version != "" {
		attrs = append(attrs, keyProtocolVersion.String(version))
	}
	return attrs
}

// startAsk starts the CLIENT span of request m that the server sends the
// client of c (legacy: sampling, elicitation, roots), and puts the trace
// context in m's params._meta; end ends the span with the request's
// outcome.
func (ins *instruments) startAsk(ctx context.Context, c *conn, m *jsonrpc.Message) (_ context.Context, end func(error)) {
	ctx, span := ins.startWith(ctx, knownMethod(m.Method), ins.peerOpts)
	if p := ins.propagator(); p != nil && (span.SpanContext().IsValid() || baggage.FromContext(ctx).Len() > 0) {
		carrier := propagation.MapCarrier{}
		p.Inject(ctx, carrier)
		m.Params = withMeta(m.Params, carrier)
	}
	return ctx, func(err error) {
		if !span.IsRecording() {
			span.End()
			return
		}
		_, stdio := c.out.(lineSender)
		attrs := []attribute.KeyValue{keyMethod.String(knownMethod(m.Method)), keyRequestID.String(requestID(m.ID))}
		attrs = c.transportAttrs(attrs, stdio)
		if !stdio {
			attrs = append(attrs, keySessionID.String(c.session))
		}
		if err != nil {
			attrs = append(attrs, keyErrorType.String(clientErrorType(err)))
			span.SetStatus(codes.Error, err.Error())
		}
		span.SetAttributes(attrs...)
		span.End()
	}
}

// withMeta returns params (a JSON object, or none) with the members kv
// added to its _meta; params itself when it cannot hold them.
func withMeta(params json.RawMessage, kv map[string]string) json.RawMessage {
	if len(kv) == 0 {
		return params
	}
	obj := map[string]json.RawMessage{}
	if len(params) > 0 && json.Unmarshal(params, &obj) != nil {
		return params
	}
	meta := map[string]any{}
	if raw, ok := obj["_meta"]; ok && json.Unmarshal(raw, &meta) != nil {
		return params
	}
	for k, v := range kv {
		meta[k] = v
	}
	b, err := json.Marshal(meta)
	if err != nil {
		return params
	}
	obj["_meta"] = b
	out, err := json.Marshal(obj)
	if err != nil {
		return params
	}
	return out
}
