// Package ollama is a model adapter for Ollama's native chat API
// (/api/chat). (Ollama also serves the OpenAI API at /v1: package
// model/openai speaks that.)
//
// A streamed answer is NDJSON: one JSON object a line, the last with
// "done": true and the token counts (prompt_eval_count, eval_count). Tool
// calls come whole, their arguments a JSON object rather than a string,
// and are sent back the same way; a call's id is used when the server
// sends one and made up otherwise. The thinking field is reasoning, sent
// back as it came; reasoning written inline between <think> tags is
// separated from the answer. Tool results are messages of role "tool"
// with the tool's name.
package ollama

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/toolwire/toolwire/model"
	"github.com/toolwire/toolwire/model/internal/adapter"
	"github.com/toolwire/toolwire/model/internal/wirecache"
)

// DefaultHost is where Ollama listens unless OLLAMA_HOST says otherwise.
const DefaultHost = "http://127.0.0.1:11434"

// HostURL reads OLLAMA_HOST as the Ollama CLI does: "host", "host:port",
// ":port" or a URL (http:// or https://, perhaps with a path); a missing
// host is 127.0.0.1 and a missing port 11434 (80 or 443 for a URL that
// names its scheme), and a port that is no port gives 127.0.0.1 and the
// default port. "" gives DefaultHost.
func HostURL(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return DefaultHost
	}
	defaultPort := "11434"
	scheme, hostport, ok := strings.Cut(s, "://")
	switch {
	case !ok:
		scheme, hostport = "http", s
	case scheme == "http":
		defaultPort = "80"
	case scheme == "https":
		defaultPort = "443"
	}
	hostport, path, _ := strings.Cut(hostport, "/")
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		host, port = hostport, defaultPort
		if ip := net.ParseIP(strings.Trim(hostport, "[]")); ip != nil {
			host = ip.String()
		}
	}
	if host == "" {
		host = "127.0.0.1"
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		host, port = "127.0.0.1", defaultPort // as the CLI does
	}
	u := url.URL{Scheme: scheme, Host: net.JoinHostPort(host, port)}
	if path != "" {
		u.Path = "/" + strings.TrimRight(path, "/")
	}
	return u.String()
}

// Model is a model served by Ollama. It keeps the encoding of the
// messages of its last few conversations, so that each request encodes
// only what is new since the one before; a Model must not be copied
// after its first request.
type Model struct {
	// Name is the model's name ("qwen3", "llama3.2:3b").
	Name string
	// Host is the server's URL (default DefaultHost); requests go to
	// Host + "/api/chat". HostURL reads OLLAMA_HOST into one.
	Host string
	// Think, when set, is sent as "think": whether a thinking model
	// thinks (and says so in the thinking field).
	Think *bool
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
	ep := adapter.NewEndpoint("ollama", m.Host, DefaultHost, "/api/chat", m.Header)
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
	return ep.Generate(ctx, body, onDelta, "",
		func(resp *http.Response) (*model.Response, error) {
			res, _, err := read(ep, resp, false, func(model.Delta) {})
			return res, err
		},
		func(resp *http.Response, onDelta func(model.Delta)) (*model.Response, bool, error) {
			return read(ep, resp, true, onDelta)
		})
}

// The wire format.

// wireRest is the part of a request after the messages.
type wireRest struct {
	Tools   []wireTool   `json:"tools,omitempty"`
	Stream  bool         `json:"stream"`
	Think   *bool        `json:"think,omitempty"`
	Options *wireOptions `json:"options,omitempty"`
}

type wireOptions struct {
	NumPredict  int      `json:"num_predict,omitempty"`
	Temperature *float64 `json:"temperature,omitempty"`
}

type wireTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

