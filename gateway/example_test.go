package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/toolwire/toolwire/gateway"
	"github.com/toolwire/toolwire/host"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/tool"
)

// A gateway in front of one server (here in memory; from a configuration
// file, host.LoadConfig): its tools are the gateway's, named
// server__tool, with the injected parameter hidden and filled.
func Example() {
	weather := &mcp.Server{Info: mcp.Implementation{Name: "weather", Version: "1"}}
	_ = weather.AddTools(tool.NewFunc(tool.Info{Name: "forecast", InputSchema: json.RawMessage(
		`{"type":"object","properties":{"city":{"type":"string"},"api_key":{"type":"string"}},"required":["city","api_key"]}`)},
		func(_ context.Context, args json.RawMessage) (*tool.Result, error) {
			return tool.Text(string(args)), nil
		}))

	h := &host.Host{Config: &host.Config{Path: "example", Servers: map[string]*host.ServerConfig{
		"weather": {Name: "weather", Transport: &mcp.InMemoryTransport{Server: weather},
			Inject: map[string]json.RawMessage{"api_key": json.RawMessage(`"k-123"`)}},
	}}}
	defer h.Close()
	srv := &mcp.Server{Info: mcp.Implementation{Name: "gateway", Version: "1"}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := gateway.New(h, srv).Start(ctx); err != nil {
		panic(err)
	}
	// srv.ServeStdio(ctx), or &mcp.HTTPHandler{Server: srv}, serves it; a
	// client in this process:
	sess, err := (&mcp.Client{Info: mcp.Implementation{Name: "client", Version: "1"}}).Connect(ctx, &mcp.InMemoryTransport{Server: srv})
	if err != nil {
		panic(err)
	}
	defer sess.Close()
	tools, _ := sess.ListTools(ctx)
	fmt.Println(tools[0].Name, string(tools[0].InputSchema))
	res, _ := sess.CallTool(ctx, "weather__forecast", json.RawMessage(`{"city":"Oslo"}`))
	fmt.Println(res.Content[0].Text)
	// Output:
	// weather__forecast {"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}
	// {"api_key":"k-123","city":"Oslo"}
}
