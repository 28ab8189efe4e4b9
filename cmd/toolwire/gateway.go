package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/spf13/pflag"

	"github.com/toolwire/toolwire/agent"
	"github.com/toolwire/toolwire/gateway"
	"github.com/toolwire/toolwire/host"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/spill"
	"github.com/toolwire/toolwire/tool"
	"github.com/toolwire/toolwire/workflow"
)

// gatewayOptions are the flags that make serve a gateway to the
// configured MCP servers.
type gatewayOptions struct {
	servers []string // "all", or names
	record  string
	host    hostOptions // --config
	// Tool search: --tool-search, --tool-search-max-tools, --tool-search-load.
	search     string
	searchMax  int
	searchLoad []string

	// unrecorded names the tools whose calls --record leaves out: the
	// served workflows (--workflow), whose calls of the other tools it
	// records.
	unrecorded []string
}

func (o *gatewayOptions) addFlags(f *pflag.FlagSet) {
	f.StringSliceVar(&o.servers, "servers", nil, "serve the configured MCP servers too, as one server (a gateway): all, or names (comma-separated); tools are named server__tool, as toolwire tools lists them")
	f.StringVar(&o.host.config, "config", "", "with --servers: the configuration file (default $TOOLWIRE_CONFIG, ~/.config/toolwire/mcp.json, else another app's: see toolwire help config)")
	f.StringVar(&o.search, "tool-search", "auto", "with --servers: list a search tool instead of every tool: auto (beyond --tool-search-max-tools), on, or off; each client lists the tools it found, and calls any tool by name")
	f.IntVar(&o.searchMax, "tool-search-max-tools", agent.DefaultSearchMaxTools, "with --tool-search=auto: search beyond this many tools")
	f.StringSliceVar(&o.searchLoad, "tool-search-load", nil, "with --servers: tools always listed when searching (repeatable)")
	f.StringVar(&o.record, "record", "", "with --servers: write every tool call that succeeds through the server as a workflow to this file (rewritten after each call), to replay with toolwire workflow run")
}

// check refuses gateway flags that cannot work.
func (o gatewayOptions) check() error {
	if len(o.servers) == 0 {
		switch {
		case o.host.config != "":
			return errors.New("--config is for --servers: name the configured servers to serve (or all)")
		case o.record != "":
			return errors.New("--record is for --servers: it records the calls made through the gateway")
		}
		return nil
	}
	if o.search != "auto" && o.search != "on" && o.search != "off" {
		return fmt.Errorf("--tool-search is auto, on or off, not %q", o.search)
	}
	if o.searchMax < 1 {
		return fmt.Errorf("--tool-search-max-tools %d: use 1 or more (or --tool-search=on to always search)", o.searchMax)
	}
	if slices.Contains(o.servers, "all") && len(o.servers) > 1 {
		return fmt.Errorf("--servers %s: give all, or names, not both", strings.Join(o.servers, ","))
	}
	return nil
}

// openGateway makes srv a gateway to the configured servers --servers
// names, connects them, and returns what stops it. Servers that fail to
// start are reported on stderr and retried in the background.
func openGateway(ctx context.Context, o gatewayOptions, srv *mcp.Server, stderr io.Writer) (stop func(), err error) {
	cfg, err := o.host.loadConfig(stderr)
	if err != nil {
		return nil, err
	}
	if err := pickServers(cfg, o.servers); err != nil {
		return nil, err
	}
	store, err := tokenStore()
	if err != nil {
		return nil, err
	}
	h := &host.Host{Config: cfg}
	h.Client.Info.Name, h.Client.Info.Version = "toolwire", versionInfo().Version
	h.Tokens, h.LoginCommand = store, o.host.loginCommand()
	if o.host.g.verbose {
		h.Stderr = stderr
		h.Observe = eventLogger(stderr)
	}
	// Results over the budget are kept behind handles (res_…) the
	// client's model reads back or passes to any tool, each caller its
	// own; outermost, so that confirmation and recording see the call as
	// the tool gets it.
	results := &spill.Results{BudgetFor: func(c *tool.Call) int64 { return cfg.ResultBudget(c.Tool) }}
	if err := results.Install(srv.Registry()); err != nil {
		return nil, err
	}
	h.HideOutputSchemas = true // a result kept behind a handle has no structured content
	gw := gateway.New(h, srv)
	switch o.search {
	case "auto":
		err = gw.SearchTools(o.searchMax, o.searchLoad)
	case "on":
		err = gw.SearchTools(0, o.searchLoad)
	}
	if err != nil {
		return nil, err
	}
	if o.record != "" {
		srv.Registry().Use(recordTo(&workflow.Recorder{}, o.record, o.unrecorded, stderr))
	}
	ctx, cancel := context.WithCancel(ctx)
	if err := gw.Start(ctx); err != nil {
		fmt.Fprintln(stderr, "toolwire: some servers failed (retrying in the background):")
		for _, line := range strings.Split(err.Error(), "\n") {
			fmt.Fprintln(stderr, "  "+line)
		}
	}
	return func() { cancel(); h.Close() }, nil
}

// pickServers keeps in cfg the servers names names ("all": every one).
func pickServers(cfg *host.Config, names []string) error {
	if len(cfg.Servers) == 0 {
		return fmt.Errorf("config %s has no servers under \"mcpServers\" (see toolwire help config)", cfg.Path)
	}
	if slices.Contains(names, "all") {
		return nil
	}
	picked := map[string]*host.ServerConfig{}
	for _, n := range names {
		sc, ok := cfg.Servers[n]
		if !ok {
			have := make([]string, 0, len(cfg.Servers))
			for k := range cfg.Servers {
				have = append(have, k)
			}
			slices.Sort(have)
			return fmt.Errorf("--servers: no server named %q in %s (servers: %s)", n, cfg.Path, strings.Join(have, ", "))
		}
		picked[n] = sc
	}
	cfg.Servers = picked
	return nil
}

// recordTo is middleware that records the calls with rec and rewrites the
// workflow file after each call it kept, so that the file holds every
// call however the server ends; calls of the tools unrecorded names pass
// unrecorded.
func recordTo(rec *workflow.Recorder, path string, unrecorded []string, stderr io.Writer) tool.Middleware {
	record := rec.Middleware()
	name := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	var mu sync.Mutex // one writer of the file at a time
	return func(next tool.Handler) tool.Handler {
		recorded := record(next)
		return func(ctx context.Context, c *tool.Call) (*tool.Result, error) {
			if slices.Contains(unrecorded, c.Name) {
				return next(ctx, c)
			}
			before := rec.Len()
			res, err := recorded(ctx, c)
			if rec.Len() > before {
				mu.Lock()
				defer mu.Unlock()
				if werr := saveAtomic(rec.Workflow(name), path); werr != nil {
					fmt.Fprintf(stderr, "toolwire: --record: %v\n", werr)
				}
			}
			return res, err
		}
	}
}

// saveAtomic writes a workflow through a temporary file beside path, so
// that a reader never sees half of it.
func saveAtomic(wf *workflow.Workflow, path string) error {
	b, err := wf.Marshal()
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
