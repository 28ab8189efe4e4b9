package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	colmetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	"google.golang.org/protobuf/proto"

	"github.com/toolwire/toolwire/internal/testjaeger"
	"github.com/toolwire/toolwire/internal/testpeers"
)

// The values the cross-process telemetry test looks for in what was
// exported.
const (
	otelArg      = "31337"          // in an argument the model writes
	otelInjected = "Chicago"        // a value the host injects (never sent to the model)
	otelToken    = "tok-SECRET-991" // an Authorization header the host sends
)

// metricsReceiver is an OTLP/HTTP metrics endpoint: it decodes each
// export (protobuf) and keeps it, with the raw bytes for a grep.
type metricsReceiver struct {
	*httptest.Server
	mu  sync.Mutex
	got []*colmetrics.ExportMetricsServiceRequest
	raw []byte
}

func newMetricsReceiver(t *testing.T) *metricsReceiver {
	r := &metricsReceiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, err := io.ReadAll(req.Body)
		var m colmetrics.ExportMetricsServiceRequest
		if err == nil {
			err = proto.Unmarshal(b, &m)
		}
		if err != nil || req.URL.Path != "/v1/metrics" {
			http.Error(w, fmt.Sprintf("cannot read %s: %v", req.URL.Path, err), http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		r.got = append(r.got, &m)
		r.raw = append(r.raw, b...)
		r.mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(nil)
	}))
	t.Cleanup(r.Close)
	return r
}

// histograms adds up, per metric name and the value of attribute key
// (e.g. gen_ai.token.type), the sums and counts of the histogram points
// service exported.
func (r *metricsReceiver) histograms(service, key string) (sums map[string]float64, counts map[string]uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	sums, counts = map[string]float64{}, map[string]uint64{}
	for _, req := range r.got {
		for _, rm := range req.ResourceMetrics {
			svc := ""
			for _, a := range rm.Resource.GetAttributes() {
				if a.Key == "service.name" {
					svc = a.Value.GetStringValue()
				}
			}
			if svc != service {
				continue
			}
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					for _, p := range m.GetHistogram().GetDataPoints() {
						k := m.Name
						for _, a := range p.Attributes {
							if a.Key == key {
								k += "/" + a.Value.GetStringValue()
							}
						}
						sums[k] += p.GetSum()
						counts[k] += p.Count
					}
				}
			}
		}
	}
	return sums, counts
}

// serveHTTPEnv runs `toolwire serve --http` on a free port with more
// environment and arguments, stopped with SIGTERM (so that it flushes its telemetry)
// when the returned function is called or the test ends.
func serveHTTPEnv(t *testing.T, env []string, args ...string) (addr string, stop func()) {
	t.Helper()
	cmd := exec.Command(build(t), append([]string{"serve", "--http", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			done := make(chan struct{})
			go func() { _ = cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				_ = cmd.Process.Kill()
				<-done
			}
		})
	}
	t.Cleanup(stop)
	line, err := bufio.NewReader(out).ReadString('\n')
	m := regexp.MustCompile(`http://([0-9.:]+)/mcp`).FindStringSubmatch(line)
	if err != nil || m == nil {
		t.Fatalf("serve printed %q (%v); stderr: %s", line, err, stderr)
	}
	return m[1], stop
}

// otelEnv is the environment that sends a process's traces to Jaeger and
// its metrics to the receiver, as service.
func otelEnv(j *testjaeger.Server, metrics *metricsReceiver, service string, capture bool) []string {
	return []string{
		"OTEL_SERVICE_NAME=" + service,
		"OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf",
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=" + j.OTLPHTTP + "/v1/traces",
		"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT=" + metrics.URL + "/v1/metrics",
		"OTEL_BSP_SCHEDULE_DELAY=100",
		fmt.Sprintf("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=%v", capture),
	}
}

