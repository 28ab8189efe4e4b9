// Package gateway serves the MCP servers a host connects to as one MCP
// server: every tool, resource, resource template and prompt of every
// configured server, under the host's names ("server__tool"), to any MCP
// client, over whatever transports the mcp.Server serves (stdio,
// Streamable HTTP, HTTP+SSE), in both protocol eras.
//
// What the host does for its own agents it does for the gateway's clients:
// a server's include and exclude lists, its injected parameters (hidden
// from the schemas the clients see, filled before each call), restarting a
// stdio server that died, and the logins made with toolwire login. Tools a
// server's "confirm" list names ask the calling client's user first, by
// elicitation. List changes travel down (a server's list_changed becomes
// the gateway's), as do the progress and log messages of a call; a client
// that cancels a call, or goes away during it, cancels it on the server.
package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/toolwire/toolwire/host"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/tool"
)

// Gateway keeps an mcp.Server in step with the servers of a host. Make one
// with New.
type Gateway struct {
	host    *host.Host
	srv     *mcp.Server
	confirm map[string]string // host-wide tool name → its server

	mu sync.Mutex
	// What each server has registered on srv, by server name.
	resources map[string][]string
	templates map[string][]string
	prompts   map[string][]string
	// refresh signals (never blocking) that a server's resources or
	// prompts changed.
	refresh map[string]chan struct{}
}

// relistInterval is the least time between two listings of a server's
// resources and prompts that its list_changed notifications cause.
const relistInterval = 250 * time.Millisecond

// relistEvery is how often a server's resources and prompts are listed
// again without a notification: a 2026-07-28 server tells of changes only
// on a subscriptions/listen stream, which the host does not open.
const relistEvery = 30 * time.Second

// New makes srv a gateway to h's servers; call Start to connect them. It
// sets h.ServerNotify and asks h's servers for log messages of every
// level (srv passes on to each client those at or above the level it
// asked for), so call it before h connects to a server. The calls of tools
// a server's "confirm" list names ask the client's user first, by
// elicitation, and run only on accept; a client that cannot be asked is
// refused.
func New(h *host.Host, srv *mcp.Server) *Gateway {
	g := &Gateway{
		host: h, srv: srv, confirm: map[string]string{},
		resources: map[string][]string{}, templates: map[string][]string{}, prompts: map[string][]string{},
		refresh: map[string]chan struct{}{},
	}
	for _, name := range h.ServerNames() {
		for _, t := range h.Config.Servers[name].Confirmed() {
			g.confirm[t] = name
		}
		g.refresh[name] = make(chan struct{}, 1)
	}
	h.Client.LogLevel = mcp.LevelDebug
	h.Client.Elicitation = elicit
	h.ServerNotify = g.notified
	srv.Registry().Use(g.ask)
	return g
}

// elicit passes a server's question to the user of the client whose call
// it asks about. A 2026-07-28 server asks within the call (input_required),
// so ctx is the call's; a legacy server's request comes on its own, with
// no call to tie it to, and is refused.
func elicit(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	if p.Mode == "url" {
		return nil, fmt.Errorf("the gateway passes on form elicitation only, not mode %q", p.Mode)
	}
	res, err := tool.Elicit(ctx, &tool.Elicitation{Message: p.Message, Schema: p.RequestedSchema})
	if err != nil {
		return nil, err
	}
	return &mcp.ElicitResult{Action: res.Action, Content: res.Content}, nil
}

// notified hears a server's notifications: list changes of resources and
// prompts (tools are the registry's, kept by host.Sync), and updates of
// resources.
func (g *Gateway) notified(server, method string, params json.RawMessage) {
	switch method {
	case mcp.NotificationResourcesListChanged, mcp.NotificationPromptsListChanged:
		select {
		case g.refresh[server] <- struct{}{}:
		default:
		}
	case mcp.NotificationResourceUpdated:
		var p mcp.ResourceUpdatedParams
		if json.Unmarshal(params, &p) == nil && p.URI != "" {
			g.srv.NotifyResourceUpdated(p.URI)
		}
	}
}

// Start connects to every server of the host and returns once each has
// been tried, its tools, resources, resource templates and prompts
// registered on the gateway's server. The error joins a *host.ServerError
// for each server that failed; those are retried in the background. Until
// ctx ends, the gateway follows the servers' changes.
func (g *Gateway) Start(ctx context.Context) error {
	err := g.host.Sync(ctx, g.srv.Registry())
	var wg sync.WaitGroup
	for _, name := range g.host.ServerNames() {
		wg.Add(1)
		go g.follow(ctx, name, wg.Done)
	}
	wg.Wait()
	return err
}

// follow keeps a server's resources, templates and prompts on the
// gateway's server until ctx ends; tried is called after the first
// listing.
func (g *Gateway) follow(ctx context.Context, server string, tried func()) {
	for {
		g.list(ctx, server)
		if tried != nil {
			tried()
			tried = nil
		}
		listed := time.Now()
		select {
		case <-ctx.Done():
			return
		case <-g.refresh[server]:
		case <-time.After(relistEvery):
		}
		// A loop of notifications costs a listing per relistInterval.
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Until(listed.Add(relistInterval))):
		}
	}
}

