// Package anthropic is a model adapter for Anthropic's Messages API.
//
// The system prompt goes in the top-level system field; tool calls are
// tool_use blocks and their results tool_result blocks (all results of a
// turn in one user message, before any text, with is_error); thinking and
// redacted_thinking blocks are kept with their signature and sent back as
// they came. Tools marked Deferred are sent with defer_loading, and a
// result's ToolRefs as tool_reference blocks, which the API expands into
// the tools' definitions (Anthropic's client-side tool search). Streams are read event by event (message_start,
// content_block_start/delta/stop with text, thinking, signature and
// input_json deltas, message_delta with the cumulative usage, ping, and
// an error event in the middle of a stream, which becomes an
// *model.APIError).
//
// Usage: InputTokens counts all the input, read from the cache or not
// (input_tokens + cache_read_input_tokens + cache_creation_input_tokens),
// and CachedTokens the part read from the cache, as OpenAI counts them.
package anthropic

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/toolwire/toolwire/model"
	"github.com/toolwire/toolwire/model/internal/adapter"
	"github.com/toolwire/toolwire/model/internal/wirecache"
)

// DefaultBaseURL is Anthropic's API host; requests go to BaseURL +
// "/v1/messages".
const DefaultBaseURL = "https://api.anthropic.com"

// Version is the anthropic-version header sent with every request.
const Version = "2023-06-01"

// DefaultMaxTokens bounds the answer when the request does not: the API
// requires a bound.
const DefaultMaxTokens = 4096

// Model is a model behind the Messages API. It keeps the encoding of the
// messages of its last few conversations, so that each request encodes
// only what is new since the one before; a Model must not be copied
// after its first request.
type Model struct {
	// Name is the model's id ("claude-sonnet-4-5").
	Name string
	// BaseURL is the API's host, without /v1, as the Anthropic SDKs take
	// it (default DefaultBaseURL).
	BaseURL string
	// APIKey is sent as x-api-key.
	APIKey string
	// ThinkingBudget, when above 0, turns extended thinking on with that
	// many tokens to think in; max_tokens is raised above it when the
	// request's bound leaves no room for the answer.
	ThinkingBudget int
	// Header holds headers added to every request (anthropic-beta, ...).
	Header http.Header
	// Client sends the requests (nil: http.DefaultClient).
	Client *http.Client
	Retry  model.RetryPolicy

	// What was encoded of the conversations so far, to send again
	// without encoding it again (see package wirecache).
	messages wirecache.Messages[encoded]
	envelope wirecache.Envelopes[settings]
}

// DefersTools reports whether the model takes deferred tools
// (defer_loading, and tool_reference blocks in tool results, which the API
// expands into the tools' definitions): Claude's models from the 4.5
// generation on do; older ones (claude-3…, claude-sonnet-4 and
// claude-opus-4 and 4.1) do not. See model.Deferrer.
func (m *Model) DefersTools() bool {
	for _, old := range []string{"claude-2", "claude-instant", "claude-3", "claude-sonnet-4-0", "claude-sonnet-4-2", "claude-opus-4-0", "claude-opus-4-1", "claude-opus-4-2"} {
		if strings.HasPrefix(m.Name, old) {
			return false
		}
	}
	return true
}

func (m *Model) endpoint() *adapter.Endpoint {
	ep := adapter.NewEndpoint("anthropic", m.BaseURL, DefaultBaseURL, "/v1/messages", m.Header, "anthropic-version", Version, "x-api-key", m.APIKey)
	ep.Client, ep.Retry = m.Client, m.Retry
	return ep
}

// Generate sends the conversation to the API (see model.Model).
func (m *Model) Generate(ctx context.Context, req *model.Request, onDelta func(model.Delta)) (*model.Response, error) {
	ep := m.endpoint()
	body, err := m.encode(req, onDelta != nil)
	if err != nil {
		return nil, fmt.Errorf("%s: encoding the request: %w", ep.Provider, err)
	}
	return ep.Generate(ctx, body, onDelta, "request-id", readResponse,
		func(resp *http.Response, onDelta func(model.Delta)) (*model.Response, bool, error) {
			return readStream(ep, resp, onDelta)
		})
}

// The wire format.

// wireHead is the part of a request before the messages, wireRest the
// part after.
type wireHead struct {
	Model     string `json:"model"`
	MaxTokens int    `json:"max_tokens"`
	System    string `json:"system,omitempty"`
}

type wireRest struct {
	Tools       []wireTool      `json:"tools,omitempty"`
	ToolChoice  *wireToolChoice `json:"tool_choice,omitempty"`
	Thinking    *wireThinking   `json:"thinking,omitempty"`
	Temperature *float64        `json:"temperature,omitempty"`
	Stream      bool            `json:"stream,omitempty"`
}

type wireThinking struct {
	Type         string `json:"type"`
	BudgetTokens int    `json:"budget_tokens"`
}

type wireTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
	// DeferLoading keeps the tool out of the model's context until a
	// tool_reference block names it.
	DeferLoading bool `json:"defer_loading,omitempty"`
}

type wireToolChoice struct {
	Type string `json:"type"`
	Name string `json:"name,omitempty"`
}

// wireBlock is a content block of any type; which fields are set depends
// on Type.
type wireBlock struct {
	Type string `json:"type"`
	// text
	Text *string `json:"text,omitempty"`
	// image
	Source *wireSource `json:"source,omitempty"`
	// tool_use
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
	// tool_result
	ToolUseID string      `json:"tool_use_id,omitempty"`
	Content   []wireBlock `json:"content,omitempty"`
	IsError   bool        `json:"is_error,omitempty"`
	// tool_reference (in a tool_result's content)
	ToolName string `json:"tool_name,omitempty"`
	// thinking, redacted_thinking
	Thinking  *string `json:"thinking,omitempty"`
	Signature string  `json:"signature,omitempty"`
	Data      string  `json:"data,omitempty"`
}

type wireSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
}

func textBlock(s string) wireBlock { return wireBlock{Type: "text", Text: &s} }

func imageBlocks(imgs []model.Image) []wireBlock {
	var out []wireBlock
	for _, img := range imgs {
		out = append(out, wireBlock{Type: "image", Source: &wireSource{Type: "base64", MediaType: img.MimeType, Data: img.Data}})
	}
	return out
}

// settings is what a request's envelope is made from, but its tools.
type settings struct {
	name, system   string
	maxTokens      int
	thinkingBudget int
	choice         model.ToolChoice
	temperature    wirecache.Temperature
	stream         bool
}

// encode writes the request body: the messages' encodings come from
// m.messages, and the rest from m.envelope while it stays the same.
func (m *Model) encode(req *model.Request, stream bool) ([]byte, error) {
	env, err := m.envelope.Get(settings{m.Name, req.System, req.MaxTokens, m.ThinkingBudget, req.ToolChoice, wirecache.TemperatureOf(req.Temperature), stream},
		req.Tools, func() (wirecache.Envelope, error) { return m.newEnvelope(req, stream) })
	if err != nil {
		return nil, err
	}
	msgs, err := m.messages.Encode(req.Messages, encodeMessage)
	if err != nil {
		return nil, err
	}
	return joinMessages(env, msgs), nil
}

