package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/toolwire/toolwire/internal/testjaeger"
	"github.com/toolwire/toolwire/internal/testpeers"
	"github.com/toolwire/toolwire/mcp"
)

// TestTelemetryLegacyServer calls a tool of `toolwire serve` in another
// process, over stdio and over Streamable HTTP, from a client in this
// process that speaks the legacy era (2025-11-25, the initialize
// handshake), both sending their spans to one Jaeger, and reads back one
// trace per transport: the client's span under this test's, the server's
// span under the client's (the trace context crossed in params._meta),
// its tool's span under that, with the attributes of the era and the
// transport (mcp.session.id for the legacy HTTP session, network.transport
// pipe for stdio). The same with a gateway (`toolwire serve --http
// --servers`) as the legacy server, whose call to its upstream (modern)
// continues the trace.
func TestTelemetryLegacyServer(t *testing.T) {
	j := testjaeger.Start(t)
	metrics := newMetricsReceiver(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(j.OTLPHTTP+"/v1/traces"))
	if err != nil {
		t.Fatal(err)
	}
	const clientSvc = "legacy-client"
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp),
		sdktrace.WithResource(resource.NewSchemaless(semconv.ServiceName(clientSvc))))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	tel := mcp.Telemetry{TracerProvider: tp, Propagator: propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})}

	for _, transport := range []string{"stdio", "http", "gateway"} {
		t.Run(transport, func(t *testing.T) {
			srvSvc, upSvc := "legacy-serve-"+transport, "legacy-upstream"
			toolName := "calculate"
			env := otelEnv(j, metrics, srvSvc, false)
			var tr mcp.ClientTransport
			stderr := &syncBuffer{}
			defer func() {
				if t.Failed() {
					t.Logf("the stdio server's stderr: %s", stderr)
				}
			}()
			stop := func() {}
			switch transport {
			case "stdio":
				tr = &mcp.CommandTransport{Command: build(t), Args: []string{"serve"}, Env: env, Stderr: stderr}
			case "http":
				var addr string
				addr, stop = serveHTTPEnv(t, env)
				tr = &mcp.HTTPTransport{URL: "http://" + addr + "/mcp"}
			case "gateway":
				// A gateway's legacy session; its own call upstream is
				// modern.
				upAddr, stopUp := serveHTTPEnv(t, otelEnv(j, metrics, upSvc, false))
				everything := filepath.Join(testpeers.Package(t, "@modelcontextprotocol/server-everything"), "dist", "index.js")
				cfg := writeConfig(t, map[string]string{
					"remote":     fmt.Sprintf(`{"url": "http://%s/mcp"}`, upAddr),
					"everything": fmt.Sprintf(`{"command": %q, "args": [%q]}`, testpeers.Node(t), everything),
				})
				addr, stopGw := serveHTTPEnv(t, env, "--servers", "remote,everything", "--config", cfg, "--tool-search=off")
				stop = func() { stopGw(); stopUp() }
				tr = &mcp.HTTPTransport{URL: "http://" + addr + "/mcp"}
				toolName = "remote__calculate"
			}
			client := &mcp.Client{Info: mcp.Implementation{Name: "legacy-client", Version: "1"}, ProtocolVersion: mcp.Version20251125, Telemetry: tel}
			sess, err := client.Connect(ctx, tr)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = sess.Close() }() // on failure; closed below otherwise
			if v := sess.ProtocolVersion(); v != mcp.Version20251125 {
				t.Fatalf("the session speaks %s, want %s", v, mcp.Version20251125)
			}
			callCtx, span := tp.Tracer("test").Start(ctx, "legacy test "+transport)
			res, err := sess.CallTool(callCtx, toolName, json.RawMessage(`{"expression":"6*7"}`))
			if err != nil || res.IsError {
				t.Fatalf("calculate: %+v, %v", res, err)
			}
			if transport == "gateway" {
				// A prompt of the reference server (legacy, stdio) through
				// the gateway: no execute_tool span covers it, so the
				// gateway's client span is its own.
				var p mcp.GetPromptResult
				if err := sess.Call(callCtx, mcp.MethodPromptsGet, &mcp.GetPromptParams{Name: "everything__simple-prompt"}, &p); err != nil {
					t.Fatal(err)
				}
			}
			span.End()
			_ = sess.Close()
			stop() // flushes the HTTP server's spans (the stdio server's end with Close)

			want := [][2]string{{clientSvc, "legacy test " + transport}, {srvSvc, "execute_tool " + toolName}}
			traces := j.WaitTraces(t, clientSvc, 20*time.Second, func(ts []testjaeger.Trace) bool { return traceWith(ts, want...) != nil })
			x := indexSpans(traceWith(traces, want...))
			root := x.one(t, clientSvc, "legacy test "+transport)
			clientSpan := x.one(t, clientSvc, "tools/call "+toolName)
			served := x.one(t, srvSvc, "tools/call "+toolName)
			tool := x.one(t, srvSvc, "execute_tool "+toolName)
			netAttrs := map[string]string{"network.transport": "pipe"}
			if transport != "stdio" {
				netAttrs = map[string]string{"network.transport": "tcp", "network.protocol.name": "http"}
			}
			common := map[string]string{"mcp.method.name": "tools/call", "gen_ai.tool.name": toolName, "gen_ai.operation.name": "execute_tool",
				"mcp.protocol.version": mcp.Version20251125}
			checks := []spanCheck{
				{span: clientSpan, parent: &root, attrs: with(common, netAttrs, map[string]string{"span.kind": "client"}), has: []string{"jsonrpc.request.id"}},
				{span: served, parent: &clientSpan, attrs: with(common, netAttrs, map[string]string{"span.kind": "server"}), has: []string{"jsonrpc.request.id"}},
				{span: tool, parent: &served, attrs: map[string]string{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.type": "function"}},
			}
			if transport == "gateway" {
				upServer := x.one(t, upSvc, "tools/call calculate")
				checks[2].attrs = map[string]string{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.type": "extension",
					"mcp.method.name": "tools/call", "mcp.protocol.version": "2026-07-28"}
				checks = append(checks,
					spanCheck{span: upServer, parent: &tool, attrs: map[string]string{"span.kind": "server", "mcp.protocol.version": "2026-07-28"}},
					spanCheck{span: x.one(t, upSvc, "execute_tool calculate"), parent: &upServer})
				promptAsked := x.one(t, clientSvc, "prompts/get everything__simple-prompt")
				promptServed := x.one(t, srvSvc, "prompts/get everything__simple-prompt")
				checks = append(checks,
					spanCheck{span: promptAsked, parent: &root},
					spanCheck{span: promptServed, parent: &promptAsked, attrs: map[string]string{"span.kind": "server", "mcp.method.name": "prompts/get",
						"gen_ai.prompt.name": "everything__simple-prompt", "mcp.protocol.version": mcp.Version20251125}},
					spanCheck{span: x.one(t, srvSvc, "prompts/get simple-prompt"), parent: &promptServed, attrs: map[string]string{"span.kind": "client",
						"mcp.method.name": "prompts/get", "gen_ai.prompt.name": "simple-prompt", "mcp.protocol.version": mcp.Version20251125,
						"network.transport": "pipe"}, has: []string{"jsonrpc.request.id"}})
			}
			x.check(t, checks)
			// The legacy HTTP session's id is on both sides' spans, the
			// same; stdio has no session id.
			clientID, _ := clientSpan.Tag("mcp.session.id")
			servedID, _ := served.Tag("mcp.session.id")
			switch {
			case transport != "stdio" && (servedID == "" || clientID != servedID):
				t.Errorf("mcp.session.id: client %q, server %q, want the legacy session's on both", clientID, servedID)
			case transport == "stdio" && (servedID != "" || clientID != ""):
				t.Errorf("mcp.session.id over stdio: client %q, server %q, want none", clientID, servedID)
			}
			if v, ok := tool.Tag("mcp.session.id"); transport == "gateway" && ok {
				t.Errorf("the gateway's modern call upstream has mcp.session.id %q", v)
			}
			if _, counts := metrics.histograms(srvSvc, "mcp.method.name"); counts["mcp.server.operation.duration/tools/call"] != 1 {
				t.Errorf("%s exported %v, want one mcp.server.operation.duration of tools/call", srvSvc, counts)
			}
		})
	}
}
