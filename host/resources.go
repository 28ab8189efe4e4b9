package host

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/tool"
)

// ServerResource is a resource and the server that gives it.
type ServerResource struct {
	Server string `json:"server"`
	mcp.Resource
}

// ServerPrompt is a prompt under its host-wide name ("server__prompt", or
// as the server's prefix option says), with the server that gives it.
type ServerPrompt struct {
	Server string `json:"server"`
	mcp.Prompt
	// RemoteName is the prompt's name on its server.
	RemoteName string `json:"remoteName"`
}

// eachServer runs fn on a session with each named server (all when none
// are named), concurrently; servers that do not offer what has reports
// false for are skipped. Failures are a join of *ServerError.
func (h *Host) eachServer(ctx context.Context, servers []string, has func(mcp.ServerCapabilities) bool, fn func(ctx context.Context, s *server, sess *mcp.ClientSession) error) error {
	if len(servers) == 0 {
		servers = h.ServerNames()
	} else if err := h.checkServers(servers); err != nil {
		return err
	}
	errs := h.fanOut(servers, func(_ int, s *server) error {
		sess, err := s.connected(ctx)
		if err == nil && has(sess.ServerCapabilities()) {
			err = fn(ctx, s, sess)
		}
		return err
	})
	return errors.Join(errs...)
}

// Resources lists the resources of the named servers (all when none are
// named) that offer resources. Servers that fail are reported in the
// error (a join of *ServerError) while the others' resources are returned.
func (h *Host) Resources(ctx context.Context, servers ...string) ([]ServerResource, error) {
	var mu sync.Mutex
	var out []ServerResource
	err := h.eachServer(ctx, servers, func(c mcp.ServerCapabilities) bool { return c.Resources != nil },
		func(ctx context.Context, s *server, sess *mcp.ClientSession) error {
			list, err := sess.ListResources(ctx)
			if err != nil {
				return fmt.Errorf("%s: %w", mcp.MethodResourcesList, err)
			}
			mu.Lock()
			for _, r := range list {
				out = append(out, ServerResource{Server: s.cfg.Name, Resource: r})
			}
			mu.Unlock()
			return nil
		})
	return out, err
}

// ReadResource reads a resource. With serverName empty, it asks the server that
// lists the URI, else each server that offers resources until one has it
// (a URI from a resource template is listed by none).
func (h *Host) ReadResource(ctx context.Context, uri, serverName string) (*mcp.ReadResourceResult, error) {
	var servers []string
	if serverName != "" {
		servers = []string{serverName}
	} else if listed, _ := h.Resources(ctx); len(listed) > 0 {
		for _, r := range listed {
			if r.URI == uri {
				servers = []string{r.Server}
				break
			}
		}
	}
	var mu sync.Mutex
	var found *mcp.ReadResourceResult
	err := h.eachServer(ctx, servers, func(c mcp.ServerCapabilities) bool { return c.Resources != nil },
		func(ctx context.Context, s *server, sess *mcp.ClientSession) error {
			var res mcp.ReadResourceResult
			if err := sess.Call(ctx, mcp.MethodResourcesRead, &mcp.ReadResourceParams{URI: uri}, &res); err != nil {
				return fmt.Errorf("%s: %w", mcp.MethodResourcesRead, err)
			}
			mu.Lock()
			if found == nil {
				found = &res
			}
			mu.Unlock()
			return nil
		})
	if found != nil {
		return found, nil
	}
	if err == nil {
		return nil, fmt.Errorf("no server offers resources, so none has %s", uri)
	}
	return nil, fmt.Errorf("cannot read %s: %w", uri, err)
}

// Prompts lists the prompts of the named servers (all when none are named)
// under their host-wide names. Servers that fail are reported in the
// error (a join of *ServerError) while the others' prompts are returned.
func (h *Host) Prompts(ctx context.Context, servers ...string) ([]ServerPrompt, error) {
	var mu sync.Mutex
	var out []ServerPrompt
	err := h.eachServer(ctx, servers, func(c mcp.ServerCapabilities) bool { return c.Prompts != nil },
		func(ctx context.Context, s *server, sess *mcp.ClientSession) error {
			list, err := sess.ListPrompts(ctx)
			if err != nil {
				return fmt.Errorf("%s: %w", mcp.MethodPromptsList, err)
			}
			mu.Lock()
			for _, p := range list {
				sp := ServerPrompt{Server: s.cfg.Name, Prompt: p, RemoteName: p.Name}
				sp.Name = s.cfg.ToolPrefix() + p.Name
				out = append(out, sp)
			}
			mu.Unlock()
			return nil
		})
	return out, err
}

// GetPrompt renders a prompt, by its host-wide name, with its arguments,
// connecting only to the server that can own it. A name no server gives
// is a *NotFoundError with similar names.
func (h *Host) GetPrompt(ctx context.Context, name string, args map[string]string) (*mcp.GetPromptResult, error) {
	owners := h.owners(name)
	var prompts []ServerPrompt
	var err error
	if len(owners) > 0 { // else the name's prefix names no server
		prompts, err = h.Prompts(ctx, owners...)
	}
	for _, p := range prompts {
		if p.Name != name {
			continue
		}
		if err := promptArgs(p.Prompt, args); err != nil {
			return nil, err
		}
		s, err := h.server(p.Server)
		if err != nil {
			return nil, err
		}
		sess, err := s.connected(ctx)
		if err != nil {
			return nil, err
		}
		var res mcp.GetPromptResult
		if err := sess.Call(ctx, mcp.MethodPromptsGet, &mcp.GetPromptParams{Name: p.RemoteName, Arguments: args}, &res); err != nil {
			return nil, fmt.Errorf("server %q: %s %s: %w", p.Server, mcp.MethodPromptsGet, p.RemoteName, err)
		}
		return &res, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot look up prompt %q: %w", name, err)
	}
	names := make([]string, len(prompts))
	for i, p := range prompts {
		names[i] = p.Name
	}
	return nil, &NotFoundError{Kind: "prompt", Name: name, Suggestions: tool.Suggest(name, names), Servers: owners}
}

// promptArgs checks that a prompt's required arguments are given.
func promptArgs(p mcp.Prompt, args map[string]string) error {
	var missing []string
	for _, a := range p.Arguments {
		if _, ok := args[a.Name]; a.Required && !ok {
			missing = append(missing, a.Name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("prompt %s: missing required argument(s) %s", p.Name, strings.Join(missing, ", "))
	}
	return nil
}

// ServerResourceTemplate is a resource template and the server that gives
// it.
type ServerResourceTemplate struct {
	Server string `json:"server"`
	mcp.ResourceTemplate
}

// ResourceTemplates lists the resource templates of the named servers (all
// when none are named) that offer resources. Servers that fail are
// reported in the error (a join of *ServerError) while the others'
// templates are returned.
func (h *Host) ResourceTemplates(ctx context.Context, servers ...string) ([]ServerResourceTemplate, error) {
	var mu sync.Mutex
	var out []ServerResourceTemplate
	err := h.eachServer(ctx, servers, func(c mcp.ServerCapabilities) bool { return c.Resources != nil },
		func(ctx context.Context, s *server, sess *mcp.ClientSession) error {
			list, err := sess.ListResourceTemplates(ctx)
			if err != nil {
				return fmt.Errorf("%s: %w", mcp.MethodResourceTemplatesList, err)
			}
			mu.Lock()
			for _, t := range list {
				out = append(out, ServerResourceTemplate{Server: s.cfg.Name, ResourceTemplate: t})
			}
			mu.Unlock()
			return nil
		})
	return out, err
}
