package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/toolwire/toolwire/internal/ctxkey"
)

// Client is what a tool may ask of whoever made the call: report progress,
// log, ask the user (elicitation) and ask the caller's model (sampling).
// The MCP server implements it for a remote caller, forwarding to the MCP
// client; an agent.Agent implements it for the tools it calls, through its
// event and question callbacks. A tool reaches it through the functions
// Progress, Log, Elicit and Sample, and so behaves the same in both places.
//
// A Client that cannot do what is asked (no user to ask, say) returns an
// error that errors.Is reports as errors.ErrUnsupported.
type Client interface {
	// Progress reports how far the call got: progress of total (total
	// <= 0: unknown), and what it is doing.
	Progress(ctx context.Context, progress, total float64, message string) error
	// Log sends a log message about the call.
	Log(ctx context.Context, level LogLevel, logger string, data any) error
	// Elicit asks the user for input.
	Elicit(ctx context.Context, e *Elicitation) (*ElicitResult, error)
	// Sample asks the caller's model for a completion.
	Sample(ctx context.Context, s *Sampling) (*SamplingResult, error)
}

// WithClient returns a context whose calls are made for c: Progress, Log,
// Elicit and Sample reach c.
func WithClient(ctx context.Context, c Client) context.Context {
	return context.WithValue(ctx, ctxkey.Client{}, c)
}

// ClientFrom returns the Client ctx carries; ok is false when it carries
// none.
func ClientFrom(ctx context.Context) (c Client, ok bool) {
	c, ok = ctx.Value(ctxkey.Client{}).(Client)
	return c, ok
}

// Progress reports progress of the current call to its client, if the
// call has one (see Client); otherwise it does nothing. total <= 0 means
// unknown. It costs a context lookup when nobody listens.
func Progress(ctx context.Context, progress, total float64, message string) error {
	if c, ok := ClientFrom(ctx); ok {
		return c.Progress(ctx, progress, total, message)
	}
	return nil
}

// Log sends a log message about the current call to its client, if the
// call has one; otherwise it does nothing. The client drops messages below
// the level it asked for.
func Log(ctx context.Context, level LogLevel, logger string, data any) error {
	if c, ok := ClientFrom(ctx); ok {
		return c.Log(ctx, level, logger, data)
	}
	return nil
}

// Elicit asks the current call's user for input. Without a client it fails
// with an error errors.Is reports as errors.ErrUnsupported. A tool returns
// its other errors unchanged: the MCP server may end the call with one to
// make it again with the answer (see mcp.ErrInputRequired), so a tool asks
// its questions in the same order every time it runs.
func Elicit(ctx context.Context, e *Elicitation) (*ElicitResult, error) {
	if c, ok := ClientFrom(ctx); ok {
		return c.Elicit(ctx, e)
	}
	return nil, fmt.Errorf("cannot ask the user for input: %w (the call was made without a tool.Client)", errors.ErrUnsupported)
}

// Sample asks the current call's model for a completion. Without a client
// it fails with an error errors.Is reports as errors.ErrUnsupported; other
// errors are as for Elicit.
func Sample(ctx context.Context, s *Sampling) (*SamplingResult, error) {
	if c, ok := ClientFrom(ctx); ok {
		return c.Sample(ctx, s)
	}
	return nil, fmt.Errorf("cannot ask the caller's model: %w (the call was made without a tool.Client)", errors.ErrUnsupported)
}

// LogLevel is the severity of a log message: the eight syslog levels MCP
// uses.
type LogLevel string

// The log levels, least severe first.
const (
	LevelDebug     LogLevel = "debug"
	LevelInfo      LogLevel = "info"
	LevelNotice    LogLevel = "notice"
	LevelWarning   LogLevel = "warning"
	LevelError     LogLevel = "error"
	LevelCritical  LogLevel = "critical"
	LevelAlert     LogLevel = "alert"
	LevelEmergency LogLevel = "emergency"
)

// Elicitation is a question to the user: a message and the form of the
// answer.
type Elicitation struct {
	// Message says what is asked and why.
	Message string
	// Schema is the JSON Schema of the answer: an object whose properties
	// are plain values (string, number, integer, boolean, or a string
	// enum), which a form can hold.
	Schema json.RawMessage
}

// The actions of an ElicitResult.
const (
	ActionAccept  = "accept"
	ActionDecline = "decline"
	ActionCancel  = "cancel"
)

// ElicitResult is the user's answer.
type ElicitResult struct {
	// Action is ActionAccept, ActionDecline or ActionCancel.
	Action string
	// Content is the accepted form's values, by property name.
	Content map[string]any
}

// Sampling is a request for a completion by the caller's model.
type Sampling struct {
	// System is the system prompt, if any.
	System string
	// Messages is the conversation so far.
	Messages []SamplingMessage
	// MaxTokens bounds the answer.
	MaxTokens int
}

// SamplingMessage is one message of a Sampling conversation.
type SamplingMessage struct {
	// Role is "user" or "assistant".
	Role string
	// Content is the message: text, an image or audio.
	Content Content
}

// SamplingResult is the caller's model's answer.
type SamplingResult struct {
	// Role is "assistant".
	Role string
	// Content is the answer.
	Content Content
	// Model names the model that answered.
	Model string
	// StopReason says why the answer ended ("endTurn", "maxTokens", ...),
	// when the client said.
	StopReason string
}
