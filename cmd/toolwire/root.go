package main

import (
	"github.com/spf13/cobra"
)

// version is the toolwire version; release builds set it with -ldflags.
var version = "0.1.0-dev"

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "toolwire",
		Short: "Tools for LLMs, over function calling and MCP alike",
		Long: `toolwire serves tools to language models. A tool written once as a Go
function can be called in-process by an agent or served to any MCP client.

Start with:
  toolwire serve                        serve the built-in tools over stdio
  toolwire serve --http 127.0.0.1:8080  serve them over Streamable HTTP at /mcp
  toolwire tools                        list the tools of your MCP servers
  toolwire call SERVER__TOOL '{...}'    call one of them`,
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newServeCmd(), newToolsCmd(), newCallCmd())
	return root
}
