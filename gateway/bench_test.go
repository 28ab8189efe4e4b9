package gateway_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/toolwire/toolwire/host"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/tool"
)

// BenchmarkCall: a call of a small tool by a client in this process,
// directly over the in-memory transport (direct), and through a gateway
// in front of the same server (gateway, both hops in memory). The
// difference is what the gateway's own code costs per call, without the
// system calls of real pipes or sockets.
func BenchmarkCall(b *testing.B) {
	up := &mcp.Server{Info: mcp.Implementation{Name: "up", Version: "1"}}
	if err := up.AddTools(tool.NewFunc(tool.Info{Name: "add", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}`)},
		func(context.Context, json.RawMessage) (*tool.Result, error) { return tool.Text("5"), nil })); err != nil {
		b.Fatal(err)
	}
	noPrefix := ""
	srv := startGateway(b, map[string]*host.ServerConfig{"up": {Transport: &mcp.InMemoryTransport{Server: up}, Prefix: &noPrefix}}, "")
	args := json.RawMessage(`{"a":2,"b":3}`)
	for _, tc := range []struct {
		name string
		srv  *mcp.Server
	}{{"direct", up}, {"gateway", srv}} {
		b.Run(tc.name, func(b *testing.B) {
			sess := connect(b, tc.srv, &mcp.Client{}, "2025-11-25")
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := sess.CallTool(ctx, "add", args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
