package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/toolwire/toolwire/internal/ctxkey"
	"github.com/toolwire/toolwire/internal/jsonvalue"
	"github.com/toolwire/toolwire/jsonrpc"
)

// Telemetry says where the OpenTelemetry spans and metrics of a Server or
// a Client go. Both follow the OpenTelemetry semantic conventions for MCP:
// a span per request and notification, named "{mcp.method.name} {target}"
// ("tools/call add", "prompts/get review", "resources/read"), of kind
// SERVER on the server and CLIENT on the client, with the mcp.*, jsonrpc.*,
// gen_ai.*, network.*, server.* and client.* attributes the conventions
// ask for; the mcp.server.operation.duration and
// mcp.client.operation.duration histograms (and the session duration
// ones) in seconds. The client puts the W3C trace context (traceparent,
// tracestate, baggage) of each request in its params._meta, in both
// protocol eras and over every transport; the server takes it from there
// as the parent of its span, and links the context it serves the request
// in (an HTTP server span of the program's own middleware) when both are
// present. Malformed trace context is ignored: a new trace starts. A
// request a legacy server sends its client (sampling, elicitation, roots)
// is a CLIENT span on the server and a SERVER span on the client.
//
// The zero value uses OpenTelemetry's global providers, which do nothing
// until the program installs an SDK (otel.SetTracerProvider and the
// like), before or after the Server serves and the Client connects: a
// program chooses its SDK and exporter, this package depends on the API
// only. With nothing installed, a request allocates nothing more and
// builds no attributes (some tens of nanoseconds on each side).
type Telemetry struct {
	// TracerProvider makes the spans; nil means otel.GetTracerProvider().
	TracerProvider trace.TracerProvider
	// MeterProvider makes the duration histograms; nil means
	// otel.GetMeterProvider().
	MeterProvider metric.MeterProvider
	// Propagator carries the trace context through params._meta; nil
	// means otel.GetTextMapPropagator(), looked up at each request. Only
	// string members of _meta reach it, none longer than 8192 bytes; the
	// client carries only traceparent, tracestate and baggage.
	Propagator propagation.TextMapPropagator
}

// instrumentationName names this package as the instrumentation scope of
// its spans and metrics.
const instrumentationName = "github.com/toolwire/toolwire/mcp"

// The attributes of the conventions for MCP.
const (
	keyMethod          = attribute.Key("mcp.method.name")
	keyProtocolVersion = attribute.Key("mcp.protocol.version")
	keySessionID       = attribute.Key("mcp.session.id")
	keyResourceURI     = attribute.Key("mcp.resource.uri")
	keyRequestID       = attribute.Key("jsonrpc.request.id")
	keyToolName        = attribute.Key("gen_ai.tool.name")
	keyPromptName      = attribute.Key("gen_ai.prompt.name")
	keyOperation       = attribute.Key("gen_ai.operation.name")
	keyErrorType       = attribute.Key("error.type")
	keyStatusCode      = attribute.Key("rpc.response.status_code")
	keyTransport       = attribute.Key("network.transport")
	keyProtocolName    = attribute.Key("network.protocol.name")
	keyProtocolVer     = attribute.Key("network.protocol.version")
	keyServerAddress   = attribute.Key("server.address")
	keyServerPort      = attribute.Key("server.port")
	keyClientAddress   = attribute.Key("client.address")
	keyClientPort      = attribute.Key("client.port")
)

// Values of the attributes above.
const (
	operationExecuteTool = "execute_tool"
	errorToolError       = "tool_error"
	errorOther           = "_OTHER"
	errorCancelled       = "cancelled"
	errorTimeout         = "timeout"
	// methodOther names a method this package does not know, in span
	// names and metrics, whose cardinality a client must not control.
	methodOther = "_OTHER"
)

// durationBuckets are the bucket boundaries the conventions give the
// duration histograms, in seconds.
var durationBuckets = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}

