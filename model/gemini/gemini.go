// Package gemini is a model adapter for the Gemini API's generateContent
// and streamGenerateContent (with alt=sse: each event is a whole
// GenerateContentResponse carrying the next piece of the answer).
//
// What the API does its own way:
//   - tools are functionDeclarations with parametersJsonSchema; the
//     system prompt is systemInstruction; roles are user and model.
//   - finishReason is STOP even when the model called functions: the stop
//     reason is tool_calls whenever the answer has calls.
//   - functionCall parts rarely carry an id: one is made up
//     (adapter.NewCallID). The results go back as functionResponse parts in
//     the order of the calls, with the calls' names, and with the ids
//     (the API takes an id on both; the pair stays consistent);
//     functionResponse.response is {"output": text}, or {"error": text}
//     for a failed call.
//   - thoughtSignature, on a functionCall part, is kept in
//     model.ToolCall.Signature; on a text or thought part, in a
//     model.Reasoning (Source "signature" for text's, "thought" for a
//     thought's). All are sent back on the same kind of part.
//   - parts with thought: true are reasoning.
//   - finishReason MALFORMED_FUNCTION_CALL (the model wrote a call the API
//     could not parse) becomes a tool call with Invalid set, named after
//     the function when finishMessage shows it, so that the agent answers
//     it with an error result the model can repair from, as for any other
//     unusable call; it is sent back with arguments {}. When finishMessage
//     names no function, the call has no name, is not sent back, and its
//     result goes back as text.
//   - only Gemini's own reasoning is sent back: another provider's
//     signatures would fail Gemini's check.
//   - usage: InputTokens is promptTokenCount (cached included),
//     CachedTokens cachedContentTokenCount, OutputTokens
//     candidatesTokenCount + thoughtsTokenCount (as OpenAI counts
//     reasoning in the output), ReasoningTokens thoughtsTokenCount.
package gemini

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"github.com/toolwire/toolwire/internal/sse"
	"github.com/toolwire/toolwire/model"
	"github.com/toolwire/toolwire/model/internal/adapter"
	"github.com/toolwire/toolwire/model/internal/wirecache"
)

// maxStreamEvent bounds one event of a streamed answer: a chunk carries a
// delta, so a bigger one is a broken stream, not a long answer.
const maxStreamEvent = 16 << 20

// DefaultBaseURL is the Gemini API's host; requests go to BaseURL +
// "/v1beta/models/{model}:generateContent".
const DefaultBaseURL = "https://generativelanguage.googleapis.com"

// Model is a model behind the Gemini API. It keeps the encoding of the
// messages of its last few conversations, so that each request encodes
// only what is new since the one before; a Model must not be copied
// after its first request.
type Model struct {
	// Name is the model's id ("gemini-2.5-pro"), without "models/".
	Name string
	// BaseURL is the API's host (default DefaultBaseURL).
	BaseURL string
	// APIKey is sent as x-goog-api-key.
	APIKey string
	// IncludeThoughts asks for summaries of the model's thinking.
	IncludeThoughts bool
	// Header holds headers added to every request.
	Header http.Header
	// Client sends the requests (nil: http.DefaultClient).
	Client *http.Client
	Retry  model.RetryPolicy

	// What was encoded of the conversations so far, to send again
	// without encoding it again (see package wirecache).
	messages wirecache.Messages[encoded]
	envelope wirecache.Envelopes[settings]
}

func (m *Model) endpoint(stream bool) *adapter.Endpoint {
	path := "/v1beta/models/" + url.PathEscape(strings.TrimPrefix(m.Name, "models/"))
	if stream {
		path += ":streamGenerateContent?alt=sse"
	} else {
		path += ":generateContent"
	}
	ep := adapter.NewEndpoint("gemini", m.BaseURL, DefaultBaseURL, path, m.Header, "x-goog-api-key", m.APIKey)
	ep.Client, ep.Retry = m.Client, m.Retry
	return ep
}

