package tool

import (
	"fmt"
	"sort"
	"sync"
)

// Registry maps tool names to tools. It is safe for concurrent use; the zero
// value is an empty registry ready to use.
type Registry struct {
	mu    sync.RWMutex
	tools map[string]Tool
	order []string // names, sorted, for a deterministic listing
}

// Add registers tools. A name already registered, or an empty name, is an
// error, and none of the tools of that call is added.
func (r *Registry) Add(tools ...Tool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	seen := make(map[string]bool, len(tools))
	for _, t := range tools {
		name := t.Info().Name
		if name == "" {
			return fmt.Errorf("tool registry: a tool has no name")
		}
		if _, dup := r.tools[name]; dup || seen[name] {
			return fmt.Errorf("tool registry: a tool named %q is already registered", name)
		}
		seen[name] = true
	}
	if r.tools == nil {
		r.tools = make(map[string]Tool, len(tools))
	}
	for _, t := range tools {
		name := t.Info().Name
		r.tools[name] = t
		r.order = append(r.order, name)
	}
	sort.Strings(r.order)
	return nil
}

// Remove unregisters the named tools; it reports whether any was removed.
func (r *Registry) Remove(names ...string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	removed := false
	for _, n := range names {
		if _, ok := r.tools[n]; ok {
			delete(r.tools, n)
			removed = true
		}
	}
	if removed {
		kept := r.order[:0]
		for _, n := range r.order {
			if _, ok := r.tools[n]; ok {
				kept = append(kept, n)
			}
		}
		r.order = kept
	}
	return removed
}

// Lookup returns the named tool.
func (r *Registry) Lookup(name string) (Tool, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	t, ok := r.tools[name]
	return t, ok
}

// Tools returns the registered tools ordered by name.
func (r *Registry) Tools() []Tool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]Tool, len(r.order))
	for i, n := range r.order {
		out[i] = r.tools[n]
	}
	return out
}

// Len returns the number of registered tools.
func (r *Registry) Len() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.tools)
}
