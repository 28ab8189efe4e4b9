// Command gosdk is the benchmark peer server built on
// github.com/modelcontextprotocol/go-sdk. See bench/README.md.
package main

import (
	"context"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolwire/toolwire/bench/internal/serve"
	"github.com/toolwire/toolwire/bench/peers/gosdkpeer"
)

func main() {
	s := gosdkpeer.NewServer()
	serve.Main(
		func(ctx context.Context) error { return s.Run(ctx, &mcp.StdioTransport{}) },
		func() http.Handler {
			// Library defaults: stateful sessions (Mcp-Session-Id),
			// responses streamed as text/event-stream.
			return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
		},
	)
}
