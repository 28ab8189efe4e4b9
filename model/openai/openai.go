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
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/toolwire/toolwire/model"
)

// DefaultBaseURL is OpenAI's API.
const DefaultBaseURL = "https://api.openai.com/v1"

// Model is a model behind a Chat Completions endpoint.
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
	return ep.Generate(ctx, m.wireRequest(req, onDelta != nil), onDelta, "x-request-id", readResponse,
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
	Index    *int   `json:"index,omitempty"`
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

type wireRequest struct {
	Model         string         `json:"model"`
	Messages      []wireMessage  `json:"messages"`
	Tools         []wireTool     `json:"tools,omitempty"`
	ToolChoice    any            `json:"tool_choice,omitempty"`
	Stream        bool           `json:"stream,omitempty"`
	StreamOptions map[string]any `json:"stream_options,omitempty"`
	MaxTokens     int            `json:"max_tokens,omitempty"`
	Temperature   *float64       `json:"temperature,omitempty"`
}

func (m *Model) wireRequest(req *model.Request, stream bool) *wireRequest {
	w := &wireRequest{Model: m.Name, Stream: stream, MaxTokens: req.MaxTokens, Temperature: req.Temperature}
	if stream {
		w.StreamOptions = map[string]any{"include_usage": true}
	}
	if req.System != "" {
		w.Messages = append(w.Messages, wireMessage{Role: "system", Content: req.System})
	}
	for _, msg := range req.Messages {
		w.Messages = append(w.Messages, wireMessages(msg)...)
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
	return w
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

type wireResponse struct {
	ID      string `json:"id"`
	Choices []struct {
		Message      wireMessage `json:"message"`
		Delta        wireMessage `json:"delta"`
		FinishReason *string     `json:"finish_reason"`
	} `json:"choices"`
	Usage *wireUsage      `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// readResponse reads a non-streamed answer.
func readResponse(resp *http.Response) (*model.Response, error) {
	var w wireResponse
	if err := json.NewDecoder(resp.Body).Decode(&w); err != nil {
		return nil, fmt.Errorf("reading the answer: %w", err)
	}
	if len(w.Choices) == 0 {
		return nil, fmt.Errorf("the answer has no choices")
	}
	c := w.Choices[0]
	acc := newAccumulator()
	acc.content(contentText(c.Message.Content), nil)
	acc.reasoning(c.Message)
	for i, tc := range c.Message.ToolCalls {
		if tc.Index == nil {
			tc.Index = &i
		}
		acc.toolCall(tc)
	}
	finish := ""
	if c.FinishReason != nil {
		finish = *c.FinishReason
	}
	res := acc.response(finish, w.Usage.usage())
	res.RequestID = w.ID
	return res, nil
}

// contentText reads a message's content: a string, or text parts.
func contentText(v any) string {
	switch c := v.(type) {
	case string:
		return c
	case []any:
		var b strings.Builder
		for _, p := range c {
			if m, ok := p.(map[string]any); ok {
				if t, ok := m["text"].(string); ok {
					b.WriteString(t)
				}
			}
		}
		return b.String()
	}
	return ""
}

// readStream reads a streamed answer, handing text to onDelta.
func readStream(ep *model.Endpoint, resp *http.Response, onDelta func(model.Delta)) (*model.Response, bool, error) {
	acc := newAccumulator()
	produced := false
	finish := ""
	var usage model.Usage
	id := ""
	emit := func(d model.Delta) {
		if d.Text != "" {
			produced = true
			onDelta(d)
		}
	}
	done := false
	err := model.ReadSSE(resp.Body, func(_ string, data []byte) error {
		if bytes.Equal(bytes.TrimSpace(data), []byte("[DONE]")) {
			done = true
			return nil
		}
		var w wireResponse
		if err := json.Unmarshal(data, &w); err != nil {
			return fmt.Errorf("reading a stream chunk %.200q: %w", data, err)
		}
		if len(w.Error) > 0 && string(w.Error) != "null" {
			return model.StreamError(ep.Provider, ep.URL, data)
		}
		if w.ID != "" {
			id = w.ID
		}
		if w.Usage != nil {
			usage = w.Usage.usage()
		}
		for _, c := range w.Choices {
			acc.reasoningDelta(c.Delta, emit)
			acc.content(contentText(c.Delta.Content), emit)
			for _, tc := range c.Delta.ToolCalls {
				acc.toolCall(tc)
			}
			if c.FinishReason != nil && *c.FinishReason != "" {
				finish = *c.FinishReason
			}
		}
		return nil
	})
	if err != nil {
		return nil, produced, err
	}
	if !done && finish == "" {
		return nil, produced, fmt.Errorf("the stream ended before the answer did")
	}
	acc.flush(emit)
	res := acc.response(finish, usage)
	res.RequestID = id
	return res, produced, nil
}
