package mcp

import (
	"context"
	"errors"
	"net"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

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
	// names holds the span names spanName made.
	namesMu sync.RWMutex
	names   map[nameKey]string
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

// nameKey keys a span name made by spanName.
type nameKey struct{ method, target string }

// spanName is "{method} {target}", or the method alone without a target.
// The names made are kept (at most maxCachedSets), so that a request does
// not allocate its own.
func (ins *instruments) spanName(method, target string) string {
	if target == "" {
		return method
	}
	k := nameKey{method, target}
	ins.namesMu.RLock()
	name, ok := ins.names[k]
	ins.namesMu.RUnlock()
	if ok {
		return name
	}
	name = method + " " + target
	ins.namesMu.Lock()
	if len(ins.names) < maxCachedSets {
		if ins.names == nil {
			ins.names = make(map[nameKey]string)
		}
		ins.names[k] = name
	}
	ins.namesMu.Unlock()
	return name
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

// httpVersion is the network.protocol.version of an HTTP request.
func httpVersion(major, minor int) string {
	if minor == 0 && major >= 2 {
		return strconv.Itoa(major)
	}
	return strconv.Itoa(major) + "." + strconv.Itoa(minor)
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
