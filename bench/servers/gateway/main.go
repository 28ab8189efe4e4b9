// Command gateway is toolwire's gateway (package gateway, as toolwire
// serve --servers runs it) in front of one upstream: the benchmark server
// program at -upstream-cmd over stdio, or the one at -upstream-url over
// Streamable HTTP. Its tools keep their names (no prefix), so the driver
// calls it as it calls the upstream. See BenchmarkGatewayPaired in
// bench/README.md.
package main

import (
	"context"
	"flag"
	"log"
	"net/http"

	"github.com/toolwire/toolwire/gateway"
	"github.com/toolwire/toolwire/host"
	"github.com/toolwire/toolwire/mcp"

	"github.com/toolwire/toolwire/bench/internal/serve"
)

func main() {
	upCmd := flag.String("upstream-cmd", "", "the upstream: a server program to run over stdio")
	upURL := flag.String("upstream-url", "", "the upstream: a Streamable HTTP endpoint")
	upEra := flag.String("upstream-version", "", "the protocol revision to speak to the upstream (default: the newest it speaks)")
	srv := &mcp.Server{Info: mcp.Implementation{Name: "gateway", Version: "bench"}}
	// start connects the upstream once the flags are parsed (serve.Main
	// parses them) and keeps it until ctx ends.
	start := func(ctx context.Context) {
		noPrefix := ""
		sc := &host.ServerConfig{Name: "up", Command: *upCmd, URL: *upURL, Prefix: &noPrefix}
		if *upURL != "" {
			sc.Type = "http"
		}
		h := &host.Host{Config: &host.Config{Servers: map[string]*host.ServerConfig{"up": sc}, Path: "bench"}}
		h.Client.ProtocolVersion = *upEra
		if err := gateway.New(h, srv).Start(ctx); err != nil {
			log.Fatal(err)
		}
	}
	serve.Main(
		func(ctx context.Context) error {
			start(ctx)
			return srv.ServeStdio(ctx)
		},
		func() http.Handler {
			start(context.Background())
			return &mcp.HTTPHandler{Server: srv}
		},
	)
}
