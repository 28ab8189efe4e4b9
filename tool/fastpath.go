package tool

import "github.com/toolwire/toolwire/internal/fastpath"

func init() {
	fastpath.RegisteredName = func(r any, b []byte) (string, bool) { return r.(*Registry).registeredName(b) }
}

// registeredName returns the registered tool name spelled b, as the
// registry holds it: a name read from a request becomes a string without
// allocating (for package mcp, through fastpath.RegisteredName).
func (r *Registry) registeredName(b []byte) (string, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	e, ok := r.entries[string(b)]
	if !ok {
		return "", false
	}
	return e.name, true
}
