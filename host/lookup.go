package host

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/toolwire/toolwire/tool"
)

// ServerTools is Tools for the named servers only. A name that is not a
// configured server is an error that lists the configured ones.
func (h *Host) ServerTools(ctx context.Context, servers ...string) ([]tool.Tool, error) {
	if err := h.checkServers(servers); err != nil {
		return nil, err
	}
	return h.toolsOf(ctx, servers)
}

func (h *Host) checkServers(servers []string) error {
	for _, n := range servers {
		if _, ok := h.Config.Servers[n]; !ok {
			msg := fmt.Sprintf("no server named %q in %s", n, h.Config.Path)
			if s := Suggest(n, h.ServerNames()); len(s) > 0 {
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
	if len(e.Servers) == 0 {
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
		prefix, rest, _ := strings.Cut(name, "__")
		for _, n := range Suggest(prefix, h.ServerNames()) {
			suggestions = append(suggestions, h.prefixOf(n)+rest)
		}
	} else {
		names := make([]string, 0, len(tools))
		for _, t := range tools {
			names = append(names, t.Info().Name)
		}
		suggestions = Suggest(name, names)
	}
	return nil, &NotFoundError{Kind: "tool", Name: name, Suggestions: suggestions, Servers: owners}
}

// Suggest returns the names close to name (by edit distance, or sharing
// a long substring), closest first, at most three.
func Suggest(name string, names []string) []string {
	type cand struct {
		name string
		d    int
	}
	var cs []cand
	limit := max(2, len(name)/4)
	for _, n := range names {
		if n == name {
			continue
		}
		d := distance(strings.ToLower(name), strings.ToLower(n))
		if d <= limit || (len(name) >= 4 && strings.Contains(n, name)) {
			cs = append(cs, cand{n, d})
		}
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].d < cs[j].d || cs[i].d == cs[j].d && cs[i].name < cs[j].name })
	var out []string
	for i := 0; i < len(cs) && i < 3; i++ {
		out = append(out, cs[i].name)
	}
	return out
}

// distance is the Levenshtein distance between a and b, in bytes.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
