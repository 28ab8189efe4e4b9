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
	"strings"

	"github.com/toolwire/toolwire/internal/jsonvalue"
	"github.com/toolwire/toolwire/model"
	"github.com/toolwire/toolwire/model/internal/adapter"
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
	envelope wirecache.Envelopes[settings]
}

func (m *Model) endpoint() *adapter.Endpoint {
	provider := m.Provider
	if provider == "" {
		provider = "openai"
	}
	bearer := ""
	if m.APIKey != "" {
		bearer = "Bearer " + m.APIKey
	}
	ep := adapter.NewEndpoint(provider, m.BaseURL, DefaultBaseURL, "/chat/completions", m.Header, "Authorization", bearer)
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

// settings is what a request's envelope is made from, but its tools.
type settings struct {
	name, system string
	choice       model.ToolChoice
	stream       bool
	maxTokens    int
	temperature  wirecache.Temperature
}

// encode writes the request body: the messages' encodings come from
// m.messages, and the rest from m.envelope while it stays the same.
func (m *Model) encode(req *model.Request, stream bool) ([]byte, error) {
	env, err := m.envelope.Get(settings{m.Name, req.System, req.ToolChoice, stream, req.MaxTokens, wirecache.TemperatureOf(req.Temperature)},
		req.Tools, func() (wirecache.Envelope, error) { return m.newEnvelope(req, stream) })
	if err != nil {
		return nil, err
	}
	msgs, err := m.messages.Encode(req.Messages, encodeMessage)
	if err != nil {
		return nil, err
	}
	return wirecache.Join(env, msgs), nil
}

func (m *Model) newEnvelope(req *model.Request, stream bool) (wirecache.Envelope, error) {
	var env wirecache.Envelope
	name, err := json.Marshal(m.Name)
	if err != nil {
		return env, err
	}
	env.Head = append(append([]byte(`{"model":`), name...), `,"messages":[`...)
	if req.System != "" {
		env.First = jsonvalue.AppendString([]byte(`{"role":"system","content":`), req.System)
		env.First = append(env.First, '}')
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
	env.Tail = wirecache.Tail(rest)
	return env, nil
}

// encodeMessage encodes msgs[i]: the wire messages it makes (a tool
// message makes one per result; none, without results), separated by
// commas. Strings are written as encoding/json writes them.
func encodeMessage(msgs []model.Message, i int) ([]byte, error) {
	msg := &msgs[i]
	b := make([]byte, 0, encodedSize(msg))
	switch msg.Role {
	case model.RoleTool:
		for j, r := range msg.ToolResults {
			if j > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"role":"tool","content":`...)
			b = jsonvalue.AppendString(b, r.Text)
			if r.CallID != "" {
				b = append(b, `,"tool_call_id":`...)
				b = jsonvalue.AppendString(b, r.CallID)
			}
			b = append(b, '}')
		}
	case model.RoleAssistant:
		b = append(b, `{"role":"assistant","content":`...)
		if msg.Text != "" || len(msg.ToolCalls) == 0 {
			b = jsonvalue.AppendString(b, msg.Text)
		} else {
			b = append(b, "null"...)
		}
		// Reasoning goes back in the field it came in.
		for _, source := range []string{"reasoning_content", "reasoning"} {
			var text strings.Builder
			for _, r := range msg.Reasoning {
				if r.Source == source {
					text.WriteString(r.Text)
				}
			}
			if text.Len() > 0 {
				b = append(append(append(b, `,"`...), source...), `":`...)
				b = jsonvalue.AppendString(b, text.String())
			}
		}
		for j, c := range msg.ToolCalls {
			if j == 0 {
				b = append(b, `,"tool_calls":[`...)
			} else {
				b = append(b, ',')
			}
			b = append(b, '{')
			if c.ID != "" {
				b = append(b, `"id":`...)
				b = append(jsonvalue.AppendString(b, c.ID), ',')
			}
			b = append(b, `"type":"function","function":{`...)
			if c.Name != "" {
				b = append(b, `"name":`...)
				b = append(jsonvalue.AppendString(b, c.Name), ',')
			}
			// The arguments go as a string of JSON; unusable ones as {}.
			b = append(b, `"arguments":`...)
			if c.Invalid != "" {
				b = append(b, `"{}"`...)
			} else {
				b = jsonvalue.AppendString(b, string(c.Arguments))
			}
			b = append(b, "}}"...)
		}
		if len(msg.ToolCalls) > 0 {
			b = append(b, ']')
		}
		b = append(b, '}')
	default:
		b = append(b, `{"role":"user","content":`...)
		if len(msg.Images) == 0 {
			b = jsonvalue.AppendString(b, msg.Text)
		} else {
			b = append(b, `[{"type":"text"`...)
			if msg.Text != "" {
				b = append(b, `,"text":`...)
				b = jsonvalue.AppendString(b, msg.Text)
			}
			b = append(b, '}')
			for _, img := range msg.Images {
				b = append(b, `,{"type":"image_url","image_url":{"url":`...)
				b = jsonvalue.AppendString(b, "data:"+img.MimeType+";base64,"+img.Data)
				b = append(b, "}}"...)
			}
			b = append(b, ']')
		}
		b = append(b, '}')
	}
	return b, nil
}

// encodedSize guesses the size of a message encoded: its strings, with
// room for some escapes, and the JSON around them.
func encodedSize(msg *model.Message) int {
	n := 64 + len(msg.Text)
	for _, r := range msg.Reasoning {
		n += len(r.Text)
	}
	for _, c := range msg.ToolCalls {
		n += 64 + len(c.ID) + len(c.Name) + len(c.Arguments)*5/4
	}
	for _, r := range msg.ToolResults {
		n += 48 + len(r.CallID) + len(r.Text)
	}
	for _, img := range msg.Images {
		n += 64 + len(img.MimeType) + len(img.Data)
	}
	return n + n/16
}

// wireUsage is what is read of an answer's usage.
type wireUsage struct {
	PromptTokens, CompletionTokens int
	PromptCacheHitTokens           int // DeepSeek
	cachedTokens                   int // prompt_tokens_details.cached_tokens
	reasoningTokens                int // completion_tokens_details.reasoning_tokens
}

func (u *wireUsage) usage() model.Usage {
	if u == nil {
		return model.Usage{}
	}
	out := model.Usage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens, CachedTokens: u.PromptCacheHitTokens}
	if u.cachedTokens > 0 {
		out.CachedTokens = u.cachedTokens
	}
	out.ReasoningTokens = u.reasoningTokens
	return out
}
