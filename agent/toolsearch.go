package agent

import (
	"context"
	"encoding/json"
	"hash/maphash"
	"sync"

	"github.com/toolwire/toolwire/model"
	"github.com/toolwire/toolwire/tool"
	"github.com/toolwire/toolwire/toolsearch"
)

// SearchMode says when the agent does tool search.
type SearchMode string

// Search modes.
const (
	// SearchAuto (the zero value) searches when the tools exceed
	// ToolSearch's MaxTools or MaxSchemaBytes.
	SearchAuto SearchMode = ""
	SearchOn   SearchMode = "on"
	SearchOff  SearchMode = "off"
)

// Defaults of tool search's thresholds.
const (
	DefaultSearchMaxTools       = 40
	DefaultSearchMaxSchemaBytes = 32 << 10
	// historyLoaded bounds the tools a run loads at its start because the
	// history given to it called them.
	historyLoaded = 10
)

// SearchToolName is the name of the tool the model searches with.
const SearchToolName = toolsearch.ToolName

// ToolSearch configures tool search: when the registry offers many tools,
// the model is sent only a few of them and a search tool
// (SearchToolName) over all of them, by name, description and parameters
// (package toolsearch). The tools a search finds are sent, callable, from
// the next request of the run on, with nothing restarted. The tools
// loaded at the start of a run are Loaded and those the history given to
// Run called last.
//
// A call of an existing tool the model was not sent is not run: its
// result is an error saying so, and the tool is sent from the next
// request on, so the model calls it again knowing its parameters. A
// misspelled name gets the registry's "did you mean" error. A tool of the
// registry named SearchToolName is hidden while tool search is on.
type ToolSearch struct {
	Mode SearchMode
	// MaxTools and MaxSchemaBytes are the thresholds of SearchAuto: tool
	// search starts when the registry has more tools, or their names,
	// descriptions and input schemas together take more bytes (defaults
	// DefaultSearchMaxTools and DefaultSearchMaxSchemaBytes).
	MaxTools       int
	MaxSchemaBytes int
	// Loaded names the tools always sent.
	Loaded []string
	// Results is how many tools a search returns (default
	// toolsearch.DefaultResults); the model may ask for up to
	// toolsearch.MaxResults.
	Results int
	// Native, when the model is a model.Deferrer that defers tools, sends
	// it every tool, the ones not loaded marked deferred, and the
	// search's results as references its API expands (Anthropic's
	// defer_loading and tool_reference): the model's context holds only
	// the tools it found, while the request's list of tools, and so its
	// prompt cache, stays the same. The search is still toolwire's.
	Native bool
}

// searchRun is the tool search state of one run.
type searchRun struct {
	a      *Agent
	native bool
	mu     sync.Mutex
	active bool // this turn's request offered the search tool
	// loaded are the tools sent, in the order they were loaded; preloaded
	// those loaded before the run (never deferred).
	loaded    []string
	isLoaded  map[string]bool
	preloaded map[string]bool
	// The index over all the registry's tools, and the hash of what it
	// was made from.
	ix    *toolsearch.Index
	ixSum uint64
	seed  maphash.Seed
}

type searchKey struct{}

// newSearchRun starts the tool search state of a run: nil when tool
// search is off.
func (a *Agent) newSearchRun(history []model.Message) *searchRun {
	if a.Tools == nil || a.ToolSearch.Mode == SearchOff {
		return nil
	}
	s := &searchRun{a: a, isLoaded: map[string]bool{}, preloaded: map[string]bool{}, seed: maphash.MakeSeed()}
	if d, ok := a.Model.(model.Deferrer); ok && a.ToolSearch.Native && d.DefersTools() {
		s.native = true
	}
	for _, n := range a.ToolSearch.Loaded {
		s.load(n)
	}
	used := 0
	for i := len(history) - 1; i >= 0 && used < historyLoaded; i-- {
		for _, c := range history[i].ToolCalls {
			if _, ok := a.Tools.Lookup(c.Name); ok && !s.isLoaded[c.Name] && used < historyLoaded {
				s.load(c.Name)
				used++
			}
		}
	}
	// Tools loaded from the start are sent undeferred, but for those a
	// result of the history references: the reference loads them, and
	// must name a deferred tool.
	referenced := map[string]bool{}
	for _, m := range history {
		for _, r := range m.ToolResults {
			for _, n := range r.ToolRefs {
				referenced[n] = true
			}
		}
	}
	for _, n := range s.loaded {
		s.preloaded[n] = !s.native || !referenced[n]
	}
	return s
}

