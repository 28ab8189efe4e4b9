package gemini_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/toolwire/toolwire/model"
	"github.com/toolwire/toolwire/model/gemini"
	"github.com/toolwire/toolwire/model/internal/wiretest"
)

var weatherSchema = json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"},"unit":{"type":"string","enum":["celsius","fahrenheit"]}},"required":["city"]}`)

func ask(choice model.ToolChoice) *model.Request {
	return &model.Request{
		System:   "You are terse.",
		Messages: []model.Message{{Role: model.RoleUser, Text: "Weather in Paris, and the time?"}},
		Tools: []model.ToolSpec{
			{Name: "get_weather", Description: "Current weather in a city.", Parameters: weatherSchema},
			{Name: "get_time", Description: "The time now.", Parameters: json.RawMessage(`{"type":"object","properties":{}}`)},
		},
		ToolChoice: choice,
	}
}

// history is a conversation after a turn of calls: a thought, a text
// signature and a call signature to send back, a call that was unusable,
// results without names or ids of the provider's (paired by order), one
// failed, and the user's next words.
func history() *model.Request {
	return &model.Request{
		Messages: []model.Message{
			{Role: model.RoleUser, Text: "Weather in Tokyo and Osaka?", Images: []model.Image{{MimeType: "image/jpeg", Data: "/9j/4AAQ"}}},
			{Role: model.RoleAssistant, Text: "Checking.",
				Reasoning: []model.Reasoning{
					{Source: "thought", Text: "I will look up the weather."},
					{Source: "signature", Signature: "CiwB0e2Kb7Ss"},
					{Source: "thinking", Text: "Anthropic's, signed by Anthropic", Signature: "EqQBCgIY"},
				},
				ToolCalls: []model.ToolCall{
					{ID: "Ab3dE6gH9", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Tokyo"}`), Signature: "CtYBAdHtim9h"},
					{ID: "Zx8wV7uT6", Name: "get_weather", Arguments: json.RawMessage(`"Osaka"`), Invalid: "the arguments must be a JSON object"},
					{ID: "Mf5cL2pQ1", Invalid: "the model wrote a function call that could not be parsed"},
				}},
			{Role: model.RoleTool, ToolResults: []model.ToolResult{
				{CallID: "Ab3dE6gH9", Text: "18°C, clear"},
				{CallID: "Zx8wV7uT6", Text: "the arguments must be a JSON object", IsError: true},
				{CallID: "Mf5cL2pQ1", Text: "your function call could not be parsed: write it again", IsError: true},
			}},
			{Role: model.RoleUser, Text: "Thanks. And tomorrow?"},
		},
		Tools:       []model.ToolSpec{{Name: "get_weather", Parameters: weatherSchema}},
		ToolChoice:  "get_weather",
		MaxTokens:   512,
		Temperature: new(0.2),
	}
}

func TestGenerate(t *testing.T) {
	sse := http.Header{"Content-Type": {"text/event-stream"}}
	tests := []struct {
		name        string
		reply       wiretest.Reply
		stream      bool
		req         *model.Request
		wantRequest string
		want        *model.Response
		wantDeltas  wiretest.Deltas
	}{{
		name:        "text, systemInstruction, usage with cached and thought tokens",
		reply:       wiretest.Reply{File: "text.json"},
		req:         &model.Request{System: "You are terse.", Messages: []model.Message{{Role: model.RoleUser, Text: "Capital of France?"}}, MaxTokens: 256},
		wantRequest: "text.request.json",
		want: &model.Response{
			Message:    model.Message{Text: "Paris is the capital of France."},
			StopReason: model.StopEnd,
			Usage:      model.Usage{InputTokens: 1210, OutputTokens: 8 + 64, CachedTokens: 1024, ReasoningTokens: 64},
			RequestID:  "mKxnaKWiLZ3PnvgP1Kj-yAk",
		},
	}, {
		name:        "functionCalls without ids under finishReason STOP, thoughtSignature kept, functionDeclarations and mode ANY sent",
		reply:       wiretest.Reply{File: "function_calls.json"},
		req:         ask(model.ToolChoiceRequired),
		wantRequest: "function_calls.request.json",
		want: &model.Response{
			Message: model.Message{ToolCalls: []model.ToolCall{
				{ID: wiretest.AnyID, Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris","unit":"celsius"}`), Signature: "CiQB0e2Kb3dRh+BYdbZvmulSN2Pwwq75wsl7Aq6T4wWIwaeZUkcKYwHR7Yq"},
				{ID: wiretest.AnyID, Name: "get_time", Arguments: json.RawMessage(`{}`)},
			}},
			StopReason: model.StopToolCalls,
			Usage:      model.Usage{InputTokens: 120, OutputTokens: 30 + 80, ReasoningTokens: 80},
			RequestID:  "Fn9naLrVOfS1nvgPq4HMgQ8",
		},
	}, {
		name:  "MALFORMED_FUNCTION_CALL is an invalid call named from finishMessage",
		reply: wiretest.Reply{File: "malformed.json"},
		req:   ask(model.ToolChoiceAuto),
		want: &model.Response{
			Message:    model.Message{ToolCalls: []model.ToolCall{{ID: wiretest.AnyID, Name: "get_weather", Invalid: "malformed"}}},
			StopReason: model.StopToolCalls,
			Usage:      model.Usage{InputTokens: 95},
		},
	}, {
		name:  "MALFORMED_FUNCTION_CALL without a finishMessage: an invalid call with no name",
		reply: wiretest.Reply{File: "malformed_unnamed.json"},
		req:   ask(model.ToolChoiceAuto),
		want: &model.Response{
			Message:    model.Message{ToolCalls: []model.ToolCall{{ID: wiretest.AnyID, Invalid: "malformed"}}},
			StopReason: model.StopToolCalls,
			Usage:      model.Usage{InputTokens: 95},
		},
	}, {
		name:  "MAX_TOKENS: a call in the cut answer is invalid",
		reply: wiretest.Reply{File: "max_tokens.json"},
		req:   ask(model.ToolChoiceAuto),
		want: &model.Response{
			Message:    model.Message{Text: "Writing the file now.", ToolCalls: []model.ToolCall{{ID: wiretest.AnyID, Name: "write_file", Invalid: "cut off"}}},
			StopReason: model.StopLength,
			Usage:      model.Usage{InputTokens: 300, OutputTokens: 64},
		},
	}, {
		name:        "stream (SSE, CRLF): thought parts are reasoning, a signature on an empty text part is kept",
		reply:       wiretest.Reply{File: "stream_text.sse", Header: sse},
		stream:      true,
		req:         &model.Request{Messages: []model.Message{{Role: model.RoleUser, Text: "Capital of France?"}}},
		wantRequest: "stream_text.request.json",
		want: &model.Response{
			Message: model.Message{Text: "Paris is the capital of France.", Reasoning: []model.Reasoning{
				{Source: "thought", Text: "**Recalling the capital**\n\nThe user asks for a capital."},
				{Source: "signature", Signature: "CiwB0e2Kb7Ssm0fE2L2uJ1hD1p7bq6Ff"},
			}},
			StopReason: model.StopEnd,
			Usage:      model.Usage{InputTokens: 7, OutputTokens: 7 + 93, ReasoningTokens: 93},
			RequestID:  "s4BnaMb1Ftyd1dkPmfvn8QY",
		},
		wantDeltas: wiretest.Deltas{Text: "Paris is the capital of France.", Reasoning: "**Recalling the capital**\n\nThe user asks for a capital.", N: 3},
	}, {
		name:   "stream: parallel calls in one chunk, an id when the API gives one, no args is {}",
		reply:  wiretest.Reply{File: "stream_function_calls.sse", Header: sse},
		stream: true,
		req:    ask(model.ToolChoiceAuto),
		want: &model.Response{
			Message: model.Message{Text: "Checking.",
				Reasoning: []model.Reasoning{{Source: "thought", Text: "I will look up the weather, then the time."}},
				ToolCalls: []model.ToolCall{
					{ID: wiretest.AnyID, Name: "get_weather", Arguments: json.RawMessage(`{"city":"Tokyo"}`), Signature: "CtYBAdHtim9hQ0wB9v0R6kzW2d6GSn"},
					{ID: wiretest.AnyID, Name: "get_weather", Arguments: json.RawMessage(`{"city":"Osaka"}`)},
					{ID: "call-7f3a", Name: "get_time", Arguments: json.RawMessage(`{}`)},
				}},
			StopReason: model.StopToolCalls,
			Usage:      model.Usage{InputTokens: 120, OutputTokens: 30 + 40, CachedTokens: 64, ReasoningTokens: 40},
			RequestID:  "d5BnaJ3pA8-m1dkP3tLhqQs",
		},
		wantDeltas: wiretest.Deltas{Text: "Checking.", Reasoning: "I will look up the weather, then the time.", N: 2},
	}, {
		name:        "history: functionResponse {output}/{error} paired by order, signatures replayed (Gemini's only), invalid call as {}, a nameless malformed call's result as text",
		reply:       wiretest.Reply{File: "text.json"},
		req:         history(),
		wantRequest: "history.request.json",
		want: &model.Response{
			Message:    model.Message{Text: "Paris is the capital of France."},
			StopReason: model.StopEnd,
			Usage:      model.Usage{InputTokens: 1210, OutputTokens: 8 + 64, CachedTokens: 1024, ReasoningTokens: 64},
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := wiretest.NewServer(t, tt.reply)
			m := &gemini.Model{Name: "gemini-2.5-pro", BaseURL: srv.URL, APIKey: "AIza-test"}
			wantPath := "/v1beta/models/gemini-2.5-pro:generateContent"
			if tt.stream {
				wantPath = "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
			}
			req := wiretest.Exchange(t, srv, m, tt.req, tt.stream, tt.want, tt.wantDeltas)
			if r := req; r.Path != wantPath || r.Header.Get("x-goog-api-key") != "AIza-test" {
				t.Errorf("request to %s with key %q, want %s", r.Path, r.Header.Get("x-goog-api-key"), wantPath)
			}
			if tt.wantRequest != "" {
				wiretest.EqualJSON(t, req.Body, tt.wantRequest)
			}
		})
	}
}

// TestStreamIncomplete: a stream that ends without a finishReason is an
// error, not a short answer.
func TestStreamIncomplete(t *testing.T) {
	srv := wiretest.NewServer(t, wiretest.Reply{
		Header: http.Header{"Content-Type": {"text/event-stream"}},
		Body:   "data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \"Par\"}],\"role\": \"model\"},\"index\": 0}]}\r\n\r\n",
	})
	m := &gemini.Model{Name: "gemini-2.5-flash", BaseURL: srv.URL, APIKey: "k"}
	var d wiretest.Deltas
	if _, err := m.Generate(context.Background(), ask(model.ToolChoiceAuto), d.On); err == nil {
		t.Fatal("no error")
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests, want 1: a stream that produced output is not retried", n)
	}
}

// TestAPIError: an error answer keeps Google's message, status name and
// code.
func TestAPIError(t *testing.T) {
	srv := wiretest.NewServer(t, wiretest.Reply{
		Status: http.StatusBadRequest,
		Body: `{"error": {"code": 400, "message": "API key not valid. Please pass a valid API key.", "status": "INVALID_ARGUMENT",
  "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID", "domain": "googleapis.com"}]}}`,
	})
	m := &gemini.Model{Name: "gemini-2.5-flash", BaseURL: srv.URL, APIKey: "k"}
	_, err := m.Generate(context.Background(), ask(model.ToolChoiceAuto), nil)
	var ae *model.APIError
	if !errors.As(err, &ae) {
		t.Fatalf("error %v, want an *APIError", err)
	}
	if ae.Provider != "gemini" || ae.Status != 400 || ae.Type != "INVALID_ARGUMENT" || ae.Message != "API key not valid. Please pass a valid API key." {
		t.Errorf("error %+v", *ae)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

// TestToolChoice: each tool choice as the API spells it.
func TestToolChoice(t *testing.T) {
	tests := []struct {
		choice model.ToolChoice
		want   string // the toolConfig sent, "" for none
	}{
		{model.ToolChoiceAuto, ""},
		{model.ToolChoiceNone, `{"functionCallingConfig":{"mode":"NONE"}}`},
		{model.ToolChoiceRequired, `{"functionCallingConfig":{"mode":"ANY"}}`},
		{"get_time", `{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["get_time"]}}`},
	}
	for _, tt := range tests {
		t.Run(string(tt.choice), func(t *testing.T) {
			srv := wiretest.NewServer(t, wiretest.Reply{File: "text.json"})
			m := &gemini.Model{Name: "gemini-2.5-flash", BaseURL: srv.URL, APIKey: "k"}
			if _, err := m.Generate(context.Background(), ask(tt.choice), nil); err != nil {
				t.Fatal(err)
			}
			var body struct {
				ToolConfig json.RawMessage `json:"toolConfig"`
			}
			if err := json.Unmarshal(srv.Requests()[0].Body, &body); err != nil {
				t.Fatal(err)
			}
			if string(body.ToolConfig) != tt.want {
				t.Errorf("toolConfig %s, want %s", body.ToolConfig, tt.want)
			}
		})
	}
}

// TestReuse: what the model keeps of a conversation between requests is
// never sent once the history changed: each request is byte for byte a
// new model's.
func TestReuse(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			reply := wiretest.Reply{File: "text.json"}
			if stream {
				reply = wiretest.Reply{File: "stream_text.sse", Header: http.Header{"Content-Type": {"text/event-stream"}}}
			}
			srv := wiretest.NewServer(t, reply)
			newModel := func() model.Model { return &gemini.Model{Name: "gemini-2.5-flash", BaseURL: srv.URL, APIKey: "k"} }
			wiretest.CheckReuse(t, srv, newModel(), newModel, stream)
		})
	}
}
