package gateway_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/toolwire/toolwire/host"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/tool"
)

// TestResultServerInfo: a 2026-07-28 upstream's result names the upstream
// in its _meta; through the gateway, the client's result names the
// gateway (modern client) or no server (legacy client), and the tool's
// own _meta reaches the client.
func TestResultServerInfo(t *testing.T) {
	up := &mcp.Server{Info: mcp.Implementation{Name: "upstream", Version: "7"}}
	if err := up.AddTools(tool.NewFunc(tool.Info{Name: "m", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, json.RawMessage) (*tool.Result, error) {
			return &tool.Result{Content: []tool.Content{tool.TextContent("ok")}, Meta: map[string]any{"k": "v"}}, nil
		})); err != nil {
		t.Fatal(err)
	}
	noPrefix := ""
	srv := startGateway(t, map[string]*host.ServerConfig{"up": {Transport: &mcp.InMemoryTransport{Server: up}, Prefix: &noPrefix}}, mcp.Version20260728)
	for _, tc := range []struct {
		version string
		want    any // the server the result names
	}{
		{"2025-11-25", nil},
		{mcp.Version20260728, "gateway"},
	} {
		t.Run(tc.version, func(t *testing.T) {
			sess := connect(t, srv, &mcp.Client{}, tc.version)
			res, err := sess.CallTool(context.Background(), "m", json.RawMessage(`{}`))
			if err != nil {
				t.Fatal(err)
			}
			if res.Meta["k"] != "v" {
				t.Errorf("_meta %v: the tool's own k is lost", res.Meta)
			}
			var got any
			if info, ok := res.Meta[mcp.MetaServerInfo].(map[string]any); ok {
				got = info["name"]
			}
			if got != tc.want {
				t.Errorf("the result names server %v (_meta %v), want %v", got, res.Meta, tc.want)
			}
		})
	}
}
