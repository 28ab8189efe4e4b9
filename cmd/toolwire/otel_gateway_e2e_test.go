package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/testjaeger"
	"github.com/toolwire/toolwire/internal/testpeers"
)

// spanIndex holds a trace's spans by "service name".
type spanIndex struct {
	tr    *testjaeger.Trace
	spans map[string][]testjaeger.Span
}

func indexSpans(tr *testjaeger.Trace) spanIndex {
	x := spanIndex{tr: tr, spans: map[string][]testjaeger.Span{}}
	for _, sp := range tr.Spans {
		k := tr.Processes[sp.ProcessID].ServiceName + " " + sp.OperationName
		x.spans[k] = append(x.spans[k], sp)
	}
	return x
}

// one returns the only span named name of service, failing the test when
// there is not exactly one.
func (x spanIndex) one(t *testing.T, service, name string) testjaeger.Span {
	t.Helper()
	if n := len(x.spans[service+" "+name]); n != 1 {
		t.Fatalf("%d spans %q of %s, want 1:\n%s", n, name, service, testjaeger.Describe([]testjaeger.Trace{*x.tr}))
	}
	return x.spans[service+" "+name][0]
}

// withPrefix lists the names of service's spans that begin with prefix.
func (x spanIndex) withPrefix(service, prefix string) []string {
	var out []string
	for k := range x.spans {
		if strings.HasPrefix(k, service+" "+prefix) {
			out = append(out, strings.TrimPrefix(k, service+" "))
		}
	}
	return out
}

// spanCheck is a span's expected parent and attributes.
type spanCheck struct {
	span   testjaeger.Span
	parent *testjaeger.Span // nil: not checked
	attrs  map[string]string
	has    []string // attributes that must be there, whatever their value
}

func (x spanIndex) check(t *testing.T, checks []spanCheck) {
	t.Helper()
	for _, c := range checks {
		if c.parent != nil && c.span.Parent() != c.parent.SpanID {
			t.Errorf("%s is not a child of %s:\n%s", c.span.OperationName, c.parent.OperationName, testjaeger.Describe([]testjaeger.Trace{*x.tr}))
		}
		for k, v := range c.attrs {
			if got, _ := c.span.Tag(k); got != v {
				t.Errorf("%s: %s = %q, want %q", c.span.OperationName, k, got, v)
			}
		}
		for _, k := range c.has {
			if got, ok := c.span.Tag(k); !ok || got == "" {
				t.Errorf("%s: no %s", c.span.OperationName, k)
			}
		}
	}
}

