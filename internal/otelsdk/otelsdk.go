// Package otelsdk starts the OpenTelemetry SDK for toolwire's commands as
// the standard OTEL_* variables say, and nothing when none asks for it.
// It is the only package that depends on the SDK and its exporters: the
// core packages use the API alone (see package telemetry).
//
// Traces and metrics are exported when an OTLP endpoint is set
// (OTEL_EXPORTER_OTLP_ENDPOINT, or its _TRACES_ or _METRICS_ variant) or
// OTEL_TRACES_EXPORTER / OTEL_METRICS_EXPORTER names an exporter: otlp
// (over OTEL_EXPORTER_OTLP_PROTOCOL: http/protobuf, the default, or grpc),
// console (to stderr: stdout may be an MCP stream) or none.
// OTEL_SDK_DISABLED=true turns everything off. The resource comes from
// OTEL_SERVICE_NAME (default "toolwire") and OTEL_RESOURCE_ATTRIBUTES,
// the sampler from OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG.
// OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true records the
// content of messages and tool calls (telemetry.Config.CaptureContent).
// An invalid value is an error naming the variable.
//
// A collector that is down or slow never blocks the program nor grows its
// memory: spans wait in a bounded queue (OTEL_BSP_MAX_QUEUE_SIZE, 2048 by
// default) and are dropped when it is full, each export gives up after
// Options.ExportTimeout, and Shutdown after Options.ShutdownTimeout. The
// first failed export is reported once, as a warning.
package otelsdk

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdoutmetric"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/toolwire/toolwire/telemetry"
)

// Default bounds of the time spent on telemetry (see Options).
const (
	DefaultExportTimeout   = 5 * time.Second
	DefaultShutdownTimeout = 5 * time.Second
)

// Options are what Start reads and where it writes.
type Options struct {
	// Getenv reads the environment (os.Getenv in the program).
	Getenv func(string) string
	// Warn receives the warning of the first failed export (stderr), and
	// the console exporters' output.
	Warn io.Writer
	// ServiceName is the default service.name ("toolwire").
	ServiceName string
	// ExportTimeout bounds one export, its retries included (default
	// DefaultExportTimeout; OTEL_EXPORTER_OTLP_TIMEOUT may make each
	// attempt shorter); ShutdownTimeout bounds the last flush when the
	// program ends (default DefaultShutdownTimeout).
	ExportTimeout, ShutdownTimeout time.Duration
}

// SDK is the OpenTelemetry SDK a program started, or none.
type SDK struct {
	// Config is what the core packages take: the providers started and
	// whether content is captured. Nil when nothing is exported.
	Config    *telemetry.Config
	shutdowns []func(context.Context) error
	timeout   time.Duration // Options.ShutdownTimeout
}

// Start starts the SDK as the environment says: tracer and meter
// providers with their exporters, installed as otel's global providers
// (with the W3C trace context and baggage propagators), or nothing.
func Start(ctx context.Context, o Options) (*SDK, error) {
	env := o.Getenv
	disabled, err := boolVar(env, "OTEL_SDK_DISABLED")
	if err != nil || disabled {
		return &SDK{}, err
	}
	capture, err := boolVar(env, "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT")
	if err != nil {
		return nil, err
	}
	traces, err := exporters(env, "TRACES")
	if err != nil {
		return nil, err
	}
	metrics, err := exporters(env, "METRICS")
	if err != nil {
		return nil, err
	}
	// Checked even when nothing is exported, so that a mistake shows.
	sampler, err := samplerFrom(env)
	if err != nil {
		return nil, err
	}
	res, err := resourceFrom(ctx, env, o.ServiceName)
	if err != nil {
		return nil, err
	}
	if len(traces) == 0 && len(metrics) == 0 {
		return &SDK{}, nil
	}
	if o.ExportTimeout <= 0 {
		o.ExportTimeout = DefaultExportTimeout
	}
	if o.ShutdownTimeout <= 0 {
		o.ShutdownTimeout = DefaultShutdownTimeout
	}
	s := &SDK{Config: &telemetry.Config{CaptureContent: capture}, timeout: o.ShutdownTimeout}
	warned := &onceWriter{w: o.Warn}
	otel.SetErrorHandler(otel.ErrorHandlerFunc(warned.warn))

	topts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res), sdktrace.WithSampler(sampler)}
	for _, name := range traces {
		exp, err := traceExporter(ctx, env, name, o)
		if err != nil {
			return nil, err
		}
		topts = append(topts, sdktrace.WithBatcher(exp, sdktrace.WithExportTimeout(o.ExportTimeout)))
	}
	tp := sdktrace.NewTracerProvider(topts...)
	s.Config.TracerProvider = tp
	s.shutdowns = append(s.shutdowns, tp.Shutdown)
	otel.SetTracerProvider(tp)

	mopts := []sdkmetric.Option{sdkmetric.WithResource(res)}
	for _, name := range metrics {
		exp, err := metricExporter(ctx, env, name, o)
		if err != nil {
			return nil, err
		}
		mopts = append(mopts, sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp, sdkmetric.WithTimeout(o.ExportTimeout))))
	}
	mp := sdkmetric.NewMeterProvider(mopts...)
	s.Config.MeterProvider = mp
	s.shutdowns = append(s.shutdowns, mp.Shutdown)
	otel.SetMeterProvider(mp)
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	return s, nil
}