// TestTelemetryAcrossProcesses runs `toolwire run` with a scripted model
// against `toolwire serve --http` in another process and the npm
// reference server over stdio, exporting traces to Jaeger and metrics to
// an OTLP receiver, then reads them back: the agent's span, its chat and
// execute_tool spans with the conventions' attributes, the remote
// server's tool span, the token and duration metrics; content only when
// opted in, and never an injected value or the Authorization header.
func TestTelemetryAcrossProcesses(t *testing.T) {
	node := testpeers.Node(t)
	everything := filepath.Join(testpeers.Package(t, "@modelcontextprotocol/server-everything"), "dist", "index.js")
	j := testjaeger.Start(t)
	for _, capture := range []bool{false, true} {
		t.Run(fmt.Sprintf("capture=%v", capture), func(t *testing.T) {
			metrics := newMetricsReceiver(t)
			runSvc, srvSvc := fmt.Sprintf("toolwire-run-%v", capture), fmt.Sprintf("toolwire-serve-%v", capture)
			addr, stopServer := serveHTTPEnv(t, otelEnv(j, metrics, srvSvc, capture))
			cfg := writeConfig(t, map[string]string{
				"remote":     fmt.Sprintf(`{"url": "http://%s/mcp", "headers": {"Authorization": "Bearer %s"}}`, addr, otelToken),
				"everything": fmt.Sprintf(`{"command": %q, "args": [%q], "inject": {"location": %q}}`, node, everything, otelInjected),
			})
			m := newScriptedModel(t,
				`{"id":"chatcmpl-1","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"remote__calculate","arguments":"{\"expression\":\"`+otelArg+`*2\"}"}}]}}]}
{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_2","type":"function","function":{"name":"everything__get-structured-content","arguments":"{}"}}]}}]}
{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":100,"completion_tokens":20}}`,
				`{"choices":[{"index":0,"delta":{"content":"It is 62674, and 36 degrees."}}]}
{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":200,"completion_tokens":12}}`,
			)
			env := append(otelEnv(j, metrics, runSvc, capture), "OPENAI_API_KEY=test-key", "OPENAI_BASE_URL="+m.URL+"/v1")
			r := runEnv(t, env, "", "run", "--config", cfg, "--toolsets=", "-m", "openai:test-model", "What is "+otelArg+"*2, and the weather?")
			if r.code != 0 {
				t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
			}
			if strings.Contains(r.stderr, "warning: exporting telemetry failed") {
				t.Errorf("run could not export: %s", r.stderr)
			}
			stopServer()

			// One trace from the agent to the remote server's tool: the MCP
			// client carries the trace context in params._meta, the server
			// parents its span on it.
			traces := j.WaitTraces(t, runSvc, 20*time.Second, func(ts []testjaeger.Trace) bool {
				return agentTrace(ts, srvSvc) != nil
			})
			tr := agentTrace(traces, srvSvc)
			spans := map[string][]testjaeger.Span{} // by service and name
			for _, sp := range tr.Spans {
				k := tr.Processes[sp.ProcessID].ServiceName + " " + sp.OperationName
				spans[k] = append(spans[k], sp)
			}
			one := func(service, name string) testjaeger.Span {
				t.Helper()
				if len(spans[service+" "+name]) != 1 {
					t.Fatalf("%d spans %q of %s, want 1:\n%s", len(spans[service+" "+name]), name, service, testjaeger.Describe([]testjaeger.Trace{*tr}))
				}
				return spans[service+" "+name][0]
			}
			root := one(runSvc, "invoke_agent toolwire")
			calc := one(runSvc, "execute_tool remote__calculate")
			weather := one(runSvc, "execute_tool everything__get-structured-content")
			served := one(srvSvc, "tools/call calculate")
			remote := one(srvSvc, "execute_tool calculate")
			chats := spans[runSvc+" chat test-model"]
			if len(chats) != 2 {
				t.Errorf("%d chat spans, want 2", len(chats))
			}
			parents := []struct {
				child, parent testjaeger.Span
			}{{calc, root}, {weather, root}, {served, calc}, {remote, served}}
			for _, sp := range chats {
				parents = append(parents, struct{ child, parent testjaeger.Span }{sp, root})
			}
			for _, p := range parents {
				if p.child.Parent() != p.parent.SpanID {
					t.Errorf("%s is not a child of %s:\n%s", p.child.OperationName, p.parent.OperationName, testjaeger.Describe([]testjaeger.Trace{*tr}))
				}
			}
			// The execute_tool span covers the MCP call: no client span of
			// its own (the conventions' "SHOULD NOT create a separate span").
			for k := range spans {
				if strings.HasPrefix(k, runSvc+" tools/call") {
					t.Errorf("the run has a span %q beside its execute_tool span", k)
				}
			}
			want := []struct {
				span  testjaeger.Span
				attrs map[string]string
			}{
				{root, map[string]string{"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "toolwire", "gen_ai.provider.name": "openai",
					"gen_ai.request.model": "test-model", "gen_ai.usage.input_tokens": "300", "gen_ai.usage.output_tokens": "32"}},
				{calc, map[string]string{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "remote__calculate",
					"gen_ai.tool.call.id": "call_1", "gen_ai.tool.type": "extension", "mcp.method.name": "tools/call"}},
				{weather, map[string]string{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "everything__get-structured-content",
					"gen_ai.tool.call.id": "call_2", "gen_ai.tool.type": "extension", "mcp.method.name": "tools/call", "network.transport": "pipe"}},
				{served, map[string]string{"mcp.method.name": "tools/call", "gen_ai.tool.name": "calculate", "span.kind": "server"}},
				{remote, map[string]string{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "calculate", "gen_ai.tool.type": "function"}},
			}
			for _, sp := range chats {
				want = append(want, struct {
					span  testjaeger.Span
					attrs map[string]string
				}{sp, map[string]string{"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "test-model",
					"server.address": "127.0.0.1", "span.kind": "client"}})
			}
			for _, w := range want {
				for k, v := range w.attrs {
					if got, _ := w.span.Tag(k); got != v {
						t.Errorf("%s: %s = %q, want %q", w.span.OperationName, k, got, v)
					}
				}
			}

			// Metrics: the run's token usage and two chat durations.
			sums, _ := metrics.histograms(runSvc, "gen_ai.token.type")
			_, counts := metrics.histograms(runSvc, "gen_ai.operation.name")
			if sums["gen_ai.client.token.usage/input"] != 300 || sums["gen_ai.client.token.usage/output"] != 32 {
				t.Errorf("token usage exported: %v, want input 300, output 32", sums)
			}
			if counts["gen_ai.client.operation.duration/chat"] != 2 {
				t.Errorf("chat durations exported: %v, want 2", counts)
			}

			// Content: the argument only when opted in; never the injected
			// value nor the token.
			exported, _ := json.Marshal(traces)
			metrics.mu.Lock()
			exported = append(exported, metrics.raw...)
			metrics.mu.Unlock()
			if got := strings.Contains(string(exported), otelArg); got != capture {
				t.Errorf("capture %v: the argument %s in the exported data: %v", capture, otelArg, got)
			}
			for _, secret := range []string{otelInjected, otelToken} {
				if strings.Contains(string(exported), secret) {
					t.Errorf("capture %v: %s is in the exported data", capture, secret)
				}
			}
		})
	}
}

// agentTrace returns the trace holding the agent's span and a span of
// service, or nil.
func agentTrace(traces []testjaeger.Trace, service string) *testjaeger.Trace {
	for i, tr := range traces {
		agent, remote := false, false
		for _, sp := range tr.Spans {
			agent = agent || sp.OperationName == "invoke_agent toolwire"
			remote = remote || tr.Processes[sp.ProcessID].ServiceName == service && sp.OperationName == "execute_tool calculate"
		}
		if agent && remote {
			return &traces[i]
		}
	}
	return nil
}
