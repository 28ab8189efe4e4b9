// Package toolsets opens the built-in toolsets by name, as database/sql
// opens a database by driver name. A toolset registers itself when its
// package is imported (calc in the core module; data, on DuckDB, in a
// module of its own, imported by the programs that want it):
//
//	import _ "github.com/toolwire/toolwire/toolsets/calc"
//
//	ts, err := toolsets.Open(ctx, "calc", nil)
//	...
//	defer ts.Close()
//	reg.Add(ts.Tools()...)
//
// Each toolset takes options of a type of its own, which its package
// defines (data.Config for data); Open checks their type, so this package
// knows nothing of any toolset. A toolset holds what it opened (a
// database, a temporary directory) until it is closed.
package toolsets

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/toolwire/toolwire/tool"
)

// Toolset is an opened toolset: its tools, ready for a registry, an agent
// or an MCP server, and Close, which releases what it holds once its
// tools are no longer called.
type Toolset interface {
	Tools() []tool.Tool
	Close() error
}

// Register makes a toolset available by name to Open: open opens it with
// options of type O, which Open checks. A toolset's package calls it from
// its init function. Register panics if name is empty, if open is nil or
// if a toolset of that name is already registered: two packages claiming
// one name is a mistake in how the program was built, caught when it
// starts (as database/sql does).
func Register[O any](name string, open func(ctx context.Context, options O) (Toolset, error)) {
	registered.register(name, opener(open))
}

// Open opens the toolset registered as name with options, which must be
// of the type the toolset takes (see its package), or nil for the
// toolset's defaults. Close the toolset when done; closing it again does
// nothing and returns the first Close's error.
func Open(ctx context.Context, name string, options any) (Toolset, error) {
	return registered.open(ctx, name, options)
}

// Names returns the names of the registered toolsets, sorted.
func Names() []string {
	return registered.names()
}

// registered holds the toolsets the program's packages registered.
var registered registry

// openFunc opens a toolset with options of any type, checking it.
type openFunc func(ctx context.Context, options any) (Toolset, error)

// opener checks the options' type before calling open: nil stands for
// O's zero value.
func opener[O any](open func(context.Context, O) (Toolset, error)) openFunc {
	if open == nil { // for register to refuse
		return nil
	}
	return func(ctx context.Context, options any) (Toolset, error) {
		var o O
		if options != nil {
			var ok bool
			if o, ok = options.(O); !ok {
				return nil, fmt.Errorf("options of type %T: pass a %T, or nil for the defaults", options, o)
			}
		}
		return open(ctx, o)
	}
}

// registry maps names to the functions that open the toolsets.
type registry struct {
	mu    sync.RWMutex
	byKey map[string]openFunc
}

func (r *registry) register(name string, open openFunc) {
	if name == "" {
		panic("toolsets: Register with an empty name")
	}
	if open == nil {
		panic("toolsets: Register of toolset " + name + " with a nil open function")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.byKey[name]; dup {
		panic("toolsets: Register called twice for toolset " + name)
	}
	if r.byKey == nil {
		r.byKey = map[string]openFunc{}
	}
	r.byKey[name] = open
}

func (r *registry) open(ctx context.Context, name string, options any) (Toolset, error) {
	r.mu.RLock()
	open, ok := r.byKey[name]
	r.mu.RUnlock()
	if !ok {
		known := "none: import a toolset's package, e.g. github.com/toolwire/toolwire/toolsets/calc"
		if names := r.names(); len(names) > 0 {
			known = strings.Join(names, ", ")
		}
		return nil, fmt.Errorf("unknown toolset %q (toolsets: %s)", name, known)
	}
	ts, err := open(ctx, options)
	if err != nil {
		return nil, fmt.Errorf("toolset %s: %w", name, err)
	}
	return &closeOnce{Toolset: ts}, nil
}

func (r *registry) names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	names := make([]string, 0, len(r.byKey))
	for n := range r.byKey {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// closeOnce closes its toolset on the first Close only.
type closeOnce struct {
	Toolset
	once sync.Once
	err  error
}

func (c *closeOnce) Close() error {
	c.once.Do(func() { c.err = c.Toolset.Close() })
	return c.err
}
