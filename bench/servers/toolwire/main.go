// Command toolwire is the benchmark server built on toolwire itself (the
// working tree, through the replace in bench/go.mod). See bench/README.md.
package main

import (
	"net/http"

	"github.com/toolwire/toolwire/mcp"

	"github.com/toolwire/toolwire/bench/internal/serve"
	"github.com/toolwire/toolwire/bench/peers/toolwirepeer"
)

func main() {
	s := toolwirepeer.NewServer()
	serve.Main(
		s.ServeStdio,
		func() http.Handler {
			// Library defaults: legacy clients (like the driver) get a
			// session (Mcp-Session-Id); responses as the library decides.
			return &mcp.HTTPHandler{Server: s}
		},
	)
}
