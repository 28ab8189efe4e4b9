package gateway

import (
	"context"
	"slices"
	"sync"

	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/tool"
	"github.com/toolwire/toolwire/toolsearch"
)

// maxSearchCallers bounds the callers whose found tools a search
// remembers; past it, every caller starts again from the tools always
// shown (and finds the others again by searching).
const maxSearchCallers = 10_000

// search is the gateway's tool search (see SearchTools).
type search struct {
	srv      *mcp.Server
	maxTools int
	always   []string

	mu     sync.Mutex
	ix     *toolsearch.Index
	stale  bool
	loaded map[string]map[string]bool // caller ID → tools it found
}

// SearchTools makes the gateway offer tool search to clients that would
// otherwise get more than maxTools tools: tools/list then shows the
// search tool (toolsearch.ToolName), the tools named in always, and those
// the calling client found by searching, which it is told of by a
// tools/list_changed. Every tool stays callable by name. Each caller
// (see tool.CallerFrom) has the tools it found; with no more than
// maxTools tools, all are listed. Call it once, before serving.
func (g *Gateway) SearchTools(maxTools int, always []string) error {
	s := &search{srv: g.srv, maxTools: maxTools, always: always, stale: true, loaded: map[string]map[string]bool{}}
	reg := g.srv.Registry()
	reg.OnChange(func() {
		s.mu.Lock()
		s.stale = true
		s.mu.Unlock()
	})
	if err := reg.Add(toolsearch.NewTool(s.index, 0, s.found)); err != nil {
		return err
	}
	g.srv.ToolFilter = s.filter
	return nil
}

// index returns the index of every tool but the search tool, made again
// after the tools changed.
func (s *search) index() *toolsearch.Index {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stale || s.ix == nil {
		var infos []tool.Info
		for _, t := range s.srv.Registry().Tools() {
			if info := t.Info(); info.Name != toolsearch.ToolName {
				infos = append(infos, info)
			}
		}
		s.ix, s.stale = toolsearch.New(infos), false
	}
	return s.ix
}

// found remembers the tools a caller found, and tells the clients to list
// the tools again.
func (s *search) found(ctx context.Context, hits []toolsearch.Hit) {
	c, _ := tool.CallerFrom(ctx) // anonymous callers share what they found
	s.mu.Lock()
	set := s.loaded[c.ID]
	if set == nil {
		if len(s.loaded) >= maxSearchCallers {
			clear(s.loaded)
		}
		set = map[string]bool{}
		s.loaded[c.ID] = set
	}
	added := false
	for _, h := range hits {
		if !set[h.Name] {
			set[h.Name], added = true, true
		}
	}
	s.mu.Unlock()
	if added {
		s.srv.NotifyListChanged(mcp.NotificationToolsListChanged)
	}
}

// filter is the server's ToolFilter: all the tools when there are few,
// else the search tool, those always shown and those the caller found.
func (s *search) filter(ctx context.Context, tools []tool.Tool) []tool.Tool {
	if len(tools)-1 <= s.maxTools { // the search tool aside
		return tools
	}
	c, _ := tool.CallerFrom(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	set := s.loaded[c.ID]
	out := make([]tool.Tool, 0, 1+len(s.always)+len(set))
	for _, t := range tools {
		n := t.Info().Name
		if n == toolsearch.ToolName || set[n] || slices.Contains(s.always, n) {
			out = append(out, t)
		}
	}
	return out
}