// maxTraceValue bounds a value of _meta the server hands a propagator: the
// W3C Baggage limit (8192 bytes) is the largest of the trace context's.
// A longer value is not given at all, as the W3C Baggage propagator drops
// a baggage past it.
const maxTraceValue = 8192

// instruments are the tracer, histograms and propagator of one side (client
// or server), made once from a Telemetry.
type instruments struct {
	tp        trace.TracerProvider // nil: the global one, at each use
	tracer    trace.Tracer
	prop      propagation.TextMapPropagator // nil: the global one, at each use
	operation metric.Float64Histogram
	session   metric.Float64Histogram
	// startOpts are the options every span starts with (its kind), made
	// once: a variadic slice made per span would be allocated; peerOpts
	// those of the other side's kind, for the requests the other side
	// initiates (a legacy server's sampling, elicitation, roots).
	startOpts []trace.SpanStartOption
	peerOpts  []trace.SpanStartOption
	// attrs lends the slices a span's attributes are gathered in (the SDK
	// copies them); recordOpts holds the options that record a metric
	// with each set of attributes seen, made once per set.
	attrs      sync.Pool
	recordOpts sync.Map // attrKey -> []metric.RecordOption
	cachedSets atomic.Int32
	// off holds the tracer provider found to make no spans (OpenTelemetry's
	// global one before a program installs an SDK), and none the span
	// that stands for the spans not made: a request then starts none,
	// which would allocate (see start).
	off  atomic.Pointer[offProvider]
	none trace.Span
	// offProp is the propagator found to carry no field when the
	// instruments were made (OpenTelemetry's global one before a program
	// sets one, which then changes identity): it is not called.
	offProp propagation.TextMapPropagator
}

// offProvider is a tracer provider that makes no spans.
type offProvider struct{ tp trace.TracerProvider }

// start starts a span named name in ctx, unless the provider is known to
// make none: then it returns ctx and ins.none. A provider is known so
// when a span it started in a context without a span had no trace id
// (every SDK gives one to every span, sampled or not); OpenTelemetry's
// global provider changes identity when a program installs an SDK, so a
// span is started again from then on.
func (ins *instruments) start(ctx context.Context, name string) (context.Context, trace.Span) {
	return ins.startWith(ctx, name, ins.startOpts)
}

// startWith is start with the span options opts.
func (ins *instruments) startWith(ctx context.Context, name string, opts []trace.SpanStartOption) (context.Context, trace.Span) {
	tp := ins.tp
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	if off := ins.off.Load(); off != nil && off.tp == tp {
		return ctx, ins.none
	}
	sctx, span := ins.tracer.Start(ctx, name, opts...)
	if !span.IsRecording() && !span.SpanContext().IsValid() && reflect.TypeOf(tp).Comparable() {
		ins.off.Store(&offProvider{tp})
	}
	return sctx, span
}

// maxCachedAttrs is the most attributes of a metric whose record options
// are kept; maxCachedSets bounds the sets kept.
const (
	maxCachedAttrs = 12
	maxCachedSets  = 1024
)

// attrKey is a set of metric attributes as a map key.
type attrKey [maxCachedAttrs]attribute.KeyValue

// record records a duration in seconds with attributes attrs.
func (ins *instruments) record(ctx context.Context, h metric.Float64Histogram, seconds float64, attrs []attribute.KeyValue) {
	if len(attrs) > maxCachedAttrs {
		h.Record(ctx, seconds, metric.WithAttributes(attrs...))
		return
	}
	var k attrKey
	copy(k[:], attrs)
	if opts, ok := ins.recordOpts.Load(k); ok {
		h.Record(ctx, seconds, opts.([]metric.RecordOption)...)
		return
	}
	opts := []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(attrs...))}
	if ins.cachedSets.Add(1) <= maxCachedSets {
		ins.recordOpts.Store(k, opts)
	}
	h.Record(ctx, seconds, opts...)
}

