// Package openai is a model adapter for the OpenAI Chat Completions API,
// and so for every server that speaks it: Ollama (/v1), vLLM, llama.cpp,
// LM Studio, DeepSeek, Qwen (DashScope), Volcano Engine Ark, OpenRouter.
//
// Streamed tool calls are put together the way real servers send them:
// parallel calls all at index 0 told apart only by a new id (Ollama),
// index missing or -1, no id at all (one is made up), "tool_calls": [] on
// every delta, and arguments split anywhere, inside an escape or a
// surrogate pair included. Reasoning sent as reasoning_content (DeepSeek,
// Qwen) or reasoning (Ollama, vLLM) is kept and sent back with the tool
// calls; reasoning written inline between <think> tags is separated from
// the answer.
package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/toolwire/toolwire/model"
	"github.com/toolwire/toolwire/model/internal/wirecache"
)

// DefaultBaseURL is OpenAI's API.
const DefaultBaseURL = "https://api.openai.com/v1"

// Model is a model behind a Chat Completions endpoint. It keeps the
// encoding of the messages of its last few conversations, so that each
// request encodes only what is new since the one before; a Model must
// not be copied after its first request.
type Model struct {
	// Name is the model's id, as the server knows it.
	Name string
	// BaseURL ends in /v1, as the OpenAI SDKs take it (default
	// DefaultBaseURL); requests go to BaseURL + "/chat/completions".
	BaseURL string
	// APIKey is sent as a bearer token when set.
	APIKey string
	// Provider names the server in errors (default "openai").
	Provider string
	// Header holds headers added to every request.
	Header http.Header
	// Client sends the requests (nil: http.DefaultClient).
	Client *http.Client
	Retry  model.RetryPolicy

	// What was encoded of the conversations so far, to send again
	// without encoding it again (see package wirecache).
	messages wirecache.Messages[[]byte]
	envelope wirecache.Last[envelopeKey, envelope]
}

func (m *Model) endpoint() *model.Endpoint {
	provider := m.Provider
	if provider == "" {
		provider = "openai"
	}
	bearer := ""
	if m.APIKey != "" {
		bearer = "Bearer " + m.APIKey
	}
	ep := model.NewEndpoint(provider, m.BaseURL, DefaultBaseURL, "/chat/completions", m.Header, "Authorization", bearer)
	ep.Client, ep.Retry = m.Client, m.Retry
	return ep
}

// Generate sends the conversation to the server (see model.Model).
func (m *Model) Generate(ctx context.Context, req *model.Request, onDelta func(model.Delta)) (*model.Response, error) {
	ep := m.endpoint()
	body, err := m.encode(req, onDelta != nil)
	if err != nil {
		return nil, fmt.Errorf("%s: encoding the request: %w", ep.Provider, err)
	}
	return ep.Generate(ctx, body, onDelta, "x-request-id", readResponse,
		func(resp *http.Response, onDelta func(model.Delta)) (*model.Response, bool, error) {
			return readStream(ep, resp, onDelta)
		})
}

// The wire format.

type wireMessage struct {
	Role             string         `json:"role"`
	Content          any            `json:"content"`
	ReasoningContent string         `json:"reasoning_content,omitempty"`
	Reasoning        string         `json:"reasoning,omitempty"`
	ToolCalls        []wireToolCall `json:"tool_calls,omitempty"`
	ToolCallID       string         `json:"tool_call_id,omitempty"`
}

type wirePart struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	ImageURL *struct {
		URL string `json:"url"`
	} `json:"image_url,omitempty"`
}

type wireToolCall struct {
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string          `json:"name,omitempty"`
		Arguments json.RawMessage `json:"arguments,omitempty"`
	} `json:"function"`
}

type wireTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

// wireSettings is the part of a request after the messages.
type wireSettings struct {
	Tools         []wireTool     `json:"tools,omitempty"`
	ToolChoice    any            `json:"tool_choice,omitempty"`
	Stream        bool           `json:"stream,omitempty"`
	StreamOptions map[string]any `json:"stream_options,omitempty"`
	MaxTokens     int            `json:"max_tokens,omitempty"`
	Temperature   *float64       `json:"temperature,omitempty"`
}

// envelope is what a request holds besides the conversation: head goes
// before the messages, system is the system message, tail comes after.
type envelope struct{ head, system, tail []byte }

// envelopeKey is what an envelope is made from.
type envelopeKey struct {
	name, system   string
	tools          wirecache.Tools
	choice         model.ToolChoice
	stream         bool
	maxTokens      int
	temperature    float64
	hasTemperature bool
}

func (m *Model) envelopeKey(req *model.Request, stream bool) func(envelopeKey) bool {
	return func(k envelopeKey) bool {
		return k.name == m.Name && k.system == req.System && k.choice == req.ToolChoice && k.stream == stream &&
			k.maxTokens == req.MaxTokens && k.hasTemperature == (req.Temperature != nil) &&
			(req.Temperature == nil || k.temperature == *req.Temperature) && k.tools.Same(req.Tools)
	}
}

