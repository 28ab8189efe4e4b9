// Command toolwire is the command-line host of the toolwire toolkit: it
// serves the built-in toolsets to any MCP client, and (in later commands)
// connects to MCP servers and runs agents over their tools.
//
//	toolwire serve                       # stdio, for an MCP client to launch
//	toolwire serve --http 127.0.0.1:8080 # Streamable HTTP at /mcp
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := newRootCmd().ExecuteContext(ctx); err != nil {
		var ee *exitError
		if errors.As(err, &ee) {
			os.Exit(ee.code) // the details are printed already
		}
		fmt.Fprintln(os.Stderr, "toolwire:", err)
		os.Exit(1)
	}
}
