// Package tool holds what a tool is, wherever it runs: its description
// (Info), the one-method interface every tool implements (Tool), the result
// it returns (Result and its Content blocks), and the Registry that routes a
// call by name.
//
// A local Go function, a tool on a remote MCP server and a built-in toolset
// are all a Tool, so an agent and an MCP server treat them alike. What a
// tool may ask of whoever called it (progress, log messages, questions to
// the user or the caller's model) goes through a Client, so a tool does
// not depend on where it runs either.
package tool

import (
	"context"
	"encoding/json"
)

// Tool is anything that can be described to a model and called.
//
// Call receives the completed arguments as a JSON object: the model's
// arguments after the argument pipeline ran over them (see Registry.Call), with
// defaults filled, injected parameters added, and the input schema
// satisfied. Only a Registry runs the pipeline, so a tool is called through
// a Registry; a tool that wraps another passes the arguments on as it got
// them, and wrapping never changes what a call does.
//
// Call returns the result meant for the model. A returned error is shown to
// the model as an error result (see ErrorResult), so it can repair its call,
// unless it is fatal (see ErrFatal); return a Result with IsError set to
// choose the text yourself.
type Tool interface {
	Info() Info
	Call(ctx context.Context, args json.RawMessage) (*Result, error)
}

// Info describes a tool: the MCP Tool definition.
type Info struct {
	// Name routes the call. It is unique within a registry.
	Name string `json:"name"`
	// Title is a human-readable name for display.
	Title string `json:"title,omitempty"`
	// Description tells the model what the tool does and when to use it.
	Description string `json:"description,omitempty"`
	// InputSchema is the JSON Schema of the arguments (type "object").
	// Empty means an object with no properties.
	InputSchema json.RawMessage `json:"inputSchema"`
	// OutputSchema, when set, is the JSON Schema of Result.StructuredContent.
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	// Annotations are hints about the tool's behaviour.
	Annotations *Annotations `json:"annotations,omitempty"`
	// Icons for display.
	Icons []Icon `json:"icons,omitempty"`
	// Meta is free-form metadata (MCP's _meta).
	Meta map[string]any `json:"_meta,omitempty"`
	// Execution says whether an MCP server may run the tool as a task of
	// the Tasks extension, which a client polls for the result instead
	// of waiting: set it on tools that can run long. Nil: never.
	Execution *Execution `json:"execution,omitempty"`

	// Injected names the parameters the host fills, never the model
	// (system parameters such as an executor or a storage
	// configuration). They are not in InputSchema, which is what a model
	// sees; anything a model sends for them is dropped. They are never
	// sent over MCP.
	Injected []string `json:"-"`
	// InjectedValues gives values of injected parameters known when the
	// tool was defined (a host's configuration); values a call's context
	// carries (WithInjected) take precedence. Values are JSON values: Go
	// objects that tools share belong in the run context (WithRunContext).
	InjectedValues map[string]any `json:"-"`
}

// emptyObjectSchema is the input schema of a tool that takes no arguments.
var emptyObjectSchema = json.RawMessage(`{"type":"object"}`)

// MarshalJSON writes Info with an input schema even when none was set.
func (i Info) MarshalJSON() ([]byte, error) {
	type plain Info
	p := plain(i)
	if len(p.InputSchema) == 0 {
		p.InputSchema = emptyObjectSchema
	}
	return json.Marshal(p)
}

// Annotations are hints about a tool's behaviour, used for approval, retry
// and parallelism decisions. They are hints: never trust them from an
// untrusted server.
type Annotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    *bool  `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool  `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool  `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitempty"`
}

// Execution describes how a tool's calls may run (MCP's
// execution annotation).
type Execution struct {
	// TaskSupport is TaskOptional, TaskRequired, or TaskForbidden (or
	// empty).
	TaskSupport string `json:"taskSupport,omitempty"`
}

// The values of Execution.TaskSupport.
const (
	// TaskForbidden: every call answers with its result.
	TaskForbidden = "forbidden"
	// TaskOptional: a call the client lets become a task does so when it
	// runs long (mcp.TaskOptions.After) or asks to (mcp.StartTask).
	TaskOptional = "optional"
	// TaskRequired: every call is a task; a client that cannot take one
	// gets an error saying it lacks the extension.
	TaskRequired = "required"
)

// Icon is an image that represents a tool, resource or server in a UI.
type Icon struct {
	Src      string   `json:"src"`
	MimeType string   `json:"mimeType,omitempty"`
	Sizes    []string `json:"sizes,omitempty"`
	Theme    string   `json:"theme,omitempty"`
}

// Func is the function of a tool that reads its arguments as JSON itself,
// as http.HandlerFunc is the function of a handler. NewFunc makes it a
// Tool.
type Func func(ctx context.Context, args json.RawMessage) (*Result, error)

// NewFunc makes a tool of fn, described by info: for a tool whose schema
// is written by hand. (New makes a tool of a function of a Go type, whose
// schema it infers.) fn receives the completed arguments, as every tool's
// Call does.
func NewFunc(info Info, fn Func) Tool { return funcTool{info: info, fn: fn} }

type funcTool struct {
	info Info
	fn   Func
}

func (f funcTool) Info() Info { return f.info }

func (f funcTool) Call(ctx context.Context, args json.RawMessage) (*Result, error) {
	return f.fn(ctx, args)
}
