package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/toolwire/toolwire/agent"
)

// searchOptions are the flags of tool search (agent.ToolSearch).
type searchOptions struct {
	mode     string
	maxTools int
	maxBytes int
	load     []string
}

func (o *searchOptions) flags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.mode, "tool-search", "auto", "send the model a search tool instead of every tool's schema: auto (beyond --tool-search-max-tools or --tool-search-max-bytes), on, off, or native (as auto, and the tools not found sent deferred where the provider's API can: Anthropic's defer_loading)")
	f.IntVar(&o.maxTools, "tool-search-max-tools", agent.DefaultSearchMaxTools, "with --tool-search=auto: search beyond this many tools")
	f.IntVar(&o.maxBytes, "tool-search-max-bytes", agent.DefaultSearchMaxSchemaBytes, "with --tool-search=auto: search beyond this many bytes of tool names, descriptions and schemas")
	f.StringSliceVar(&o.load, "tool-search-load", nil, "tools always sent when searching (repeatable; the tools the model finds are sent too)")
}

// config reads the flags.
func (o *searchOptions) config(cmd *cobra.Command) (agent.ToolSearch, error) {
	ts := agent.ToolSearch{MaxTools: o.maxTools, MaxSchemaBytes: o.maxBytes, Loaded: o.load}
	switch o.mode {
	case "auto":
	case "on":
		ts.Mode = agent.SearchOn
	case "off":
		ts.Mode = agent.SearchOff
	case "native":
		ts.Native = true
	default:
		return ts, &usageError{cmd: cmd, err: fmt.Errorf("--tool-search is auto, on, off or native, not %q", o.mode)}
	}
	if o.maxTools < 1 || o.maxBytes < 1 {
		return ts, &usageError{cmd: cmd, err: fmt.Errorf("--tool-search-max-tools and --tool-search-max-bytes must be at least 1 (use --tool-search=on to always search)")}
	}
	return ts, nil
}
