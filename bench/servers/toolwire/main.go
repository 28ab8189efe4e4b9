// Command toolwire is the benchmark server built on toolwire itself (the
// working tree, through the replace in bench/go.mod). See bench/README.md.
package main

import (
	"context"
	"net"
	"net/http"

	"github.com/toolwire/toolwire/mcp"

	"github.com/toolwire/toolwire/bench/internal/serve"
	"github.com/toolwire/toolwire/bench/peers/toolwirepeer"
)

func main() {
	s := toolwirepeer.NewServer()
	serve.MainWith(
		s.ServeStdio,
		func() http.Handler {
			// Library defaults: legacy clients (like the driver) get a
			// session (Mcp-Session-Id); responses as the library decides.
			return mcp.NewHTTPHandler(s)
		},
		// net/http, configured as `toolwire serve --http` does.
		func(ctx context.Context, ln net.Listener, h http.Handler) error {
			return mcp.RunHTTPServer(ctx, mcp.NewHTTPServer(h, nil), ln)
		},
	)
}
