// Command server serves the fixtures of the official MCP conformance suite
// (npm @modelcontextprotocol/conformance) over Streamable HTTP at /mcp:
//
//	go run ./conformance/server -addr 127.0.0.1:3001
//
// With -redis, its tasks (the Tasks extension) are kept in Redis, so that
// replicas behind a load balancer answer for each other's tasks, and
// -state-key-file gives them the one key that signs the requestState of
// multi round-trip requests (conformance/replicas.sh runs the tasks-*
// scenarios so).
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
	"time"

	"github.com/toolwire/toolwire/handle/redisstore"
	"github.com/toolwire/toolwire/mcp"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:3001", "address to listen on")
	redisAddr := flag.String("redis", "", "keep tasks in the Redis server at this address (host:port or redis:// URL), shared by replicas")
	keyFile := flag.String("state-key-file", "", "sign requestState with the key in this file (16 bytes or more), the same for every replica")
	flag.Parse()
	if err := run(*addr, *redisAddr, *keyFile); err != nil {
		fmt.Fprintln(os.Stderr, "conformance server:", err)
		os.Exit(1)
	}
}

func run(addr, redisAddr, keyFile string) error {
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	var key []byte
	if keyFile != "" {
		var err error
		if key, err = mcp.ReadStateKey(keyFile); err != nil {
			return fmt.Errorf("-state-key-file: %w", err)
		}
	}
	var tasks mcp.TaskStore
	if redisAddr != "" {
		store, err := redisstore.New(redisAddr, time.Hour)
		if err != nil {
			return fmt.Errorf("-redis: %w", err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err = store.Ping(ctx)
		cancel()
		if err != nil {
			return fmt.Errorf("-redis: %w", err)
		}
		tasks = store.Tasks()
	}
	srv, err := newServer(logger, tasks, key)
	if err != nil {
		return err
	}
	h := &mcp.HTTPHandler{Server: srv}
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