// load adds a tool to those sent; s.mu is held or s not yet shared.
func (s *searchRun) load(name string) {
	if !s.isLoaded[name] {
		s.isLoaded[name] = true
		s.loaded = append(s.loaded, name)
	}
}

// offered describes the tools to send with the next request.
func (a *Agent) offered(s *searchRun) []model.ToolSpec {
	if s == nil {
		return a.toolSpecs()
	}
	return s.specs()
}

// searchRunOf returns the run's tool search state, if any.
func searchRunOf(ctx context.Context) *searchRun {
	s, _ := ctx.Value(searchKey{}).(*searchRun)
	return s
}

// specs describes the tools to send with the next request: all of them,
// or, when tool search is on or the tools exceed a threshold, the search
// tool and the loaded tools (with the others deferred when native).
func (s *searchRun) specs() []model.ToolSpec {
	tools := s.a.Tools.Tools()
	all := make([]model.ToolSpec, len(tools))
	size := 0
	for i, t := range tools {
		info := t.Info()
		all[i] = model.ToolSpec{Name: info.Name, Description: info.Description, Parameters: info.InputSchema}
		size += len(info.Name) + len(info.Description) + len(info.InputSchema)
	}
	ts := s.a.ToolSearch
	active := ts.Mode == SearchOn ||
		len(tools) > orDefault(ts.MaxTools, DefaultSearchMaxTools) || size > orDefault(ts.MaxSchemaBytes, DefaultSearchMaxSchemaBytes)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.active = active
	if !active {
		return all
	}
	info := toolsearch.ToolInfo(s.index(), s.a.ToolSearch.Results)
	out := []model.ToolSpec{{Name: info.Name, Description: info.Description, Parameters: info.InputSchema}}
	if s.native {
		for _, sp := range all {
			if sp.Name != SearchToolName {
				sp.Deferred = !s.preloaded[sp.Name]
				out = append(out, sp)
			}
		}
		return out
	}
	byName := make(map[string]int, len(all))
	for i, sp := range all {
		byName[sp.Name] = i
	}
	for _, n := range s.loaded {
		if i, ok := byName[n]; ok && n != SearchToolName {
			out = append(out, all[i])
		}
	}
	return out
}

// intercept handles a call that tool search answers: the search itself,
// and a call of a tool that exists but was not sent. ok is false for the
// calls the registry runs.
func (s *searchRun) intercept(ctx context.Context, call model.ToolCall) (res *tool.Result, refs []string, ok bool) {
	if s == nil || call.Invalid != "" {
		return nil, nil, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.active {
		return nil, nil, false
	}
	if call.Name == SearchToolName {
		res, refs = s.search(ctx, call.Arguments)
		return res, refs, true
	}
	if _, exists := s.a.Tools.Lookup(call.Name); !exists || s.isLoaded[call.Name] {
		return nil, nil, false
	}
	s.load(call.Name)
	return tool.Errorf("tool %s was not loaded, so the call did not run. It is loaded now: read its parameters and call it again (%s finds other tools).", call.Name, SearchToolName), nil, true
}

// search runs a search and loads the tools it finds; s.mu is held. refs
// are the tools found that a native model is to be sent references of.
func (s *searchRun) search(ctx context.Context, args json.RawMessage) (*tool.Result, []string) {
	var refs []string
	t := toolsearch.NewTool(s.index, s.a.ToolSearch.Results, func(_ context.Context, hits []toolsearch.Hit) {
		for _, h := range hits {
			s.load(h.Name)
			if s.native && !s.preloaded[h.Name] {
				refs = append(refs, h.Name)
			}
		}
	})
	res, err := t.Call(ctx, args)
	if err != nil {
		res = tool.ErrorResult(err)
	}
	return res, refs
}

// index returns the index over the registry's tools, made again when
// they changed; s.mu is held.
func (s *searchRun) index() *toolsearch.Index {
	tools := s.a.Tools.Tools()
	infos := make([]tool.Info, len(tools))
	var h maphash.Hash
	h.SetSeed(s.seed)
	for i, t := range tools {
		infos[i] = t.Info()
		h.WriteString(infos[i].Name)
		h.WriteByte(0)
		h.WriteString(infos[i].Title)
		h.WriteByte(0)
		h.WriteString(infos[i].Description)
		h.WriteByte(0)
		h.Write(infos[i].InputSchema)
		h.WriteByte(0)
	}
	if sum := h.Sum64(); s.ix == nil || sum != s.ixSum {
		s.ix, s.ixSum = toolsearch.New(infos), sum
	}
	return s.ix
}
