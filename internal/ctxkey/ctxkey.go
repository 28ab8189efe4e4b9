// Package ctxkey holds context keys that package tool defines and other
// packages of this module answer without a context value of their own: an
// MCP request is its handler's context, and answers for the tool.Client
// of the calls it serves.
package ctxkey

// Client is the key of the tool.Client of a call.
type Client struct{}

// Caller is the key of the tool.Caller of a call (stored as a tool.Caller
// value).
type Caller struct{}

// ToolSpan marks a context whose tool call an execute_tool span already
// covers: the MCP client adds its attributes to that span, not a new one.
type ToolSpan struct{}