// Generate sends the conversation to the API (see model.Model).
func (m *Model) Generate(ctx context.Context, req *model.Request, onDelta func(model.Delta)) (*model.Response, error) {
	ep := m.endpoint(onDelta != nil)
	body, err := m.encode(req)
	if err != nil {
		return nil, fmt.Errorf("%s: encoding the request: %w", ep.Provider, err)
	}
	return ep.Generate(ctx, body, onDelta, "", readResponse,
		func(resp *http.Response, onDelta func(model.Delta)) (*model.Response, bool, error) {
			return readStream(ep, resp, onDelta)
		})
}

// The wire format.

// wireRest is the part of a request after the contents.
type wireRest struct {
	SystemInstruction *wireContent      `json:"systemInstruction,omitempty"`
	Tools             []wireTool        `json:"tools,omitempty"`
	ToolConfig        *wireToolConfig   `json:"toolConfig,omitempty"`
	GenerationConfig  *wireGenerationCf `json:"generationConfig,omitempty"`
}

type wireGenerationCf struct {
	MaxOutputTokens int      `json:"maxOutputTokens,omitempty"`
	Temperature     *float64 `json:"temperature,omitempty"`
	ThinkingConfig  *struct {
		IncludeThoughts bool `json:"includeThoughts"`
	} `json:"thinkingConfig,omitempty"`
}

type wireTool struct {
	FunctionDeclarations []wireFunction `json:"functionDeclarations"`
}

type wireFunction struct {
	Name                 string          `json:"name"`
	Description          string          `json:"description,omitempty"`
	ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema,omitempty"`
}

type wireToolConfig struct {
	FunctionCallingConfig struct {
		Mode                 string   `json:"mode"`
		AllowedFunctionNames []string `json:"allowedFunctionNames,omitempty"`
	} `json:"functionCallingConfig"`
}

type wireContent struct {
	Role  string     `json:"role,omitempty"`
	Parts []wirePart `json:"parts"`
}

type wirePart struct {
	Text             *string           `json:"text,omitempty"`
	Thought          bool              `json:"thought,omitempty"`
	ThoughtSignature string            `json:"thoughtSignature,omitempty"`
	InlineData       *wireBlob         `json:"inlineData,omitempty"`
	FunctionCall     *wireFunctionCall `json:"functionCall,omitempty"`
	FunctionResponse *wireFunctionResp `json:"functionResponse,omitempty"`
}

type wireBlob struct {
	MimeType string `json:"mimeType"`
	Data     string `json:"data"`
}

type wireFunctionCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
}

type wireFunctionResp struct {
	ID       string         `json:"id,omitempty"`
	Name     string         `json:"name"`
	Response map[string]any `json:"response"`
}

func text(s string) *string { return &s }

// settings is what a request's envelope is made from, but its tools.
type settings struct {
	system          string
	maxTokens       int
	temperature     wirecache.Temperature
	includeThoughts bool
	choice          model.ToolChoice
}

// encode writes the request body: the messages' encodings come from
// m.messages, and the rest from m.envelope while it stays the same.
func (m *Model) encode(req *model.Request) ([]byte, error) {
	env, err := m.envelope.Get(settings{req.System, req.MaxTokens, wirecache.TemperatureOf(req.Temperature), m.IncludeThoughts, req.ToolChoice},
		req.Tools, func() (wirecache.Envelope, error) { return m.newEnvelope(req) })
	if err != nil {
		return nil, err
	}
	msgs, err := m.messages.Encode(req.Messages, encodeMessage)
	if err != nil {
		return nil, err
	}
	return joinContents(env, msgs), nil
}

