// Package model holds what a language model is to toolwire, whoever serves
// it: a provider-neutral conversation (Message), a request with tools
// (Request), the answer (Response) with its usage, and the one interface
// every provider adapter implements (Model).
//
// The adapters live in sub-packages, one per API, written over net/http:
// openai (Chat Completions, and every OpenAI-compatible server), anthropic
// (Messages), gemini (generateContent) and ollama (/api/chat). Package
// model/provider opens a model by name ("openai:gpt-4.1") with its key
// and base URL from the environment.
package model

import (
	"context"
	"encoding/json"
)

// Model is a language model behind an API.
//
// Generate sends the conversation and returns the model's answer. With
// onDelta nil the request is not streamed; with onDelta set it is, and
// onDelta receives text and reasoning as they arrive (on the calling
// goroutine), while the Response still holds the whole answer. Errors
// from the provider are *APIError; a failed request is retried as the
// model's RetryPolicy says, but never once a stream has produced output.
type Model interface {
	Generate(ctx context.Context, req *Request, onDelta func(Delta)) (*Response, error)
}

// Role says who speaks a message.
type Role string

// The roles of a conversation.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	// RoleTool carries the results of the tool calls of the assistant
	// message before it, in the order of the calls.
	RoleTool Role = "tool"
)

// Message is one message of a conversation. Which fields are used depends
// on its role: a user gives Text and Images; the assistant gives Text,
// Reasoning and ToolCalls; a tool message gives ToolResults.
type Message struct {
	Role        Role
	Text        string
	Images      []Image
	Reasoning   []Reasoning
	ToolCalls   []ToolCall
	ToolResults []ToolResult
}

// Image is an image in a message: base64 data with its media type.
type Image struct {
	MimeType string
	Data     string
}

// Reasoning is thinking content of an assistant message, kept so that it
// can be sent back as the provider requires (Anthropic's thinking blocks
// with their signature, DeepSeek's reasoning_content with tool calls).
type Reasoning struct {
	Text string
	// Signature authenticates the text (Anthropic); Redacted holds
	// encrypted thinking the provider shows no text of.
	Signature string
	Redacted  string
	// Source names the field the provider carried it in
	// ("reasoning_content", "reasoning", "think" for inline <think>
	// tags), for adapters that send it back the same way.
	Source string
}

// ToolCall is a call of a tool the model asked for.
type ToolCall struct {
	// ID pairs the call with its result. Adapters make one up when the
	// provider gives none.
	ID   string
	Name string
	// Arguments are the arguments as the model wrote them: a JSON object,
	// unless Invalid says why not.
	Arguments json.RawMessage
	// Invalid, when set, says why the call cannot run: its arguments are
	// not a JSON object, or the answer was cut off by the length limit.
	// The agent never runs such a call; it answers it with an error
	// result, and adapters send it back with arguments {} so strict
	// servers accept the conversation.
	Invalid string
	// Signature is opaque provider data sent back with the call (Gemini's
	// thoughtSignature).
	Signature string
}

// ToolResult is the result of one tool call, as the model is shown it.
type ToolResult struct {
	CallID string
	// Name is the tool's name (Gemini pairs results by name and order).
	Name    string
	Text    string
	Images  []Image
	IsError bool
	// ToolRefs names tools this result loads, for a model whose API
	// defers tools (see Deferrer): its adapter sends references that the
	// API expands into the tools' definitions, in place of Text. Other
	// adapters send Text and ignore ToolRefs.
	ToolRefs []string
}

// ToolSpec describes a tool to the model.
type ToolSpec struct {
	Name        string
	Description string
	// Parameters is the JSON Schema of the arguments (an object).
	Parameters json.RawMessage
	// Deferred asks an adapter whose API defers tools (see Deferrer) to
	// send the tool without showing it to the model until a tool result
	// references it (ToolResult.ToolRefs). Set it only for such a model.
	Deferred bool
}

// Deferrer is a Model whose API can be sent tools that the model is not
// shown until a tool result references them (Anthropic's defer_loading
// and tool_reference blocks): the tools' definitions stay out of the
// model's context, and the request's list of tools stays the same from
// turn to turn, so its prompt cache holds. The agent's tool search uses
// it when asked to (agent.ToolSearch.Native).
type Deferrer interface {
	Model
	// DefersTools reports whether the model's requests can defer tools.
	DefersTools() bool
}

// ToolChoice says whether the model must, may or must not call tools.
type ToolChoice string

// Tool choices. Any other value names the one tool the model must call.
const (
	ToolChoiceAuto     ToolChoice = ""
	ToolChoiceNone     ToolChoice = "none"
	ToolChoiceRequired ToolChoice = "required"
)

// Request is one request to a model.
type Request struct {
	// System is the system prompt.
	System     string
	Messages   []Message
	Tools      []ToolSpec
	ToolChoice ToolChoice
	// MaxTokens bounds the answer; 0 means the adapter's default.
	MaxTokens int
	// Temperature, when set, is sent as it is.
	Temperature *float64
}

// StopReason says why the model stopped.
type StopReason string

// Stop reasons.
const (
	StopEnd       StopReason = "end"        // the model finished its answer
	StopToolCalls StopReason = "tool_calls" // the model wants tools called
	StopLength    StopReason = "length"     // the token limit cut the answer
	StopFilter    StopReason = "filter"     // a content filter stopped it
)

// Usage counts the tokens of one request.
type Usage struct {
	InputTokens     int `json:"input_tokens"`
	OutputTokens    int `json:"output_tokens"`
	CachedTokens    int `json:"cached_tokens,omitempty"`
	ReasoningTokens int `json:"reasoning_tokens,omitempty"`
}

// Add returns the sum of two usages.
func (u Usage) Add(v Usage) Usage {
	return Usage{u.InputTokens + v.InputTokens, u.OutputTokens + v.OutputTokens, u.CachedTokens + v.CachedTokens, u.ReasoningTokens + v.ReasoningTokens}
}

// Response is a model's answer.
type Response struct {
	// Message is the assistant's message.
	Message    Message
	StopReason StopReason
	Usage      Usage
	// RequestID is the provider's id of the request, for support.
	RequestID string
}

// DeltaKind says what a Delta carries.
type DeltaKind int

// Delta kinds.
const (
	DeltaText DeltaKind = iota
	DeltaReasoning
)

// Delta is a piece of a streamed answer.
type Delta struct {
	Kind DeltaKind
	Text string
}
