package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/toolwire/toolwire/internal/jsonvalue"
)

// Registry maps tool names to tools and owns every call to them: it runs
// the argument pipeline, then its middleware, then the tool, recovering a
// tool's panic. The MCP server and an agent call tools through a Registry,
// so a tool behaves the same in both places.
//
// Tools are added one by one (Add) or as sources whose tools change over
// time, such as an MCP server's (SetSource). It is safe for concurrent
// use; the zero value is an empty registry ready to use.
type Registry struct {
	mu       sync.RWMutex
	entries  map[string]*entry
	order    []string            // names, sorted, for a deterministic listing
	sources  map[string][]string // a source's tool names
	gone     map[string]error    // why a removed source's tools are gone
	mws      []Middleware
	chain    Handler // mws around invoke; nil without middleware
	watchers []func()
	argFns   []ArgsFunc // see UseArgs
	// asks: see AskMissing.
	asks bool
	// lenient: see IgnoreUnknownArguments.
	lenient bool
	// tel: see SetTelemetry.
	tel atomic.Pointer[tracing]
}

// entry is one registered tool.
type entry struct {
	name   string
	tool   Tool
	pipe   *pipeline
	source string // "" for a tool added on its own
	span   spanInfo
}

// preparedCaller is a tool that can take the completed arguments decoded,
// as the pipeline leaves them, doing exactly what Call does with them
// encoded: the registry spares it the encoding (typed tools).
type preparedCaller interface {
	callPrepared(ctx context.Context, args map[string]any) (*Result, error)
}

// compile makes the entries of tools for source, checking their names.
func (r *Registry) compile(source string, tools []Tool) ([]*entry, error) {
	out := make([]*entry, len(tools))
	seen := make(map[string]bool, len(tools))
	for i, t := range tools {
		info := t.Info()
		if err := CheckName(info.Name); err != nil {
			return nil, fmt.Errorf("tool registry: %w", err)
		}
		if e, dup := r.entries[info.Name]; dup && e.source != source || seen[info.Name] || source == "" && dup {
			return nil, fmt.Errorf("tool registry: a tool named %q is already registered", info.Name)
		}
		seen[info.Name] = true
		p, err := newPipeline(info)
		if err != nil {
			return nil, fmt.Errorf("tool registry: %w", err)
		}
		out[i] = &entry{name: info.Name, tool: t, pipe: p, source: source, span: newSpanInfo(t, info, source)}
	}
	return out, nil
}

// Add registers tools. A name already registered, or one that model
// providers reject (see CheckName), is an error, and none of the tools of
// that call is added.
func (r *Registry) Add(tools ...Tool) error {
	r.mu.Lock()
	entries, err := r.compile("", tools)
	if err == nil {
		r.insert(entries)
	}
	r.mu.Unlock()
	if err == nil && len(tools) > 0 {
		r.changed()
	}
	return err
}

// insert adds entries and re-sorts the listing; r.mu is held.
func (r *Registry) insert(entries []*entry) {
	if r.entries == nil {
		r.entries = make(map[string]*entry, len(entries))
	}
	for _, e := range entries {
		if _, ok := r.entries[e.name]; !ok {
			r.order = append(r.order, e.name)
		}
		r.entries[e.name] = e
	}
	sort.Strings(r.order)
}

// drop removes the named entries from the map and the listing; r.mu is
// held.
func (r *Registry) drop(names []string) bool {
	removed := false
	for _, n := range names {
		if _, ok := r.entries[n]; ok {
			delete(r.entries, n)
			removed = true
		}
	}
	if removed {
		r.order = slices.DeleteFunc(r.order, func(n string) bool { _, ok := r.entries[n]; return !ok })
	}
	return removed
}

// Remove unregisters the named tools; it reports whether any was removed.
func (r *Registry) Remove(names ...string) bool {
	r.mu.Lock()
	removed := r.drop(names)
	r.mu.Unlock()
	if removed {
		r.changed()
	}
	return removed
}

// SetSource makes tools the tools of the named source (an MCP server, say),
// replacing those it had, in one step: a listing or a call sees the old
// set or the new one, never a mix. A name another source or Add already
// took is an error, and nothing changes.
func (r *Registry) SetSource(source string, tools []Tool) error {
	if source == "" {
		return fmt.Errorf("tool registry: a source needs a name")
	}
	r.mu.Lock()
	entries, err := r.compile(source, tools)
	if err == nil {
		r.drop(r.sources[source])
		r.insert(entries)
		names := make([]string, len(entries))
		for i, e := range entries {
			names[i] = e.name
			delete(r.gone, e.name)
		}
		if r.sources == nil {
			r.sources = map[string][]string{}
		}
		r.sources[source] = names
	}
	r.mu.Unlock()
	if err == nil {
		r.changed()
	}
	return err
}

// RemoveSource removes the tools of the named source. Until the source is
// set again, a call to one of them fails with an *UnknownToolError that
// says why, from why.
func (r *Registry) RemoveSource(source string, why error) {
	r.mu.Lock()
	names := r.sources[source]
	delete(r.sources, source)
	removed := r.drop(names)
	if why != nil {
		if r.gone == nil {
			r.gone = map[string]error{}
		}
		for _, n := range names {
			r.gone[n] = why
		}
	}
	r.mu.Unlock()
	if removed {
		r.changed()
	}
}

// OnChange registers f to be called after every change to the set of
// tools (Add, Remove, SetSource, RemoveSource), on the goroutine that made
// it. The MCP server uses it to tell clients that its tool list changed.
func (r *Registry) OnChange(f func()) {
	r.mu.Lock()
	r.watchers = append(r.watchers, f)
	r.mu.Unlock()
}

func (r *Registry) changed() {
	r.mu.RLock()
	ws := r.watchers
	r.mu.RUnlock()
	for _, f := range ws {
		f()
	}
}

