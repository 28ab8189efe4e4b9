// Package testjaeger runs a real trace backend for tests: Jaeger
// all-in-one v1.76.0, built by scripts/install-jaeger.sh into
// .cache/bin/jaeger-all-in-one, on free loopback ports with in-memory
// storage. It takes OTLP over HTTP and gRPC, and Traces reads the traces
// back from its query API (/api/traces), as a person opening the trace
// would see them.
//
// Start skips the test where the binary is missing, and fails it instead
// under CI (see testpeers.Strict).
package testjaeger

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/testpeers"
)

// Server is a Jaeger process the test started.
type Server struct {
	// OTLPHTTP is the base URL of its OTLP/HTTP receiver, for
	// OTEL_EXPORTER_OTLP_ENDPOINT with http/protobuf; OTLPGRPC that of its
	// OTLP/gRPC receiver, with grpc.
	OTLPHTTP, OTLPGRPC string
	// QueryURL is the base URL of its query API and UI.
	QueryURL string
	http     *http.Client
}

// startAttempts bounds how often Start tries new ports when Jaeger cannot
// listen on the ones it picked.
const startAttempts = 3

// readyTimeout bounds the wait for Jaeger to be ready (about a second).
const readyTimeout = 30 * time.Second

// Binary returns the path of the Jaeger binary scripts/install-jaeger.sh
// builds, skipping the test (failing it under CI) when it is missing.
func Binary(t testing.TB) string {
	t.Helper()
	dir := testpeers.Root(t)
	bin := filepath.Join(dir, ".cache", "bin", "jaeger-all-in-one")
	if _, err := os.Stat(bin); err != nil {
		testpeers.Missing(t, "Jaeger all-in-one (.cache/bin/jaeger-all-in-one)", "run ./scripts/install-jaeger.sh (builds it in a few minutes)")
	}
	return bin
}

// Start starts Jaeger and stops it when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	bin := Binary(t)
	dir := t.TempDir()
	var lastErr error
	for attempt := range startAttempts {
		s, p, err := start(bin, dir, attempt)
		if err == nil {
			t.Cleanup(p.Stop)
			return s
		}
		lastErr = err
	}
	t.Fatalf("testjaeger: Jaeger did not start (%d attempts): %v", startAttempts, lastErr)
	return nil
}

// start runs Jaeger once on new ports and waits until it is ready; on
// failure it has stopped the process and says why, with its log's end.
func start(bin, dir string, attempt int) (*Server, *testpeers.Process, error) {
	ports, err := testpeers.FreePorts(7)
	if err != nil {
		return nil, nil, err
	}
	at := func(i int) string { return "127.0.0.1:" + strconv.Itoa(ports[i]) }
	s := &Server{OTLPHTTP: "http://" + at(0), OTLPGRPC: "http://" + at(1), QueryURL: "http://" + at(2), http: &http.Client{Timeout: 10 * time.Second}}
	logPath := filepath.Join(dir, "jaeger-"+strconv.Itoa(attempt)+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, nil, err
	}
	defer logFile.Close()
	// Every port on loopback: the all-in-one listens on all interfaces
	// by default.
	cmd := exec.Command(bin,
		"--collector.otlp.http.host-port="+at(0),
		"--collector.otlp.grpc.host-port="+at(1),
		"--query.http-server.host-port="+at(2),
		"--query.grpc-server.host-port="+at(3),
		"--admin.http.host-port="+at(4),
		"--collector.grpc-server.host-port="+at(5),
		"--collector.http-server.host-port="+at(6),
	)
	// Only what Jaeger needs from the environment: SPAN_STORAGE_TYPE or
	// an OTEL_* variable inherited from the test would change it.
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "SPAN_STORAGE_TYPE=memory"}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	p, err := testpeers.StartProcess(cmd)
	if err != nil {
		return nil, nil, fmt.Errorf("running %s: %w", bin, err)
	}
	if err := s.waitReady(p.Exited(), "http://"+at(4)+"/"); err != nil {
		p.Stop()
		return nil, nil, fmt.Errorf("%w; the end of its log:\n%s", err, testpeers.Tail(logPath, 2000))
	}
	return s, p, nil
}