func (m *Model) newEnvelope(req *model.Request) (wirecache.Envelope, error) {
	var w wireRest
	if req.System != "" {
		w.SystemInstruction = &wireContent{Parts: []wirePart{{Text: text(req.System)}}}
	}
	if req.MaxTokens > 0 || req.Temperature != nil || m.IncludeThoughts {
		w.GenerationConfig = &wireGenerationCf{MaxOutputTokens: req.MaxTokens, Temperature: req.Temperature}
		if m.IncludeThoughts {
			w.GenerationConfig.ThinkingConfig = &struct {
				IncludeThoughts bool `json:"includeThoughts"`
			}{true}
		}
	}
	if len(req.Tools) > 0 {
		var t wireTool
		for _, s := range req.Tools {
			t.FunctionDeclarations = append(t.FunctionDeclarations, wireFunction{Name: s.Name, Description: s.Description, ParametersJSONSchema: s.Parameters})
		}
		w.Tools = []wireTool{t}
		if req.ToolChoice != model.ToolChoiceAuto {
			tc := &wireToolConfig{}
			switch req.ToolChoice {
			case model.ToolChoiceNone:
				tc.FunctionCallingConfig.Mode = "NONE"
			case model.ToolChoiceRequired:
				tc.FunctionCallingConfig.Mode = "ANY"
			default:
				tc.FunctionCallingConfig.Mode = "ANY"
				tc.FunctionCallingConfig.AllowedFunctionNames = []string{string(req.ToolChoice)}
			}
			w.ToolConfig = tc
		}
	}
	rest, err := json.Marshal(w)
	if err != nil {
		return wirecache.Envelope{}, err
	}
	return wirecache.Envelope{Head: []byte(`{"contents":[`), Tail: wirecache.Tail(rest)}, nil
}

// emptyArgs replays a call whose arguments were unusable.
var emptyArgs = json.RawMessage(`{}`)

// encoded is a message's parts encoded, separated by commas, and the
// role of the content they go in.
type encoded struct {
	role  string
	parts []byte
}

// encodeMessage encodes the parts of msgs[i]. A tool result without a
// name is paired by id, or else by its place, with the calls of the last
// assistant message before it.
func encodeMessage(msgs []model.Message, i int) (encoded, error) {
	msg := &msgs[i]
	var parts []wirePart
	e := encoded{role: "user"}
	switch msg.Role {
	case model.RoleAssistant:
		e.role = "model"
		textSig := ""
		for _, r := range msg.Reasoning {
			// Only Gemini's own: another provider's signatures would
			// fail Gemini's check.
			switch {
			case r.Source == "signature":
				textSig = r.Signature
			case r.Source == "thought" && (r.Text != "" || r.Signature != ""):
				parts = append(parts, wirePart{Text: text(r.Text), Thought: true, ThoughtSignature: r.Signature})
			}
		}
		if msg.Text != "" || textSig != "" {
			parts = append(parts, wirePart{Text: text(msg.Text), ThoughtSignature: textSig})
		}
		for _, c := range msg.ToolCalls {
			if c.Name == "" {
				// A malformed call that named no function: its result
				// goes back as text.
				continue
			}
			args := c.Arguments
			if c.Invalid != "" || len(args) == 0 {
				args = emptyArgs
			}
			parts = append(parts, wirePart{FunctionCall: &wireFunctionCall{ID: c.ID, Name: c.Name, Args: args}, ThoughtSignature: c.Signature})
		}
		if len(parts) == 0 {
			parts = append(parts, wirePart{Text: text("")})
		}
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
				name = callName(lastCalls, r.CallID, k)
			}
			if name == "" {
				parts = append(parts, wirePart{Text: text(r.Text)})
				continue
			}
			resp := map[string]any{"output": r.Text}
			if r.IsError {
				resp = map[string]any{"error": r.Text}
			}
			parts = append(parts, wirePart{FunctionResponse: &wireFunctionResp{ID: r.CallID, Name: name, Response: resp}})
			for _, img := range r.Images {
				parts = append(parts, wirePart{InlineData: &wireBlob{MimeType: img.MimeType, Data: img.Data}})
			}
		}
	default:
		if msg.Text != "" || len(msg.Images) == 0 {
			parts = append(parts, wirePart{Text: text(msg.Text)})
		}
		for _, img := range msg.Images {
			parts = append(parts, wirePart{InlineData: &wireBlob{MimeType: img.MimeType, Data: img.Data}})
		}
	}
	var err error
	e.parts, err = wirecache.AppendList(e.parts, parts)
	return e, err
}

