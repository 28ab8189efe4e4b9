package tool

import (
	"context"
	"encoding/json"

	"github.com/toolwire/toolwire/internal/jsonvalue"
)

// Call is one call of a tool on its way through a registry's middleware,
// after the argument pipeline completed its arguments.
type Call struct {
	// Name is the name the tool is registered under.
	Name string
	// Tool is the tool called; its Info tells its annotations.
	Tool Tool

	args json.RawMessage
	// m holds the completed arguments decoded, when the pipeline decoded
	// them and nobody replaced them: a typed tool takes them so.
	m map[string]any
}

// Args returns the completed arguments, as the tool will receive them.
func (c *Call) Args() json.RawMessage {
	if c.args == nil {
		// Values decoded from JSON and schema defaults: encoding cannot
		// fail (the registry encodes injected values itself, at once).
		c.args, _ = jsonvalue.Append(nil, c.m)
	}
	return c.args
}

// SetArgs replaces the arguments the tool will receive: a middleware that
// rewrites a call. They do not go through the pipeline again.
func (c *Call) SetArgs(args json.RawMessage) {
	c.args, c.m = args, nil
}

// Handler runs a call: the innermost one calls the tool.
type Handler func(ctx context.Context, c *Call) (*Result, error)

// Middleware wraps the handler that runs a call, as net/http handlers wrap
// handlers: it may look at the call (its tool, completed arguments, the
// caller through CallerFrom(ctx)), refuse it by returning without calling
// next, rewrite it (Call.SetArgs), and see its result, error and duration.
// A registry runs its middleware for every call whose arguments passed the
// pipeline, in-process or arriving over MCP.
type Middleware func(next Handler) Handler
