package otelsdk_test

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/otelsdk"
)

func envOf(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

// TestNothingSet: without OTEL_* variables that ask for an exporter, no
// SDK starts (a service name or content capture alone ask for none), and
// OTEL_SDK_DISABLED=true wins over an endpoint.
func TestNothingSet(t *testing.T) {
	for _, env := range []func(string) string{
		envOf(),
		envOf("OTEL_SERVICE_NAME", "x", "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true"),
		envOf("OTEL_TRACES_EXPORTER", "none", "OTEL_METRICS_EXPORTER", "none"),
		envOf("OTEL_SDK_DISABLED", "true", "OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318"),
	} {
		s, err := otelsdk.Start(context.Background(), otelsdk.Options{Getenv: env, Warn: &bytes.Buffer{}})
		if err != nil {
			t.Fatal(err)
		}
		if s.Config != nil {
			t.Errorf("an SDK started: %+v", s.Config)
		}
		if err := s.Shutdown(); err != nil {
			t.Error(err)
		}
	}
}

// TestInvalidValues: each invalid variable is an error that names it.
func TestInvalidValues(t *testing.T) {
	tests := []struct{ name, value string }{
		{"OTEL_SDK_DISABLED", "yes"},
		{"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "1"},
		{"OTEL_TRACES_EXPORTER", "zipkin"},
		{"OTEL_METRICS_EXPORTER", "prometheus"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT", "127.0.0.1:4318"},
		{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "ftp://x"},
		{"OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"},
		{"OTEL_TRACES_SAMPLER", "sometimes"},
		{"OTEL_TRACES_SAMPLER_ARG", "2"},
		{"OTEL_RESOURCE_ATTRIBUTES", "team"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := envOf("OTEL_TRACES_EXPORTER", "console", tt.name, tt.value)
			switch tt.name {
			case "OTEL_TRACES_EXPORTER":
				env = envOf(tt.name, tt.value)
			case "OTEL_TRACES_SAMPLER_ARG":
				env = envOf("OTEL_TRACES_EXPORTER", "console", "OTEL_TRACES_SAMPLER", "traceidratio", tt.name, tt.value)
			case "OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT":
				env = envOf("OTEL_TRACES_EXPORTER", "otlp", tt.name, tt.value)
			}
			_, err := otelsdk.Start(context.Background(), otelsdk.Options{Getenv: env, Warn: &bytes.Buffer{}})
			if err == nil || !strings.Contains(err.Error(), tt.name) {
				t.Errorf("%s=%q: error %v, want one naming the variable", tt.name, tt.value, err)
			}
		})
	}
}

// syncBuffer is a buffer the SDK's goroutines may write to.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// spans starts the SDK as the environment says and ends n spans, then
// shuts down; it returns how long the shutdown took and the warnings.
func spans(t *testing.T, n int, o otelsdk.Options) (time.Duration, string) {
	t.Helper()
	warn := &syncBuffer{}
	o.Getenv, o.Warn = os.Getenv, warn
	s, err := otelsdk.Start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	tr := s.Config.TracerProvider.Tracer("test")
	for range n {
		_, sp := tr.Start(context.Background(), "work")
		sp.End()
	}
	start := time.Now()
	_ = s.Shutdown()
	return time.Since(start), warn.String()
}

// TestUnreachableCollector: with nothing listening at the endpoint, the
// program ends at once and says so in one warning, not one per export.
func TestUnreachableCollector(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+addr)
	t.Setenv("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "10") // several exports
	took, warn := spans(t, 100, otelsdk.Options{ExportTimeout: time.Second})
	if took > 3*time.Second {
		t.Errorf("shutting down took %v", took)
	}
	if n := strings.Count(warn, "warning"); n != 1 {
		t.Errorf("%d warnings, want 1:\n%s", n, warn)
	}
}

// TestSlowCollector: a collector that never answers holds an export for
// at most ExportTimeout, not the exporter's own 10 s or the shutdown's.
func TestSlowCollector(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
	t.Setenv("OTEL_METRICS_EXPORTER", "none")
	took, warn := spans(t, 1, otelsdk.Options{ExportTimeout: 300 * time.Millisecond, ShutdownTimeout: 20 * time.Second})
	if took > 3*time.Second {
		t.Errorf("shutting down took %v, want about the export timeout (300ms)", took)
	}
	if !strings.Contains(warn, "warning") {
		t.Errorf("no warning of the failed export: %q", warn)
	}
}

// TestShutdownBound: the last flush gives up after ShutdownTimeout, even
// when an export would wait longer.
func TestShutdownBound(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
	t.Setenv("OTEL_METRICS_EXPORTER", "none")
	took, _ := spans(t, 1, otelsdk.Options{ExportTimeout: 15 * time.Second, ShutdownTimeout: 300 * time.Millisecond})
	if took > 3*time.Second {
		t.Errorf("shutting down took %v, want about 300ms", took)
	}
}

// TestCaptureContent: content is captured only when
// OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT is true.
func TestCaptureContent(t *testing.T) {
	for value, want := range map[string]bool{"": false, "false": false, "true": true, "TRUE": true} {
		env := envOf("OTEL_TRACES_EXPORTER", "console", "OTEL_METRICS_EXPORTER", "none", "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", value)
		s, err := otelsdk.Start(context.Background(), otelsdk.Options{Getenv: env, Warn: &bytes.Buffer{}})
		if err != nil {
			t.Fatal(err)
		}
		if s.Config == nil || s.Config.CaptureContent != want {
			t.Errorf("%q: config %+v, want CaptureContent %v", value, s.Config, want)
		}
		_ = s.Shutdown()
	}
}