type wireMessage struct {
	Role       string         `json:"role"`
	Content    string         `json:"content"`
	Thinking   string         `json:"thinking,omitempty"`
	Images     []string       `json:"images,omitempty"`
	ToolCalls  []wireToolCall `json:"tool_calls,omitempty"`
	ToolName   string         `json:"tool_name,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
}

type wireToolCall struct {
	ID       string `json:"id,omitempty"`
	Function struct {
		Index     *int            `json:"index,omitempty"`
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

// settings is what a request's envelope is made from, but its tools.
type settings struct {
	name, system      string
	stream            bool
	think, thinkIsSet bool
	maxTokens         int
	temperature       wirecache.Temperature
	noTools           bool
}

// encode writes the request body: the messages' encodings come from
// m.messages, and the rest from m.envelope while it stays the same.
func (m *Model) encode(req *model.Request, stream bool) ([]byte, error) {
	s := settings{name: m.Name, system: req.System, stream: stream, thinkIsSet: m.Think != nil, maxTokens: req.MaxTokens,
		temperature: wirecache.TemperatureOf(req.Temperature), noTools: req.ToolChoice == model.ToolChoiceNone}
	if m.Think != nil {
		s.think = *m.Think
	}
	env, err := m.envelope.Get(s, req.Tools, func() (wirecache.Envelope, error) { return m.newEnvelope(req, stream) })
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
		if env.First, err = json.Marshal(wireMessage{Role: "system", Content: req.System}); err != nil {
			return env, err
		}
	}
	w := wireRest{Stream: stream, Think: m.Think}
	if req.MaxTokens > 0 || req.Temperature != nil {
		w.Options = &wireOptions{NumPredict: req.MaxTokens, Temperature: req.Temperature}
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
	// Ollama's native API has no tool choice: with "none" no tools are
	// offered; "required" and a named tool are left to the model.
	if req.ToolChoice == model.ToolChoiceNone {
		w.Tools = nil
	}
	rest, err := json.Marshal(w)
	if err != nil {
		return env, err
	}
	env.Tail = wirecache.Tail(rest)
	return env, nil
}

// encodeMessage encodes msgs[i]: the messages it makes (a tool message
// makes one per result; none, without results), separated by commas. A
// result without a tool name is paired by id, or else by its place, with
// the calls of the last assistant message before it.
func encodeMessage(msgs []model.Message, i int) ([]byte, error) {
	msg := &msgs[i]
	var out []wireMessage
	switch msg.Role {
	case model.RoleAssistant:
		wm := wireMessage{Role: "assistant", Content: msg.Text}
		for _, r := range msg.Reasoning {
			wm.Thinking += r.Text
		}
		for _, c := range msg.ToolCalls {
			var wc wireToolCall
			wc.ID = c.ID
			wc.Function.Name = c.Name
			wc.Function.Arguments = c.Arguments
			if c.Invalid != "" || len(c.Arguments) == 0 {
				wc.Function.Arguments = json.RawMessage(`{}`)
			}
			wm.ToolCalls = append(wm.ToolCalls, wc)
		}
		out = append(out, wm)
	case model.RoleTool:
		var lastCalls []model.ToolCall
		for j := i - 1; j >= 0; j-- {
			if msgs[j].Role == model.RoleAssistant {
				lastCalls = msgs[j].ToolCalls
				break
			}
		}
		for k, r := range msg.ToolResults {
			name := r.Name
			if name == "" {
				for _, c := range lastCalls {
					if c.ID == r.CallID {
						name = c.Name
					}
				}
				if name == "" && k < len(lastCalls) {
					name = lastCalls[k].Name
				}
			}
			wm := wireMessage{Role: "tool", Content: r.Text, ToolName: name, ToolCallID: r.CallID}
			for _, img := range r.Images {
				wm.Images = append(wm.Images, img.Data)
			}
			out = append(out, wm)
		}
	default:
		wm := wireMessage{Role: "user", Content: msg.Text}
		for _, img := range msg.Images {
			wm.Images = append(wm.Images, img.Data)
		}
		out = append(out, wm)
	}
	var b []byte
	for j, wm := range out {
		eb, err := json.Marshal(wm)
		if err != nil {
			return nil, err
		}
		if j > 0 {
			b = append(b, ',')
		}
		b = append(b, eb...)
	}
	return b, nil
}

type wireResponse struct {
	Message         *wireMessage `json:"message"`
	Done            bool         `json:"done"`
	DoneReason      string       `json:"done_reason"`
	PromptEvalCount int          `json:"prompt_eval_count"`
	EvalCount       int          `json:"eval_count"`
	Error           string       `json:"error"`
}

// read reads an answer, one JSON object or (streamed) a line of JSON per
// piece, handing text and thinking to emit.
func read(ep *adapter.Endpoint, resp *http.Response, stream bool, emit func(model.Delta)) (*model.Response, bool, error) {
	var (
		text     strings.Builder
		thinking strings.Builder
		think    adapter.ThinkSplitter
		inline   strings.Builder
		calls    []model.ToolCall
		produced bool
		last     wireResponse
	)
	out := func(kind model.DeltaKind, s string) {
		if s == "" {
			return
		}
		if kind == model.DeltaText {
			text.WriteString(s)
		} else {
			inline.WriteString(s)
		}
		if stream {
			produced = true
			emit(model.Delta{Kind: kind, Text: s})
		}
	}
	dec := json.NewDecoder(resp.Body)
	for {
		var w wireResponse
		if err := dec.Decode(&w); err != nil {
			if errors.Is(err, io.EOF) {
				return nil, produced, fmt.Errorf("the stream ended before the answer did")
			}
			return nil, produced, fmt.Errorf("reading the answer: %w", err)
		}
		if w.Error != "" {
			b, _ := json.Marshal(map[string]string{"error": w.Error})
			return nil, produced, adapter.StreamError(ep.Provider, ep.URL, b)
		}
		if m := w.Message; m != nil {
			if m.Thinking != "" {
				thinking.WriteString(m.Thinking)
				if stream {
					produced = true
					emit(model.Delta{Kind: model.DeltaReasoning, Text: m.Thinking})
				}
			}
			r, t := think.Write(m.Content)
			out(model.DeltaReasoning, r)
			out(model.DeltaText, t)
			for _, tc := range m.ToolCalls {
				calls = append(calls, toolCall(tc))
			}
		}
		if w.Done || !stream {
			last = w
			break
		}
	}
	r, t := think.Flush()
	out(model.DeltaReasoning, r)
	out(model.DeltaText, t)
	res := &model.Response{Usage: model.Usage{InputTokens: last.PromptEvalCount, OutputTokens: last.EvalCount}}
	res.Message = model.Message{Role: model.RoleAssistant, Text: text.String(), ToolCalls: calls}
	if thinking.Len() > 0 {
		res.Message.Reasoning = append(res.Message.Reasoning, model.Reasoning{Source: "thinking", Text: thinking.String()})
	}
	if inline.Len() > 0 {
		res.Message.Reasoning = append(res.Message.Reasoning, model.Reasoning{Source: "think", Text: inline.String()})
	}
	switch {
	case last.DoneReason == "length":
		res.StopReason = model.StopLength
		for i := range res.Message.ToolCalls {
			res.Message.ToolCalls[i].Invalid = "the answer was cut off by the length limit before the call was complete"
		}
	case len(calls) > 0:
		res.StopReason = model.StopToolCalls
	default:
		res.StopReason = model.StopEnd
	}
	return res, produced, nil
}

// toolCall reads a call: its arguments should be a JSON object.
func toolCall(tc wireToolCall) model.ToolCall {
	c := model.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments}
	if c.ID == "" {
		c.ID = adapter.NewCallID()
	}
	var v any
	switch {
	case len(c.Arguments) == 0 || string(c.Arguments) == "null":
		c.Arguments = json.RawMessage(`{}`)
	case json.Unmarshal(c.Arguments, &v) != nil:
		c.Invalid = "the arguments are not valid JSON"
	default:
		if s, ok := v.(string); ok {
			// Arguments sent as a string of JSON: read the object in it.
			c.Arguments = json.RawMessage(s)
			if json.Unmarshal(c.Arguments, &v) != nil {
				c.Invalid = "the arguments are not valid JSON"
				break
			}
		}
		if _, ok := v.(map[string]any); !ok {
			c.Invalid = "the arguments must be a JSON object"
		}
	}
	return c
}