func (m *Model) newEnvelope(req *model.Request, stream bool) (wirecache.Envelope, error) {
	var env wirecache.Envelope
	h := wireHead{Model: m.Name, MaxTokens: req.MaxTokens, System: req.System}
	w := wireRest{Temperature: req.Temperature, Stream: stream}
	if h.MaxTokens <= 0 {
		h.MaxTokens = DefaultMaxTokens
	}
	if m.ThinkingBudget > 0 {
		w.Thinking = &wireThinking{Type: "enabled", BudgetTokens: m.ThinkingBudget}
		if h.MaxTokens <= m.ThinkingBudget {
			// The budget is part of max_tokens, and must leave room.
			h.MaxTokens = m.ThinkingBudget + DefaultMaxTokens
		}
	}
	for _, t := range req.Tools {
		schema := t.Parameters
		if len(schema) == 0 {
			schema = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		w.Tools = append(w.Tools, wireTool{Name: t.Name, Description: t.Description, InputSchema: schema, DeferLoading: t.Deferred})
	}
	if len(req.Tools) > 0 {
		switch req.ToolChoice {
		case model.ToolChoiceAuto:
		case model.ToolChoiceNone:
			w.ToolChoice = &wireToolChoice{Type: "none"}
		case model.ToolChoiceRequired:
			w.ToolChoice = &wireToolChoice{Type: "any"}
		default:
			w.ToolChoice = &wireToolChoice{Type: "tool", Name: string(req.ToolChoice)}
		}
	}
	head, err := json.Marshal(h)
	if err != nil {
		return env, err
	}
	rest, err := json.Marshal(w)
	if err != nil {
		return env, err
	}
	env.Head = append(head[:len(head)-1], `,"messages":[`...)
	env.Tail = wirecache.Tail(rest)
	return env, nil
}

// emptyInput replays a call whose arguments were unusable.
var emptyInput = json.RawMessage(`{}`)

// encoded is a message's content blocks encoded, separated by commas,
// and whose turn they belong to: the assistant's, or the user's (tool
// results are the user's).
type encoded struct {
	assistant, results bool
	blocks             []byte
}

// encodeMessage encodes the blocks of msgs[i]. The API takes no empty
// text blocks, so none are made.
func encodeMessage(msgs []model.Message, i int) (encoded, error) {
	msg := &msgs[i]
	var blocks []wireBlock
	e := encoded{}
	switch msg.Role {
	case model.RoleTool:
		e.results = true
		for _, r := range msg.ToolResults {
			b := wireBlock{Type: "tool_result", ToolUseID: r.CallID, IsError: r.IsError}
			for _, name := range r.ToolRefs {
				b.Content = append(b.Content, wireBlock{Type: "tool_reference", ToolName: name})
			}
			if r.Text != "" && len(r.ToolRefs) == 0 {
				b.Content = append(b.Content, textBlock(r.Text))
			}
			b.Content = append(b.Content, imageBlocks(r.Images)...)
			blocks = append(blocks, b)
		}
	case model.RoleAssistant:
		e.assistant = true
		for _, r := range msg.Reasoning {
			switch {
			case r.Source != "" && r.Source != "thinking" && r.Source != "redacted_thinking":
				// Reasoning of another provider: not Anthropic's to
				// check, and it would fail the check.
			case r.Redacted != "":
				blocks = append(blocks, wireBlock{Type: "redacted_thinking", Data: r.Redacted})
			case r.Signature != "":
				blocks = append(blocks, wireBlock{Type: "thinking", Thinking: &r.Text, Signature: r.Signature})
			}
			// Thinking without a signature would be rejected.
		}
		if msg.Text != "" {
			blocks = append(blocks, textBlock(msg.Text))
		}
		for _, c := range msg.ToolCalls {
			input := c.Arguments
			if c.Invalid != "" || len(input) == 0 {
				input = emptyInput
			}
			blocks = append(blocks, wireBlock{Type: "tool_use", ID: c.ID, Name: c.Name, Input: input})
		}
	default:
		blocks = imageBlocks(msg.Images)
		if msg.Text != "" {
			blocks = append(blocks, textBlock(msg.Text))
		}
	}
	var err error
	e.blocks, err = wirecache.AppendList(e.blocks, blocks)
	return e, err
}

// joinMessages writes the body: the envelope around the conversation.
// The roles must alternate and the results of a turn's tool calls lead
// the user's message: consecutive user and tool messages make one user
// message, the results of all first. A message without blocks is left
// out.
func joinMessages(env wirecache.Envelope, msgs []encoded) []byte {
	n := len(env.Head) + len(env.Tail)
	for _, m := range msgs {
		n += len(m.blocks) + 32
	}
	b := append(make([]byte, 0, n), env.Head...)
	for i := 0; i < len(msgs); {
		if len(msgs[i].blocks) == 0 {
			i++
			continue
		}
		if b[len(b)-1] != '[' {
			b = append(b, ',')
		}
		if msgs[i].assistant {
			b = append(b, `{"role":"assistant","content":[`...)
			b = append(append(b, msgs[i].blocks...), "]}"...)
			i++
			continue
		}
		j := i
		for j < len(msgs) && (!msgs[j].assistant || len(msgs[j].blocks) == 0) {
			j++
		}
		b = append(b, `{"role":"user","content":[`...)
		first := true
		for _, results := range []bool{true, false} {
			for _, m := range msgs[i:j] {
				if len(m.blocks) > 0 && m.results == results {
					if !first {
						b = append(b, ',')
					}
					first = false
					b = append(b, m.blocks...)
				}
			}
		}
		b = append(b, "]}"...)
		i = j
	}
	return append(b, env.Tail...)
}

type wireUsage struct {
	InputTokens              *int `json:"input_tokens"`
	OutputTokens             *int `json:"output_tokens"`
	CacheReadInputTokens     *int `json:"cache_read_input_tokens"`
	CacheCreationInputTokens *int `json:"cache_creation_input_tokens"`
}

// usage keeps the counts the API has sent so far: message_delta's are
// cumulative and replace message_start's.
type usage struct {
	input, output, cacheRead, cacheCreation int
}

func (u *usage) update(w *wireUsage) {
	if w == nil {
		return
	}
	for _, f := range []struct {
		dst *int
		src *int
	}{{&u.input, w.InputTokens}, {&u.output, w.OutputTokens}, {&u.cacheRead, w.CacheReadInputTokens}, {&u.cacheCreation, w.CacheCreationInputTokens}} {
		if f.src != nil {
			*f.dst = *f.src
		}
	}
}

func (u *usage) usage() model.Usage {
	return model.Usage{InputTokens: u.input + u.cacheRead + u.cacheCreation, OutputTokens: u.output, CachedTokens: u.cacheRead}
}

type wireResponse struct {
	ID         string      `json:"id"`
	Content    []wireBlock `json:"content"`
	StopReason string      `json:"stop_reason"`
	Usage      *wireUsage  `json:"usage"`
}

// readResponse reads a non-streamed answer.
func readResponse(resp *http.Response) (*model.Response, error) {
	var w wireResponse
	if err := json.NewDecoder(resp.Body).Decode(&w); err != nil {
		return nil, fmt.Errorf("reading the answer: %w", err)
	}
	var a answer
	for _, b := range w.Content {
		a.block(b)
	}
	var u usage
	u.update(w.Usage)
	res := a.response(w.StopReason, u.usage())
	res.RequestID = w.ID
	return res, nil
}
