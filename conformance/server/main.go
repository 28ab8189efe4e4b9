// Command server serves the fixtures of the official MCP conformance suite
// (npm @modelcontextprotocol/conformance) over Streamable HTTP at /mcp:
//
//	go run ./conformance/server -addr 127.0.0.1:3001
//
// It is written with toolwire's public API only, and doubles as the fullest
// example of it: tools with every content type, progress, logging, sampling
// and elicitation in both protocol eras, resources, templates, prompts and
// completion.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"github.com/toolwire/toolwire/mcp"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:3001", "address to listen on")
	flag.Parse()
	if err := run(*addr); err != nil {
		fmt.Fprintln(os.Stderr, "conformance server:", err)
		os.Exit(1)
	}
}

func run(addr string) error {
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	srv, err := newServer(logger)
	if err != nil {
		return err
	}
	h := mcp.NewHTTPHandler(srv)
	defer h.Close()
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	fmt.Printf("LISTENING %s\n", ln.Addr())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return mcp.RunHTTPServer(ctx, mcp.NewHTTPServer(mux, nil), ln)
}
