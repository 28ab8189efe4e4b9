package host

import (
	"context"
	"fmt"
	"strings"

	"github.com/toolwire/toolwire/tool"
)

// Server returns the configuration of the named server; a name that is
// not configured is an error that lists the configured ones.
func (h *Host) Server(name string) (*ServerConfig, error) {
	if err := h.checkServers([]string{name}); err != nil {
		return nil, err
	}
	return h.Config.Servers[name], nil
}

func (h *Host) checkServers(servers []string) error {
	for _, n := range servers {
		if _, ok := h.Config.Servers[n]; !ok {
			msg := fmt.Sprintf("no server named %q in %s", n, h.Config.Path)
			if s := tool.Suggest(n, h.ServerNames()); len(s) > 0 {
				msg += fmt.Sprintf(" (did you mean %s?)", strings.Join(s, " or "))
			}
			return fmt.Errorf("%s; the servers are: %s", msg, strings.Join(h.ServerNames(), ", "))
		}
	}
	return nil
}

// owners returns the servers that can give an item of this host-wide
// name: the server whose prefix the name has (the longest such prefix),
// and every server configured without a prefix.
func (h *Host) owners(name string) []string {
	var best string
	var bare []string
	for _, n := range h.ServerNames() {
		p := h.Config.Servers[n].ToolPrefix()
		switch {
		case p == "":
			bare = append(bare, n)
		case strings.HasPrefix(name, p) && len(p) > len(h.prefixOf(best)):
			best = n
		}
	}
	if best == "" {
		return bare
	}
	return append([]string{best}, bare...)
}

func (h *Host) prefixOf(server string) string {
	if server == "" {
		return ""
	}
	return h.Config.Servers[server].ToolPrefix()
}

// NotFoundError is a name that no server gives.
type NotFoundError struct {
	// Kind is "tool" or "prompt".
	Kind string
	Name string
	// Suggestions are similar names that exist.
	Suggestions []string
	// Servers are the servers that were asked; none means the name's
	// prefix names no server.
	Servers []string
}

// Error names the kind and the name, and the similar names if any.
func (e *NotFoundError) Error() string {
	msg := fmt.Sprintf("no %s %q", e.Kind, e.Name)
	switch {
	case len(e.Servers) > 0:
	case !strings.Contains(e.Name, "__"):
		msg += " (the name lacks its server's prefix)"
	default:
		msg += " (its prefix names no configured server)"
	}
	if len(e.Suggestions) > 0 {
		msg += fmt.Sprintf("; did you mean %s?", strings.Join(e.Suggestions, " or "))
	}
	return msg
}

// Lookup finds a tool by its host-wide name ("server__tool"), connecting
// only to the server that can own it (and to servers without a prefix).
// When that server fails, its failure is the error. A name no server gives
// is a *NotFoundError with similar names.
func (h *Host) Lookup(ctx context.Context, name string) (tool.Tool, error) {
	owners := h.owners(name)
	tools, err := h.toolsOf(ctx, owners)
	for _, t := range tools {
		if t.Info().Name == name {
			return t, nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("cannot look up tool %q: %w", name, err)
	}
	var suggestions []string
	if len(owners) == 0 {
		prefix, rest, found := strings.Cut(name, "__")
		if found {
			for _, n := range tool.Suggest(prefix, h.ServerNames()) {
				suggestions = append(suggestions, h.prefixOf(n)+rest)
			}
		} else {
			rest = name
		}
		if len(suggestions) == 0 {
			suggestions = h.suggestUnprefixed(ctx, rest)
		}
	} else {
		names := make([]string, 0, len(tools))
		for _, t := range tools {
			names = append(names, t.Info().Name)
		}
		suggestions = tool.Suggest(name, names)
	}
	return nil, &NotFoundError{Kind: "tool", Name: name, Suggestions: suggestions, Servers: owners}
}

// suggestUnprefixed suggests the tools of every server whose names without
// their server's prefix are close to name: for a name given without its
// prefix ("read_file" for "files__read_file"). The servers that fail are
// left out.
func (h *Host) suggestUnprefixed(ctx context.Context, name string) []string {
	tools, _ := h.toolsOf(ctx, h.ServerNames())
	full := map[string][]string{}
	var bare []string
	for _, t := range tools {
		n := t.Info().Name
		b := strings.TrimPrefix(n, h.prefixOf(t.(*RemoteTool).Server()))
		if _, seen := full[b]; !seen {
			bare = append(bare, b)
		}
		full[b] = append(full[b], n)
	}
	var out []string
	if names, ok := full[name]; ok {
		out = names
	}
	for _, b := range tool.Suggest(name, bare) {
		out = append(out, full[b]...)
	}
	if len(out) > 3 {
		out = out[:3]
	}
	return out
}