// encode writes the request body: the messages' encodings come from
// m.messages, and the rest from m.envelope while it stays the same.
func (m *Model) encode(req *model.Request, stream bool) ([]byte, error) {
	env, ok := m.envelope.Get(m.envelopeKey(req, stream))
	if !ok {
		var err error
		if env, err = m.newEnvelope(req, stream); err != nil {
			return nil, err
		}
		k := envelopeKey{name: m.Name, system: req.System, tools: wirecache.SnapshotTools(req.Tools), choice: req.ToolChoice,
			stream: stream, maxTokens: req.MaxTokens, hasTemperature: req.Temperature != nil}
		if req.Temperature != nil {
			k.temperature = *req.Temperature
		}
		m.envelope.Put(k, env)
	}
	msgs, err := m.messages.Encode(req.Messages, encodeMessage)
	if err != nil {
		return nil, err
	}
	return wirecache.Join(env.head, env.tail, [][]byte{env.system}, msgs), nil
}

func (m *Model) newEnvelope(req *model.Request, stream bool) (envelope, error) {
	var env envelope
	name, err := json.Marshal(m.Name)
	if err != nil {
		return env, err
	}
	env.head = append(append([]byte(`{"model":`), name...), `,"messages":[`...)
	if req.System != "" {
		if env.system, err = json.Marshal(wireMessage{Role: "system", Content: req.System}); err != nil {
			return env, err
		}
	}
	w := wireSettings{Stream: stream, MaxTokens: req.MaxTokens, Temperature: req.Temperature}
	if stream {
		w.StreamOptions = map[string]any{"include_usage": true}
	}
	for _, t := range req.Tools {
		var wt wireTool
		wt.Type = "function"
		wt.Function.Name, wt.Function.Description, wt.Function.Parameters = t.Name, t.Description, t.Parameters
		if len(wt.Function.Parameters) == 0 {
			wt.Function.Parameters = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		w.Tools = append(w.Tools, wt)
	}
	if len(req.Tools) > 0 {
		switch req.ToolChoice {
		case model.ToolChoiceAuto:
		case model.ToolChoiceNone, model.ToolChoiceRequired:
			w.ToolChoice = string(req.ToolChoice)
		default:
			w.ToolChoice = map[string]any{"type": "function", "function": map[string]string{"name": string(req.ToolChoice)}}
		}
	}
	rest, err := json.Marshal(w)
	if err != nil {
		return env, err
	}
	env.tail = []byte("]}")
	if len(rest) > 2 { // more than {}
		env.tail = append([]byte("],"), rest[1:]...)
	}
	return env, nil
}

// encodeMessage encodes msgs[i]: the wire messages it makes (a tool
// message makes one per result), separated by commas.
func encodeMessage(msgs []model.Message, i int) ([]byte, error) {
	ws := wireMessages(msgs[i])
	if len(ws) == 1 {
		return json.Marshal(ws[0])
	}
	var out []byte
	for j, w := range ws {
		b, err := json.Marshal(w)
		if err != nil {
			return nil, err
		}
		if j > 0 {
			out = append(out, ',')
		}
		out = append(out, b...)
	}
	return out, nil
}

// emptyArgs replays a call whose arguments were unusable.
var emptyArgs = json.RawMessage(`"{}"`)

// wireMessages writes one message: a tool message becomes one message per
// result.
func wireMessages(msg model.Message) []wireMessage {
	switch msg.Role {
	case model.RoleTool:
		out := make([]wireMessage, 0, len(msg.ToolResults))
		for _, r := range msg.ToolResults {
			out = append(out, wireMessage{Role: "tool", ToolCallID: r.CallID, Content: r.Text})
		}
		return out
	case model.RoleAssistant:
		w := wireMessage{Role: "assistant"}
		if msg.Text != "" || len(msg.ToolCalls) == 0 {
			w.Content = msg.Text
		}
		for _, r := range msg.Reasoning {
			switch r.Source {
			case "reasoning":
				w.Reasoning += r.Text
			case "reasoning_content":
				w.ReasoningContent += r.Text
			}
		}
		for _, c := range msg.ToolCalls {
			var wc wireToolCall
			wc.ID, wc.Type = c.ID, "function"
			wc.Function.Name = c.Name
			if c.Invalid != "" {
				wc.Function.Arguments = emptyArgs
			} else {
				b, _ := json.Marshal(string(c.Arguments))
				wc.Function.Arguments = b
			}
			w.ToolCalls = append(w.ToolCalls, wc)
		}
		return []wireMessage{w}
	}
	if len(msg.Images) == 0 {
		return []wireMessage{{Role: "user", Content: msg.Text}}
	}
	parts := []wirePart{{Type: "text", Text: msg.Text}}
	for _, img := range msg.Images {
		p := wirePart{Type: "image_url"}
		p.ImageURL = &struct {
			URL string `json:"url"`
		}{"data:" + img.MimeType + ";base64," + img.Data}
		parts = append(parts, p)
	}
	return []wireMessage{{Role: "user", Content: parts}}
}

type wireUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	PromptTokensDetails *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails *struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
	PromptCacheHitTokens int `json:"prompt_cache_hit_tokens"` // DeepSeek
}

func (u *wireUsage) usage() model.Usage {
	if u == nil {
		return model.Usage{}
	}
	out := model.Usage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens, CachedTokens: u.PromptCacheHitTokens}
	if u.PromptTokensDetails != nil && u.PromptTokensDetails.CachedTokens > 0 {
		out.CachedTokens = u.PromptTokensDetails.CachedTokens
	}
	if u.CompletionTokensDetails != nil {
		out.ReasoningTokens = u.CompletionTokensDetails.ReasoningTokens
	}
	return out
}