// list registers a server's resources, templates and prompts, replacing
// those it had. A listing that fails keeps what was there.
func (g *Gateway) list(ctx context.Context, server string) {
	h, srv := g.host, g.srv
	if res, err := h.Resources(ctx, server); err == nil {
		g.replace(g.resources, server, uris(res), srv.RemoveResources, func(keep func(string) bool) {
			for _, r := range res {
				if keep(r.URI) {
					_ = srv.AddResource(r.Resource, g.reader(server)) // a URI another server gave first stays theirs
				}
			}
		})
	}
	if tmpls, err := h.ResourceTemplates(ctx, server); err == nil {
		names := make([]string, len(tmpls))
		for i, t := range tmpls {
			names[i] = t.URITemplate
		}
		g.replace(g.templates, server, names, srv.RemoveResourceTemplates, func(keep func(string) bool) {
			for _, t := range tmpls {
				if keep(t.URITemplate) {
					_ = srv.AddResourceTemplate(t.ResourceTemplate, g.reader(server))
				}
			}
		})
	}
	if prompts, err := h.Prompts(ctx, server); err == nil {
		names := make([]string, len(prompts))
		for i, p := range prompts {
			names[i] = p.Name
		}
		g.replace(g.prompts, server, names, srv.RemovePrompts, func(keep func(string) bool) {
			for _, p := range prompts {
				if keep(p.Name) {
					_ = srv.AddPrompt(p.Prompt, g.prompter(p.Name))
				}
			}
		})
	}
}

// replace makes names the server's entries in had: it removes those that
// went, and add registers those keep reports new.
func (g *Gateway) replace(had map[string][]string, server string, names []string, remove func(...string), add func(keep func(string) bool)) {
	g.mu.Lock()
	old := had[server]
	had[server] = names
	g.mu.Unlock()
	var gone []string
	for _, n := range old {
		if !slices.Contains(names, n) {
			gone = append(gone, n)
		}
	}
	if len(gone) > 0 {
		remove(gone...)
	}
	add(func(n string) bool { return !slices.Contains(old, n) })
}

func uris(res []host.ServerResource) []string {
	out := make([]string, len(res))
	for i, r := range res {
		out[i] = r.URI
	}
	return out
}

// reader reads a resource of a server.
func (g *Gateway) reader(server string) mcp.ResourceHandler {
	return func(ctx context.Context, uri string) ([]mcp.ResourceContents, error) {
		res, err := g.host.ReadResource(ctx, uri, server)
		if err != nil {
			return nil, err
		}
		return res.Contents, nil
	}
}

// prompter renders a prompt by its host-wide name.
func (g *Gateway) prompter(name string) mcp.PromptHandler {
	return func(ctx context.Context, args map[string]string) (*mcp.GetPromptResult, error) {
		res, err := g.host.GetPrompt(ctx, name, args)
		if err != nil {
			return nil, err
		}
		res.ResultBase = mcp.ResultBase{} // the gateway's era, not the server's
		return res, nil
	}
}

// confirmSchema is the form of a confirmation: nothing to fill, accept or
// decline.
var confirmSchema = json.RawMessage(`{"type":"object","properties":{}}`)

// maxShownArgs bounds the arguments a confirmation shows.
const maxShownArgs = 500

// ask is the gateway's registry middleware (New adds it) that asks the
// calling client's user, by elicitation, before a tool its server's
// "confirm" list names runs: the call goes on only when the user accepts.
// A decline is a tool error the model reads; a client that cannot be
// asked (no elicitation capability) gets a tool error saying so, and the
// tool does not run.
func (g *Gateway) ask(next tool.Handler) tool.Handler {
	return func(ctx context.Context, c *tool.Call) (*tool.Result, error) {
		server, ask := g.confirm[c.Name]
		if !ask {
			return next(ctx, c)
		}
		ans, err := tool.Elicit(ctx, &tool.Elicitation{
			Message: fmt.Sprintf("Allow the call of %s (server %s) with %s?", c.Name, server, shownArgs(c)),
			Schema:  confirmSchema,
		})
		switch {
		case errors.Is(err, errors.ErrUnsupported):
			return tool.Errorf("tool %s runs only once the user confirms it (it is in server %q's \"confirm\" list in %s), and this client cannot ask its user (it does not support elicitation): use a client that does, or remove the tool from \"confirm\"", c.Name, server, g.host.Config.Path), nil
		case err != nil:
			return nil, err // an answer to come (the modern era's input_required), or the client gone
		case ans.Action != tool.ActionAccept:
			return tool.Errorf("the user declined the call of %s", c.Name), nil
		}
		return next(ctx, c)
	}
}

// shownArgs is what a confirmation shows of a call's arguments: those the
// model gave, not the injected ones, bounded.
func shownArgs(c *tool.Call) string {
	var args map[string]any
	if json.Unmarshal(c.Args(), &args) != nil {
		return "its arguments"
	}
	for _, n := range c.Tool.Info().Injected {
		delete(args, n)
	}
	b, _ := json.Marshal(args) // decoded from JSON: encodes
	s := string(b)
	if len(s) > maxShownArgs {
		s = s[:maxShownArgs] + "…"
	}
	return strings.TrimSpace(s)
}