// with returns the attributes of all maps.
func with(maps ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range maps {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// traceWith returns the trace holding a span of each service and name,
// or nil.
func traceWith(traces []testjaeger.Trace, want ...[2]string) *testjaeger.Trace {
	for i, tr := range traces {
		x := indexSpans(&tr)
		found := true
		for _, w := range want {
			found = found && len(x.spans[w[0]+" "+w[1]]) > 0
		}
		if found {
			return &traces[i]
		}
	}
	return nil
}

// TestTelemetryThroughGateway runs `toolwire run` (scripted model) against
// a gateway (`toolwire serve --servers`) in another process, whose
// upstreams are a `toolwire serve --http` in a third and the npm
// reference server over stdio (a legacy-era server), all exporting to one
// Jaeger, and reads back one trace (the run reaching the gateway over
// HTTP, then over stdio): the run's execute_tool span, the
// gateway's server span under it and its execute_tool span (carrying the
// MCP client's attributes, of the upstream's era and transport: no client
// span beside it), the upstream's server span under that and its tool's
// span.
func TestTelemetryThroughGateway(t *testing.T) {
	j := testjaeger.Start(t)
	for _, transport := range []string{"http", "stdio"} {
		t.Run(transport, func(t *testing.T) { testTelemetryThroughGateway(t, j, transport) })
	}
}

// testTelemetryThroughGateway is TestTelemetryThroughGateway with the run
// reaching the gateway over transport (http or stdio).
func testTelemetryThroughGateway(t *testing.T, j *testjaeger.Server, transport string) {
	metrics := newMetricsReceiver(t)
	runSvc, gwSvc, upSvc := "toolwire-run-gw-"+transport, "toolwire-gateway-"+transport, "toolwire-upstream-"+transport
	upAddr, stopUp := serveHTTPEnv(t, otelEnv(j, metrics, upSvc, false))
	everything := filepath.Join(testpeers.Package(t, "@modelcontextprotocol/server-everything"), "dist", "index.js")
	gwCfg := writeConfig(t, map[string]string{
		"remote":     fmt.Sprintf(`{"url": "http://%s/mcp"}`, upAddr),
		"everything": fmt.Sprintf(`{"command": %q, "args": [%q]}`, testpeers.Node(t), everything),
	})
	gwArgs := []string{"--servers", "remote,everything", "--config", gwCfg, "--tool-search=off"}
	gwEnv := otelEnv(j, metrics, gwSvc, false)
	stopGw := func() {} // over stdio, the run stops the gateway
	// The run's MCP client attributes, and the gateway server's.
	runNet := map[string]string{"network.transport": "pipe"}
	gwNet := map[string]string{"network.transport": "pipe"}
	var gw string
	switch transport {
	case "http":
		var gwAddr string
		gwAddr, stopGw = serveHTTPEnv(t, gwEnv, gwArgs...)
		gw = fmt.Sprintf(`{"url": "http://%s/mcp"}`, gwAddr)
		runNet = map[string]string{"network.transport": "tcp", "server.address": "127.0.0.1"}
		gwNet = map[string]string{"network.transport": "tcp", "network.protocol.name": "http"}
	case "stdio":
		env := map[string]string{}
		for _, kv := range gwEnv {
			k, v, _ := strings.Cut(kv, "=")
			env[k] = v
		}
		b, err := json.Marshal(map[string]any{"command": build(t), "args": append([]string{"serve"}, gwArgs...), "env": env})
		if err != nil {
			t.Fatal(err)
		}
		gw = string(b)
	}
	cfg := writeConfig(t, map[string]string{"gw": gw})
	m := newScriptedModel(t,
		`{"id":"chatcmpl-1","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"gw__remote__calculate","arguments":"{\"expression\":\"6*7\"}"}}]}}]}
{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_2","type":"function","function":{"name":"gw__everything__echo","arguments":"{\"message\":\"hi\"}"}}]}}]}
{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":10,"completion_tokens":5}}`,
		`{"choices":[{"index":0,"delta":{"content":"42."}}]}
{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":20,"completion_tokens":2}}`,
	)
	env := append(otelEnv(j, metrics, runSvc, false), "OPENAI_API_KEY=test-key", "OPENAI_BASE_URL="+m.URL+"/v1")
	r := runEnv(t, env, "", "run", "--config", cfg, "--toolsets=", "-m", "openai:test-model", "What is 6*7?")
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if strings.Contains(r.stderr, "warning: exporting telemetry failed") {
		t.Errorf("run could not export: %s", r.stderr)
	}
	if !strings.Contains(r.stdout, "42") {
		t.Errorf("run printed %q, want the model's answer", r.stdout)
	}
	stopGw()
	stopUp()

	want := [][2]string{{runSvc, "invoke_agent toolwire"}, {gwSvc, "execute_tool remote__calculate"}, {upSvc, "execute_tool calculate"}}
	traces := j.WaitTraces(t, runSvc, 20*time.Second, func(ts []testjaeger.Trace) bool { return traceWith(ts, want...) != nil })
	x := indexSpans(traceWith(traces, want...))
	root := x.one(t, runSvc, "invoke_agent toolwire")
	runTool := x.one(t, runSvc, "execute_tool gw__remote__calculate")
	gwServer := x.one(t, gwSvc, "tools/call remote__calculate")
	gwTool := x.one(t, gwSvc, "execute_tool remote__calculate")
	runEcho := x.one(t, runSvc, "execute_tool gw__everything__echo")
	gwEchoServer := x.one(t, gwSvc, "tools/call everything__echo")
	gwEcho := x.one(t, gwSvc, "execute_tool everything__echo")
	upServer := x.one(t, upSvc, "tools/call calculate")
	upTool := x.one(t, upSvc, "execute_tool calculate")
	// The execute_tool spans cover the MCP calls: the gateway's only
	// tools/call span is its server's.
	for _, svc := range []string{runSvc, gwSvc} {
		if got := x.withPrefix(svc, "tools/call"); svc == runSvc && len(got) > 0 || svc == gwSvc && len(got) != 2 {
			t.Errorf("%s has tools/call spans %q beside its execute_tool span", svc, got)
		}
	}
	x.check(t, []spanCheck{
		{span: runTool, parent: &root, attrs: with(runNet, map[string]string{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "gw__remote__calculate",
			"gen_ai.tool.call.id": "call_1", "gen_ai.tool.type": "extension", "mcp.method.name": "tools/call",
			"mcp.protocol.version": "2026-07-28"}), has: []string{"jsonrpc.request.id"}},
		{span: gwServer, parent: &runTool, attrs: with(gwNet, map[string]string{"mcp.method.name": "tools/call", "gen_ai.tool.name": "remote__calculate",
			"gen_ai.operation.name": "execute_tool", "span.kind": "server", "mcp.protocol.version": "2026-07-28"}),
			has: []string{"jsonrpc.request.id"}},
		{span: gwTool, parent: &gwServer, attrs: map[string]string{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "remote__calculate",
			"gen_ai.tool.type": "extension", "mcp.method.name": "tools/call", "network.transport": "tcp", "server.address": "127.0.0.1",
			"mcp.protocol.version": "2026-07-28"}, has: []string{"server.port", "jsonrpc.request.id"}},
		{span: upServer, parent: &gwTool, attrs: map[string]string{"mcp.method.name": "tools/call", "gen_ai.tool.name": "calculate",
			"span.kind": "server", "mcp.protocol.version": "2026-07-28"}, has: []string{"jsonrpc.request.id"}},
		// The legacy-era upstream over stdio (the reference server speaks
		// 2025-11-25).
		{span: runEcho, parent: &root, attrs: map[string]string{"gen_ai.tool.name": "gw__everything__echo", "mcp.method.name": "tools/call"}},
		{span: gwEchoServer, parent: &runEcho, attrs: map[string]string{"mcp.method.name": "tools/call", "gen_ai.tool.name": "everything__echo", "span.kind": "server"}},
		{span: gwEcho, parent: &gwEchoServer, attrs: map[string]string{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "everything__echo",
			"gen_ai.tool.type": "extension", "mcp.method.name": "tools/call", "network.transport": "pipe", "mcp.protocol.version": "2025-11-25"},
			has: []string{"jsonrpc.request.id"}},
		{span: upTool, parent: &upServer, attrs: map[string]string{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "calculate",
			"gen_ai.tool.type": "function"}},
	})
	// The gateway measures both sides of the call.
	for _, name := range []string{"mcp.server.operation.duration", "mcp.client.operation.duration"} {
		if _, counts := metrics.histograms(gwSvc, "mcp.method.name"); counts[name+"/tools/call"] == 0 {
			t.Errorf("the gateway exported no %s of tools/call: %v", name, counts)
		}
	}
}
