package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/toolwire/toolwire/internal/jsonvalue"
)

// Registry maps tool names to tools. It is safe for concurrent use; the zero
// value is an empty registry ready to use.
type Registry struct {
	mu    sync.RWMutex
	tools map[string]Tool
	pipes map[string]*Pipeline
	order []string // names, sorted, for a deterministic listing
}

// piped is a tool that runs its own argument pipeline: its Call takes the
// model's arguments.
type piped interface {
	Pipeline() *Pipeline
}

// pipelineFor returns the pipeline a tool's calls go through: its own, or
// one compiled from its input schema (injecting what an Injector says).
func pipelineFor(t Tool) (*Pipeline, error) {
	if p, ok := t.(piped); ok {
		return p.Pipeline(), nil
	}
	var names []string
	var values map[string]any
	if inj, ok := t.(Injector); ok {
		names, values = inj.Injected()
	}
	info := t.Info()
	return NewPipeline(info.Name, info.InputSchema, names, values)
}

// Injector is implemented by tools with parameters the host fills (for
// example a remote MCP tool configured with "inject"): it names them, and
// gives the values it knows. Its Info must not show them to the model.
type Injector interface {
	Injected() (names []string, values map[string]any)
}

// Add registers tools. A name already registered, or an empty name, is an
// error, and none of the tools of that call is added.
func (r *Registry) Add(tools ...Tool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	seen := make(map[string]bool, len(tools))
	pipes := make([]*Pipeline, len(tools))
	for i, t := range tools {
		name := t.Info().Name
		if name == "" {
			return fmt.Errorf("tool registry: a tool has no name")
		}
		if _, dup := r.tools[name]; dup || seen[name] {
			return fmt.Errorf("tool registry: a tool named %q is already registered", name)
		}
		seen[name] = true
		p, err := pipelineFor(t)
		if err != nil {
			return fmt.Errorf("tool registry: %w", err)
		}
		pipes[i] = p
	}
	if r.tools == nil {
		r.tools = make(map[string]Tool, len(tools))
		r.pipes = make(map[string]*Pipeline, len(tools))
	}
	for i, t := range tools {
		name := t.Info().Name
		r.tools[name] = t
		r.pipes[name] = pipes[i]
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
			delete(r.pipes, n)
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

// Name returns the registered tool name spelled b, as the registry holds
// it: a name read from a request becomes a string without allocating.
func (r *Registry) Name(b []byte) (string, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	p, ok := r.pipes[string(b)]
	if !ok {
		return "", false
	}
	return p.tool, true
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

// UnknownToolError reports a call to a tool the registry does not have.
type UnknownToolError struct {
	Name  string
	Known []string
}

func (e *UnknownToolError) Error() string {
	return fmt.Sprintf("unknown tool %q (tools: %s)", e.Name, strings.Join(e.Known, ", "))
}

// Call calls the named tool with the model's arguments through the one
// argument pipeline: parse, drop and add injected parameters, fill
// defaults, validate, call. Bad arguments give an *ArgumentsError, an
// unknown name an *UnknownToolError; the tool's own failure is its error.
// Use ErrorResult to turn any of them into a result for the model.
func (r *Registry) Call(ctx context.Context, name string, args json.RawMessage) (*Result, error) {
	r.mu.RLock()
	t, ok := r.tools[name]
	p := r.pipes[name]
	var known []string
	if !ok {
		known = append(known, r.order...)
	}
	r.mu.RUnlock()
	if !ok {
		return nil, &UnknownToolError{Name: name, Known: known}
	}
	if _, ok := t.(piped); ok {
		return t.Call(ctx, args) // through p, its own pipeline
	}
	if raw, ok := p.asWritten(args); ok && jsonvalue.SkipSpace(raw, 1) < len(raw)-1 {
		// Checked without decoding and not empty: the tool gets the
		// arguments as written, as below; an empty object goes below to
		// be written {}.
		return t.Call(ctx, args)
	}
	m, err := p.Prepare(ctx, args)
	if err != nil {
		return nil, err
	}
	if p.changesNothing() && len(m) > 0 {
		// Checked and complete as written: spare the tool a re-encoding.
		return t.Call(ctx, args)
	}
	completed, err := jsonvalue.Append(nil, m)
	if err != nil {
		return nil, fmt.Errorf("tool %s: encoding the completed arguments: %w", name, err)
	}
	return t.Call(ctx, completed)
}