// joinContents writes the body: the envelope around the conversation,
// whose consecutive messages of one role (tool results, then the user's
// words) make one content.
func joinContents(env wirecache.Envelope, msgs []encoded) []byte {
	n := len(env.Head) + len(env.Tail)
	for _, m := range msgs {
		n += len(m.parts) + 32
	}
	b := append(make([]byte, 0, n), env.Head...)
	for i := 0; i < len(msgs); {
		j := i + 1
		for j < len(msgs) && msgs[j].role == msgs[i].role {
			j++
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = append(append(append(b, `{"role":"`...), msgs[i].role...), `","parts":`...)
		first := true
		for _, m := range msgs[i:j] {
			if len(m.parts) == 0 {
				continue
			}
			if first {
				b = append(b, '[')
			} else {
				b = append(b, ',')
			}
			first = false
			b = append(b, m.parts...)
		}
		if first {
			b = append(b, "null"...) // no parts at all
		} else {
			b = append(b, ']')
		}
		b = append(b, '}')
		i = j
	}
	return append(b, env.Tail...)
}

// callName finds the name of the call a result answers: by id, else by
// its place among the results.
func callName(calls []model.ToolCall, id string, i int) string {
	for _, c := range calls {
		if id != "" && c.ID == id {
			return c.Name
		}
	}
	if i < len(calls) {
		return calls[i].Name
	}
	return ""
}

type wireUsage struct {
	PromptTokenCount        int `json:"promptTokenCount"`
	CandidatesTokenCount    int `json:"candidatesTokenCount"`
	CachedContentTokenCount int `json:"cachedContentTokenCount"`
	ThoughtsTokenCount      int `json:"thoughtsTokenCount"`
}

func (u *wireUsage) usage() model.Usage {
	if u == nil {
		return model.Usage{}
	}
	return model.Usage{
		InputTokens:     u.PromptTokenCount,
		OutputTokens:    u.CandidatesTokenCount + u.ThoughtsTokenCount,
		CachedTokens:    u.CachedContentTokenCount,
		ReasoningTokens: u.ThoughtsTokenCount,
	}
}

type wireResponse struct {
	Candidates []struct {
		Content       wireContent `json:"content"`
		FinishReason  string      `json:"finishReason"`
		FinishMessage string      `json:"finishMessage"`
	} `json:"candidates"`
	PromptFeedback *struct {
		BlockReason string `json:"blockReason"`
	} `json:"promptFeedback"`
	UsageMetadata *wireUsage      `json:"usageMetadata"`
	ResponseID    string          `json:"responseId"`
	Error         json.RawMessage `json:"error"`
}

// answer puts an answer together from response chunks.
type answer struct {
	text          strings.Builder
	reasoning     []model.Reasoning
	calls         []model.ToolCall
	finish        string
	finishMessage string
	blocked       bool
	usage         model.Usage
	id            string
}

// chunk takes one response (the whole answer, or a piece of a stream).
func (a *answer) chunk(w *wireResponse, emit func(model.Delta)) {
	if w.ResponseID != "" {
		a.id = w.ResponseID
	}
	if w.UsageMetadata != nil {
		a.usage = w.UsageMetadata.usage()
	}
	if w.PromptFeedback != nil && w.PromptFeedback.BlockReason != "" {
		a.blocked = true
	}
	if len(w.Candidates) == 0 {
		return
	}
	c := w.Candidates[0]
	if c.FinishReason != "" {
		a.finish, a.finishMessage = c.FinishReason, c.FinishMessage
	}
	for _, p := range c.Content.Parts {
		switch {
		case p.FunctionCall != nil:
			call := model.ToolCall{ID: p.FunctionCall.ID, Name: p.FunctionCall.Name, Arguments: p.FunctionCall.Args, Signature: p.ThoughtSignature}
			if call.ID == "" {
				call.ID = adapter.NewCallID()
			}
			a.calls = append(a.calls, call)
		case p.Thought:
			t := ""
			if p.Text != nil {
				t = *p.Text
			}
			// A stream sends a thought in pieces: they make one.
			if n := len(a.reasoning); n > 0 && a.reasoning[n-1].Source == "thought" && a.reasoning[n-1].Signature == "" {
				a.reasoning[n-1].Text += t
				a.reasoning[n-1].Signature = p.ThoughtSignature
			} else {
				a.reasoning = append(a.reasoning, model.Reasoning{Source: "thought", Text: t, Signature: p.ThoughtSignature})
			}
			if t != "" {
				emit(model.Delta{Kind: model.DeltaReasoning, Text: t})
			}
		case p.Text != nil:
			if *p.Text != "" {
				a.text.WriteString(*p.Text)
				emit(model.Delta{Kind: model.DeltaText, Text: *p.Text})
			}
			if p.ThoughtSignature != "" {
				a.reasoning = append(a.reasoning, model.Reasoning{Source: "signature", Signature: p.ThoughtSignature})
			}
		}
	}
}

// malformedName finds the function a malformed call meant, in a
// finishMessage such as "Malformed function call: print(default_api.get_weather(...))".
var malformedName = regexp.MustCompile(`default_api\.([A-Za-z_][A-Za-z0-9_.:-]*)\s*\(`)

// response finishes the answer.
func (a *answer) response() *model.Response {
	res := &model.Response{Usage: a.usage, RequestID: a.id}
	res.Message = model.Message{Role: model.RoleAssistant, Text: a.text.String(), Reasoning: a.reasoning, ToolCalls: a.calls}
	for i := range res.Message.ToolCalls {
		c := &res.Message.ToolCalls[i]
		switch {
		case a.finish == "MAX_TOKENS":
			c.Invalid = "the answer was cut off by the length limit before the call was complete"
		case len(c.Arguments) == 0 || string(c.Arguments) == "null":
			c.Arguments = json.RawMessage(`{}`)
		default:
			var v any
			if json.Unmarshal(c.Arguments, &v) != nil {
				c.Invalid = "the arguments are not valid JSON"
			} else if _, ok := v.(map[string]any); !ok {
				c.Invalid = "the arguments must be a JSON object"
			}
		}
	}
	if a.finish == "MALFORMED_FUNCTION_CALL" || a.finish == "UNEXPECTED_TOOL_CALL" {
		name := ""
		if m := malformedName.FindStringSubmatch(a.finishMessage); m != nil {
			name = m[1]
		}
		why := "the model wrote a function call that could not be parsed"
		if a.finish == "UNEXPECTED_TOOL_CALL" {
			why = "the model called a function although none may be called"
		}
		if a.finishMessage != "" {
			why += ": " + a.finishMessage
		}
		res.Message.ToolCalls = append(res.Message.ToolCalls, model.ToolCall{ID: adapter.NewCallID(), Name: name, Arguments: emptyArgs, Invalid: why})
	}
	switch {
	case a.finish == "MAX_TOKENS":
		res.StopReason = model.StopLength
	case len(res.Message.ToolCalls) > 0:
		res.StopReason = model.StopToolCalls
	case a.blocked, a.finish == "SAFETY", a.finish == "RECITATION", a.finish == "BLOCKLIST", a.finish == "PROHIBITED_CONTENT", a.finish == "SPII", a.finish == "IMAGE_SAFETY":
		res.StopReason = model.StopFilter
	default:
		res.StopReason = model.StopEnd
	}
	return res
}

func noEmit(model.Delta) {}

// readResponse reads a non-streamed answer.
func readResponse(resp *http.Response) (*model.Response, error) {
	var w wireResponse
	if err := json.NewDecoder(resp.Body).Decode(&w); err != nil {
		return nil, fmt.Errorf("reading the answer: %w", err)
	}
	var a answer
	a.chunk(&w, noEmit)
	return a.response(), nil
}

// readStream reads a streamed answer, handing text and thoughts to
// onDelta.
func readStream(ep *adapter.Endpoint, resp *http.Response, onDelta func(model.Delta)) (*model.Response, bool, error) {
	var a answer
	produced := false
	emit := func(d model.Delta) {
		produced = true
		onDelta(d)
	}
	err := sse.Each(resp.Body, maxStreamEvent, 4<<10, func(ev sse.Event) error {
		data := ev.Data
		var w wireResponse
		if err := json.Unmarshal(data, &w); err != nil {
			return fmt.Errorf("reading a stream chunk %.200q: %w", data, err)
		}
		if len(w.Error) > 0 && string(w.Error) != "null" {
			return adapter.StreamError(ep.Provider, ep.URL, data)
		}
		a.chunk(&w, emit)
		return nil
	})
	if err != nil {
		return nil, produced, err
	}
	if a.finish == "" && !a.blocked {
		return nil, produced, fmt.Errorf("the stream ended before the answer did")
	}
	return a.response(), produced, nil
}
