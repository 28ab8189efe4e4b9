// Command mcpgo is the benchmark peer server built on
// github.com/mark3labs/mcp-go. See bench/README.md.
package main

import (
	"context"
	"net/http"

	"github.com/mark3labs/mcp-go/server"

	"github.com/toolwire/toolwire/bench/internal/serve"
	"github.com/toolwire/toolwire/bench/peers/mcpgopeer"
)

func main() {
	s := mcpgopeer.NewServer()
	serve.Main(
		func(context.Context) error { return server.ServeStdio(s) },
		func() http.Handler {
			// Library defaults: the default session-ID manager issues an
			// Mcp-Session-Id on initialize without keeping server-side
			// session state; JSON or SSE responses as the library decides.
			return server.NewStreamableHTTPServer(s)
		},
	)
}