// Shutdown exports what is left, waiting at most Options.ShutdownTimeout.
func (s *SDK) Shutdown() error {
	if len(s.shutdowns) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	var errs []error
	for _, f := range s.shutdowns {
		errs = append(errs, f(ctx))
	}
	return errors.Join(errs...)
}

// onceWriter writes the first export error as a warning and drops the
// others: a collector that is down fails every export.
type onceWriter struct {
	once sync.Once
	w    io.Writer
}

func (o *onceWriter) warn(err error) {
	o.once.Do(func() {
		fmt.Fprintf(o.w, "toolwire: warning: exporting telemetry failed (is the collector at OTEL_EXPORTER_OTLP_ENDPOINT up?); telemetry may be lost, and this is said once: %v\n", err)
	})
}

// boolVar reads a boolean variable: true, false or unset.
func boolVar(env func(string) string, name string) (bool, error) {
	switch v := strings.ToLower(strings.TrimSpace(env(name))); v {
	case "", "false":
		return false, nil
	case "true":
		return true, nil
	default:
		return false, fmt.Errorf("%s=%q: set it to true or false", name, env(name))
	}
}

// exporters reads OTEL_{signal}_EXPORTER: the exporters of a signal
// ("TRACES" or "METRICS"). Unset, it is otlp when an endpoint is set.
func exporters(env func(string) string, signal string) ([]string, error) {
	name := "OTEL_" + signal + "_EXPORTER"
	v := strings.TrimSpace(env(name))
	if v == "" {
		for _, e := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_" + signal + "_ENDPOINT"} {
			if env(e) != "" {
				if err := checkEndpoint(e, env(e)); err != nil {
					return nil, err
				}
				v = "otlp"
			}
		}
	}
	var out []string
	for _, e := range strings.Split(v, ",") {
		switch e = strings.TrimSpace(e); e {
		case "", "none":
		case "otlp", "console":
			out = append(out, e)
		default:
			return nil, fmt.Errorf("%s=%q: toolwire exports with otlp, console or none", name, v)
		}
	}
	if strings.Contains(v, "none") && len(out) > 0 {
		return nil, fmt.Errorf("%s=%q: none cannot go with other exporters", name, v)
	}
	return out, nil
}

// checkEndpoint checks an OTLP endpoint: a URL such as
// http://127.0.0.1:4318.
func checkEndpoint(name, v string) error {
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%s=%q: write the collector's URL, e.g. http://127.0.0.1:4318 (http/protobuf) or http://127.0.0.1:4317 (grpc)", name, v)
	}
	return nil
}

// protocol reads the OTLP protocol of a signal.
func protocol(env func(string) string, signal string) (string, error) {
	name := "OTEL_EXPORTER_OTLP_" + signal + "_PROTOCOL"
	v := env(name)
	if v == "" {
		name = "OTEL_EXPORTER_OTLP_PROTOCOL"
		v = env(name)
	}
	switch v {
	case "":
		return "http/protobuf", nil
	case "grpc", "http/protobuf":
		return v, nil
	}
	return "", fmt.Errorf("%s=%q: toolwire speaks grpc or http/protobuf", name, v)
}

// traceExporter makes the exporter name. The OTLP exporters read the
// endpoints, headers, TLS and timeout from the environment themselves.
func traceExporter(ctx context.Context, env func(string) string, name string, o Options) (sdktrace.SpanExporter, error) {
	if name == "console" {
		return stdouttrace.New(stdouttrace.WithWriter(o.Warn))
	}
	if err := checkEndpoints(env, "TRACES"); err != nil {
		return nil, err
	}
	proto, err := protocol(env, "TRACES")
	if err != nil {
		return nil, err
	}
	if proto == "grpc" {
		return otlptracegrpc.New(ctx)
	}
	return otlptracehttp.New(ctx)
}