// IgnoreUnknownArguments sets whether calls drop the top-level arguments
// a tool's schema refuses for not naming them, instead of failing (see
// Pipeline): on for a registry that serves hosts (the MCP server turns it
// on), off, the default, for one whose calls a model writes (an agent),
// where the model is told the known names and what it may have meant.
func (r *Registry) IgnoreUnknownArguments(on bool) {
	r.mu.Lock()
	r.lenient = on
	r.mu.Unlock()
}

// Use adds middleware: every call from now on runs through it, the first
// added outermost. Panic recovery is always the innermost layer.
func (r *Registry) Use(mw ...Middleware) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.mws = append(r.mws, mw...)
	h := Handler(r.invoke)
	for i := len(r.mws) - 1; i >= 0; i-- {
		h = r.mws[i](h)
	}
	r.chain = h
}

// Lookup returns the named tool.
func (r *Registry) Lookup(name string) (Tool, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	e, ok := r.entries[name]
	if !ok {
		return nil, false
	}
	return e.tool, true
}

// Tools returns the registered tools ordered by name.
func (r *Registry) Tools() []Tool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]Tool, len(r.order))
	for i, n := range r.order {
		out[i] = r.entries[n].tool
	}
	return out
}

// Len returns the number of registered tools.
func (r *Registry) Len() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.entries)
}

// Call calls the named tool with the model's arguments: the argument
// pipeline completes and checks them (parse, drop injected parameters the
// model sent, fill defaults, validate, add injected values), the
// middleware sees the call, and the tool runs.
//
// Errors a model can act on are an *ArgumentsError for bad arguments, an
// *UnknownToolError for an unknown name, a *PanicError for a tool that
// panicked, or the tool's own error; show them with ErrorResult. Fatal
// errors (see ErrFatal) end a run: an *InjectionError, and any error once
// ctx is done.
//
// When the registry asks for missing arguments (see AskMissing), a call
// that left out required ones may first ask the call's Client for them.
func (r *Registry) Call(ctx context.Context, name string, args json.RawMessage) (*Result, error) {
	t := r.tel.Load()
	if t == nil {
		// Not through traced: its frame (a span's locals) and the
		// closure's would deepen every call's stack by about a kilobyte,
		// past the 8 KiB a served HTTP request's goroutine keeps, which
		// then grows its stack on each call (TestCallStackDepth).
		return r.call(ctx, name, args, true)
	}
	return r.traced(ctx, t, name, func(ctx context.Context) (*Result, error) {
		return r.call(ctx, name, args, true)
	})
}

// call is Call; mayAsk is false for the call made again with the answers
// of the user asked for missing arguments.
func (r *Registry) call(ctx context.Context, name string, args json.RawMessage, mayAsk bool) (*Result, error) {
	r.mu.RLock()
	e, ok := r.entries[name]
	chain := r.chain
	argFns := r.argFns
	mayAsk = mayAsk && r.asks
	lenient := r.lenient
	var unknown *UnknownToolError
	if !ok {
		unknown = &UnknownToolError{Name: name, Suggestions: Suggest(name, r.order), Gone: r.gone[name]}
		if len(unknown.Suggestions) == 0 {
			unknown.Known = slices.Clone(r.order[:min(len(r.order), 10)])
		}
	}
	r.mu.RUnlock()
	if !ok {
		return nil, unknown
	}
	for _, f := range argFns {
		var err error
		if args, err = f(ctx, e.tool, args); err != nil {
			return nil, r.fatalIfDone(ctx, err)
		}
	}
	c := Call{Name: e.name, Tool: e.tool}
	if raw, ok := e.pipe.asWritten(args); ok {
		// Checked without decoding and complete as written: the tool gets
		// the arguments as the model wrote them ({} for none).
		c.args = args
		if jsonvalue.SkipSpace(raw, 1) == len(raw)-1 {
			c.args = noMembers
		}
	} else {
		m, dropped, err := e.pipe.prepare(ctx, args, lenient)
		if err != nil {
			if mayAsk {
				return r.askMissing(ctx, e, args, err)
			}
			return nil, r.fatalIfDone(ctx, err)
		}
		c.m = m
		switch {
		case e.pipe.changesNothing() && len(m) > 0 && !dropped:
			c.args = args // checked and complete as written
		case len(e.pipe.injected) > 0:
			// Injected values may be of any Go type: encode them now, so
			// that a value that is no JSON value fails here, clearly.
			b, err := jsonvalue.Append(nil, m)
			if err != nil {
				return nil, Fatal(fmt.Errorf("tool %s: encoding the completed arguments (injected values must be JSON values): %w", name, err))
			}
			c.args = b
		}
	}
	r.recordArguments(ctx, args)
	var res *Result
	var err error
	if chain == nil {
		res, err = r.invoke(ctx, &c)
	} else {
		mc := c // the middleware keeps a pointer: only this copy escapes
		res, err = chain(ctx, &mc)
	}
	if err != nil {
		err = r.fatalIfDone(ctx, err)
	}
	return res, err
}

// fatalIfDone makes err fatal when ctx is done: the call failed because
// its caller gave up, which no model can repair.
func (r *Registry) fatalIfDone(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return Fatal(err)
	}
	return err
}

// invoke is the innermost handler: it calls the tool, turning a panic into
// a *PanicError.
func (r *Registry) invoke(ctx context.Context, c *Call) (res *Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			res, err = nil, &PanicError{Tool: c.Name, Value: p, Stack: debug.Stack()}
		}
	}()
	if c.m != nil {
		if t, ok := c.Tool.(preparedCaller); ok {
			return t.callPrepared(ctx, c.m)
		}
	}
	return c.Tool.Call(ctx, c.Args())
}