// attrBuf lends a slice to gather attributes in; give it back with
// putAttrs.
func (ins *instruments) attrBuf() *[]attribute.KeyValue {
	if b, ok := ins.attrs.Get().(*[]attribute.KeyValue); ok {
		return b
	}
	b := make([]attribute.KeyValue, 0, 20)
	return &b
}

func (ins *instruments) putAttrs(b *[]attribute.KeyValue, attrs []attribute.KeyValue) {
	*b = attrs[:0] // the values left in it go with the pool at a collection
	ins.attrs.Put(b)
}

// instruments makes the instruments of one side: "client" or "server".
func (t Telemetry) instruments(side string, kind trace.SpanKind) *instruments {
	tp := t.TracerProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	mp := t.MeterProvider
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	meter := mp.Meter(instrumentationName)
	ins := &instruments{
		tp:        t.TracerProvider,
		none:      tracenoop.Span{},
		tracer:    tp.Tracer(instrumentationName),
		prop:      t.Propagator,
		startOpts: []trace.SpanStartOption{trace.WithSpanKind(kind)},
		peerOpts:  []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindServer)},
	}
	if kind == trace.SpanKindServer {
		ins.peerOpts = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient)}
	}
	if p := ins.propagator(); len(p.Fields()) == 0 && reflect.TypeOf(p).Comparable() {
		ins.offProp = p
	}
	ins.operation = histogram(meter, "mcp."+side+".operation.duration",
		"The duration of MCP requests and notifications as the "+side+" sees them.")
	ins.session = histogram(meter, "mcp."+side+".session.duration",
		"The duration of MCP sessions as the "+side+" sees them.")
	return ins
}

// makeInstruments makes the server's instruments from its Telemetry, when
// it starts serving.
func (s *Server) makeInstruments() { s.tel = s.Telemetry.instruments("server", trace.SpanKindServer) }

// histogram makes a duration histogram with the conventions' buckets; one
// the meter refuses (it reports why to otel's error handler) records
// nothing.
func histogram(meter metric.Meter, name, desc string) metric.Float64Histogram {
	h, err := meter.Float64Histogram(name, metric.WithUnit("s"), metric.WithDescription(desc),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	if err != nil || h == nil {
		otel.Handle(err)
		return noop.Float64Histogram{}
	}
	return h
}

// propagator returns the propagator, or nil when it is the one found at
// the start to carry nothing (see offProp).
func (ins *instruments) propagator() propagation.TextMapPropagator {
	p := ins.prop
	if p == nil {
		p = otel.GetTextMapPropagator()
	}
	if ins.offProp != nil && p == ins.offProp {
		return nil
	}
	return p
}

// tracing reports whether spans may be made: false once the provider is
// known to make none (see start).
func (ins *instruments) tracing() bool {
	tp := ins.tp
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	off := ins.off.Load()
	return off == nil || off.tp != tp
}

// knownMethod returns method if this package knows it, else methodOther.
func knownMethod(method string) string {
	switch method {
	case MethodInitialize, MethodPing, MethodDiscover, MethodToolsList, MethodToolsCall,
		MethodResourcesList, MethodResourcesRead, MethodResourceTemplatesList,
		MethodResourcesSubscribe, MethodResourcesUnsubscribe, MethodPromptsList,
		MethodPromptsGet, MethodComplete, MethodSetLevel, MethodSubscriptionsListen,
		MethodCreateMessage, MethodElicit, MethodListRoots,
		NotificationInitialized, NotificationCancelled, NotificationProgress,
		NotificationMessage, NotificationToolsListChanged, NotificationResourcesListChanged,
		NotificationPromptsListChanged, NotificationResourceUpdated, NotificationRootsListChanged,
		NotificationSubscriptionsAcknowledged, NotificationElicitationComplete:
		return method
	}
	return methodOther
}

// spanName is "{method} {target}", or the method alone without a target.
func spanName(method, target string) string {
	if target == "" {
		return method
	}
	return method + " " + target
}

// requestID is a JSON-RPC id as the conventions write it: a string id
// without its quotes.
func requestID(id jsonrpc.ID) string {
	raw := id.String()
	if len(raw) > 0 && raw[0] == '"' {
		if s, err := jsonvalue.String([]byte(raw)); err == nil {
			return s
		}
	}
	return raw
}

// rpcErrorAttrs are the attributes of a JSON-RPC error response.
func rpcErrorAttrs(attrs []attribute.KeyValue, e *jsonrpc.Error) []attribute.KeyValue {
	code := strconv.Itoa(e.Code)
	return append(attrs, keyErrorType.String(code), keyStatusCode.String(code))
}

// hostPort splits an address into the host and port attributes under
// the keys given; a missing or bad port is left out.
func hostPort(attrs []attribute.KeyValue, addr string, hostKey, portKey attribute.Key) []attribute.KeyValue {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return append(attrs, hostKey.String(addr))
	}
	attrs = append(attrs, hostKey.String(host))
	if p, err := strconv.Atoi(port); err == nil {
		attrs = append(attrs, portKey.Int(p))
	}
	return attrs
}

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
	if len(raw) > maxTraceValue+2 { // the value and its quotes
		return ""
	}
	s, _ := jsonvalue.String(raw) // "" for nil
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
		span.SetName(spanName(method, target))
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