func metricExporter(ctx context.Context, env func(string) string, name string, o Options) (sdkmetric.Exporter, error) {
	if name == "console" {
		return stdoutmetric.New(stdoutmetric.WithWriter(o.Warn))
	}
	if err := checkEndpoints(env, "METRICS"); err != nil {
		return nil, err
	}
	proto, err := protocol(env, "METRICS")
	if err != nil {
		return nil, err
	}
	if proto == "grpc" {
		return otlpmetricgrpc.New(ctx)
	}
	return otlpmetrichttp.New(ctx)
}

// checkEndpoints checks the OTLP endpoints of a signal that are set.
func checkEndpoints(env func(string) string, signal string) error {
	for _, name := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_" + signal + "_ENDPOINT"} {
		if v := env(name); v != "" {
			if err := checkEndpoint(name, v); err != nil {
				return err
			}
		}
	}
	return nil
}

// samplerFrom reads OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG
// (default: parentbased_always_on).
func samplerFrom(env func(string) string) (sdktrace.Sampler, error) {
	ratio := func() (float64, error) {
		arg := env("OTEL_TRACES_SAMPLER_ARG")
		if arg == "" {
			return 1, nil
		}
		r, err := strconv.ParseFloat(arg, 64)
		if err != nil || r < 0 || r > 1 {
			return 0, fmt.Errorf("OTEL_TRACES_SAMPLER_ARG=%q: write a ratio from 0 to 1, e.g. 0.25", arg)
		}
		return r, nil
	}
	switch v := strings.TrimSpace(env("OTEL_TRACES_SAMPLER")); v {
	case "", "parentbased_always_on":
		return sdktrace.ParentBased(sdktrace.AlwaysSample()), nil
	case "always_on":
		return sdktrace.AlwaysSample(), nil
	case "always_off":
		return sdktrace.NeverSample(), nil
	case "parentbased_always_off":
		return sdktrace.ParentBased(sdktrace.NeverSample()), nil
	case "traceidratio", "parentbased_traceidratio":
		r, err := ratio()
		if err != nil {
			return nil, err
		}
		if v == "traceidratio" {
			return sdktrace.TraceIDRatioBased(r), nil
		}
		return sdktrace.ParentBased(sdktrace.TraceIDRatioBased(r)), nil
	default:
		return nil, fmt.Errorf("OTEL_TRACES_SAMPLER=%q: use always_on, always_off, traceidratio or their parentbased_ forms", v)
	}
}

// resourceFrom is the resource of the spans and metrics: service.name
// (OTEL_SERVICE_NAME, else name) and OTEL_RESOURCE_ATTRIBUTES.
func resourceFrom(ctx context.Context, env func(string) string, name string) (*resource.Resource, error) {
	if name == "" {
		name = "toolwire"
	}
	attrs, err := resourceAttributes(env("OTEL_RESOURCE_ATTRIBUTES"))
	if err != nil {
		return nil, err
	}
	if svc := strings.TrimSpace(env("OTEL_SERVICE_NAME")); svc != "" {
		attrs = append(attrs, semconv.ServiceName(svc))
	} else if !hasKey(attrs, "service.name") {
		attrs = append(attrs, semconv.ServiceName(name))
	}
	return resource.New(ctx, resource.WithTelemetrySDK(), resource.WithAttributes(attrs...))
}

// resourceAttributes reads OTEL_RESOURCE_ATTRIBUTES: key=value pairs
// separated by commas, values percent-encoded.
func resourceAttributes(v string) ([]attribute.KeyValue, error) {
	var out []attribute.KeyValue
	for _, kv := range strings.Split(v, ",") {
		if strings.TrimSpace(kv) == "" {
			continue
		}
		k, val, ok := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		dec, err := url.PathUnescape(strings.TrimSpace(val))
		if !ok || k == "" || err != nil {
			return nil, fmt.Errorf("OTEL_RESOURCE_ATTRIBUTES: %q is not key=value: write pairs such as deployment.environment.name=dev,team=ml, separated by commas, with values percent-encoded", kv)
		}
		out = append(out, attribute.String(k, dec))
	}
	return out, nil
}

func hasKey(attrs []attribute.KeyValue, key string) bool {
	for _, kv := range attrs {
		if string(kv.Key) == key {
			return true
		}
	}
	return false
}
