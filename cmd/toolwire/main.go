// Command toolwire is the command-line host of the toolwire toolkit: it
// serves the built-in toolsets to any MCP client, and lists and calls the
// tools, resources and prompts of the MCP servers a user configures.
//
//	toolwire serve                       # stdio, for an MCP client to launch
//	toolwire serve --http 127.0.0.1:8080 # Streamable HTTP at /mcp
//	toolwire tools                       # the tools of the configured servers
//	toolwire call SERVER__TOOL '{...}'   # call one
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		if s, ok := (<-sigs).(syscall.Signal); ok {
			cancel(interrupted{s})
		}
	}()
	code := execute(ctx, os.Args[1:], os.Stderr)
	signal.Stop(sigs)
	os.Exit(code)
}

// interrupted is the cause of the command's context when a signal
// (SIGINT, SIGTERM) ended it.
type interrupted struct{ sig syscall.Signal }

func (i interrupted) Error() string { return i.sig.String() + " signal received" }

// Is makes an interruption read as a cancellation.
func (interrupted) Is(target error) bool { return target == context.Canceled }

// execute runs the command line and returns the exit status: 0, 1 for a
// failure, 2 for a mistake in the command line, 128+n for a command a
// signal n ended (130 for a Ctrl-C), as shells report it.
func execute(ctx context.Context, args []string, stderr io.Writer) int {
	code := executeArgs(ctx, args, stderr)
	var in interrupted
	if code != 0 && errors.As(context.Cause(ctx), &in) {
		return 128 + int(in.sig)
	}
	return code
}

func executeArgs(ctx context.Context, args []string, stderr io.Writer) int {
	var g globalOptions
	root := newRootCmd(&g)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code // the details are printed already
	}
	fmt.Fprintln(stderr, "toolwire:", err)
	var ue *usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(stderr, "\n%s", ue.cmd.UsageString())
		return 2
	}
	for _, h := range hints(err, g.verbose) {
		fmt.Fprintln(stderr, "toolwire: try:", h)
	}
	return 1
}
