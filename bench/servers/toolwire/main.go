// Command toolwire is the benchmark server built on toolwire itself (the
// working tree, through the replace in bench/go.mod). See bench/README.md.
package main

import (
	"context"
	"net"
	"net/http"

	"github.com/toolwire/toolwire/http1"
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
		// toolwire's own HTTP/1.1 server, as `toolwire serve --http` uses.
		func(ctx context.Context, ln net.Listener, h http.Handler) error {
			srv := &http1.Server{Handler: h}
			context.AfterFunc(ctx, func() { srv.Close() })
			if err := srv.Serve(ln); err != http1.ErrServerClosed {
				return err
			}
			return nil
		},
	)
}