// waitReady waits, at most readyTimeout, until Jaeger's health check and
// its query API answer.
func (s *Server) waitReady(exited <-chan struct{}, health string) error {
	deadline := time.Now().Add(readyTimeout)
	for _, u := range []string{health, s.QueryURL + "/api/services"} {
		for !s.ok(u) {
			select {
			case <-exited:
				return fmt.Errorf("jaeger exited before it was ready")
			case <-time.After(50 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%s did not answer 200 within %v", u, readyTimeout)
			}
		}
	}
	return nil
}

func (s *Server) ok(u string) bool {
	resp, err := s.http.Get(u)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// Trace is a trace as Jaeger's query API gives it.
type Trace struct {
	TraceID   string             `json:"traceID"`
	Spans     []Span             `json:"spans"`
	Processes map[string]Process `json:"processes"`
}

// Span is one span of a Trace.
type Span struct {
	TraceID       string      `json:"traceID"`
	SpanID        string      `json:"spanID"`
	OperationName string      `json:"operationName"`
	References    []Reference `json:"references"`
	Tags          []Tag       `json:"tags"`
	Logs          []struct {
		Fields []Tag `json:"fields"`
	} `json:"logs"`
	ProcessID string `json:"processID"`
}

// Reference links a span to another, its parent for CHILD_OF.
type Reference struct {
	RefType string `json:"refType"`
	TraceID string `json:"traceID"`
	SpanID  string `json:"spanID"`
}

// Tag is an attribute of a span or a process.
type Tag struct {
	Key   string `json:"key"`
	Type  string `json:"type"`
	Value any    `json:"value"`
}

// Process is the resource a span came from.
type Process struct {
	ServiceName string `json:"serviceName"`
	Tags        []Tag  `json:"tags"`
}

// Tag returns the value of the span's tag key (attributes, and Jaeger's
// span.kind, otel.status_code and error), as a string.
func (sp Span) Tag(key string) (string, bool) {
	for _, t := range sp.Tags {
		if t.Key == key {
			return fmt.Sprint(t.Value), true
		}
	}
	return "", false
}

// Parent returns the span id of the span's parent, or "" for a root.
func (sp Span) Parent() string {
	for _, r := range sp.References {
		if r.RefType == "CHILD_OF" {
			return r.SpanID
		}
	}
	return ""
}

// Traces returns the traces Jaeger holds of a service.
func (s *Server) Traces(ctx context.Context, service string) ([]Trace, error) {
	u := s.QueryURL + "/api/traces?limit=100&lookback=1h&service=" + url.QueryEscape(service)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := s.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var body struct {
		Data   []Trace `json:"data"`
		Errors []struct {
			Msg string `json:"msg"`
		} `json:"errors"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, fmt.Errorf("GET %s: %s: %w", u, resp.Status, err)
	}
	if resp.StatusCode != http.StatusOK || len(body.Errors) > 0 {
		return nil, fmt.Errorf("GET %s: %s %v", u, resp.Status, body.Errors)
	}
	return body.Data, nil
}

// Trace returns the trace of the given id.
func (s *Server) Trace(ctx context.Context, id string) (*Trace, error) {
	u := s.QueryURL + "/api/traces/" + url.PathEscape(id)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := s.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var body struct {
		Data []Trace `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != http.StatusOK || len(body.Data) != 1 {
		return nil, fmt.Errorf("GET %s: %s (%v)", u, resp.Status, err)
	}
	return &body.Data[0], nil
}

// WaitTraces polls Traces until done accepts what it returns, or fails the
// test after timeout: spans reach Jaeger's storage shortly after their
// export.
func (s *Server) WaitTraces(t testing.TB, service string, timeout time.Duration, done func([]Trace) bool) []Trace {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last []Trace
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		traces, err := s.Traces(ctx, service)
		cancel()
		if err == nil {
			last = traces
			if done(traces) {
				return traces
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("testjaeger: the traces of %s are not as expected after %v (last error %v); they are:\n%s", service, timeout, err, Describe(last))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Describe writes traces as a tree of span names, for a test's failure
// message.
func Describe(traces []Trace) string {
	var out string
	for _, tr := range traces {
		out += "trace " + tr.TraceID + "\n"
		byParent := map[string][]Span{}
		ids := map[string]bool{}
		for _, sp := range tr.Spans {
			ids[sp.SpanID] = true
		}
		for _, sp := range tr.Spans {
			p := sp.Parent()
			if !ids[p] {
				p = ""
			}
			byParent[p] = append(byParent[p], sp)
		}
		var walk func(parent, indent string)
		walk = func(parent, indent string) {
			for _, sp := range byParent[parent] {
				out += fmt.Sprintf("%s%s [%s]\n", indent, sp.OperationName, tr.Processes[sp.ProcessID].ServiceName)
				walk(sp.SpanID, indent+"  ")
			}
		}
		walk("", "  ")
	}
	return out
}