// httpVersion is the network.protocol.version of an HTTP request.
func httpVersion(major, minor int) string {
	if minor == 0 && major >= 2 {
		return strconv.Itoa(major)
	}
	return strconv.Itoa(major) + "." + strconv.Itoa(minor)
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

// clientErrorType is the error.type of a client request that failed with
// err.
func clientErrorType(err error) string {
	var rpcErr *jsonrpc.Error
	var status *httpStatusError
	switch {
	case errors.As(err, &rpcErr):
		return strconv.Itoa(rpcErr.Code)
	case errors.As(err, &status):
		code, _, _ := strings.Cut(status.status, " ")
		return code
	case errors.Is(err, context.DeadlineExceeded):
		return errorTimeout
	case errors.Is(err, context.Canceled):
		return errorCancelled
	}
	return errorOther
}

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
// the caller's own.
func (s *ClientSession) injectTrace(ctx context.Context, p *Params, prop propagation.TextMapPropagator) {
	inj := metaInjector{p: p, shared: s.meta}
	if m := p.Meta; m != nil && m != s.meta {
		m.Traceparent, m.Tracestate, m.Baggage = "", "", "" // of an earlier call
	}
	prop.Inject(ctx, &inj)
}

// metaInjector writes a trace context into the _meta of a request's
// params, as a propagation.TextMapCarrier. A _meta the session shares
// between requests is copied first.
type metaInjector struct {
	p      *Params
	shared *RequestMeta
}

// Get returns a trace context member already set.
func (c *metaInjector) Get(key string) string {
	m := c.p.Meta
	if m == nil {
		return ""
	}
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
func (c *metaInjector) Set(key, value string) {
	if key != "traceparent" && key != "tracestate" && key != "baggage" {
		return
	}
	switch m := c.p.Meta; {
	case m == nil:
		c.p.Meta = &RequestMeta{}
	case m == c.shared:
		cp := *m
		cp.traceOf = m
		c.p.Meta = &cp
	}
	switch m := c.p.Meta; key {
	case "traceparent":
		m.Traceparent = value
	case "tracestate":
		m.Tracestate = value
	case "baggage":
		m.Baggage = value
	}
}

// Keys returns the trace context members set.
func (c *metaInjector) Keys() []string {
	var keys []string
	for _, k := range [...]string{"traceparent", "tracestate", "baggage"} {
		if c.Get(k) != "" {
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
	var rpcErr *jsonrpc.Error
	switch {
	case errors.As(err, &rpcErr):
		attrs = rpcErrorAttrs(attrs, rpcErr)
		errMsg = rpcErr.Message
	case err != nil:
		attrs = append(attrs, keyErrorType.String(clientErrorType(err)))
		errMsg = err.Error()
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
		span.SetName(spanName(method, target))
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
