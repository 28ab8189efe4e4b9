package host

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"

	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/tool"
)

// A call made with a tool.Client in its context (an MCP server's request,
// an agent's call) hears what the server says about it: the progress the
// server reports for the call, and the log messages the server sends while
// the call runs, reach that client. See RemoteTool.Call.

// inflight is a call in progress on a server whose caller listens.
type inflight struct {
	ctx    context.Context
	client tool.Client
}

// calls tracks the server's calls in progress whose caller listens, by
// progress token.
type calls struct {
	mu   sync.Mutex
	next int64
	m    map[string]inflight
}

// add tracks a call and returns its progress token (a JSON string).
func (c *calls) add(ctx context.Context, cl tool.Client) json.RawMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.next++
	token := strconv.AppendInt(append(make(json.RawMessage, 0, 24), `"tw-`...), c.next, 10)
	token = append(token, '"')
	if c.m == nil {
		c.m = map[string]inflight{}
	}
	c.m[string(token)] = inflight{ctx, cl}
	return token
}

func (c *calls) remove(token json.RawMessage) {
	c.mu.Lock()
	delete(c.m, string(token))
	c.mu.Unlock()
}

// byToken returns the call a progress token names.
func (c *calls) byToken(token json.RawMessage) (inflight, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f, ok := c.m[string(token)]
	return f, ok
}

func (c *calls) all() []inflight {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]inflight, 0, len(c.m))
	for _, f := range c.m {
		out = append(out, f)
	}
	return out
}

// passThrough hands a server's progress and log notifications to the
// callers they concern.
func (s *server) passThrough(method string, params json.RawMessage) {
	switch method {
	case mcp.NotificationProgress:
		var p mcp.ProgressParams
		if json.Unmarshal(params, &p) != nil {
			return
		}
		if f, ok := s.calls.byToken(p.ProgressToken); ok {
			total := 0.0
			if p.Total != nil {
				total = *p.Total
			}
			_ = f.client.Progress(f.ctx, p.Progress, total, p.Message)
		}
	case mcp.NotificationMessage:
		var p mcp.LoggingMessageParams
		if json.Unmarshal(params, &p) != nil {
			return
		}
		for _, f := range s.calls.all() {
			_ = f.client.Log(f.ctx, tool.LogLevel(p.Level), p.Logger, p.Data)
		}
	}
}
