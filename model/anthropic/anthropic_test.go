package anthropic_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/toolwire/toolwire/model"
	"github.com/toolwire/toolwire/model/anthropic"
	"github.com/toolwire/toolwire/model/internal/wiretest"
)

var weatherSchema = json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"},"unit":{"type":"string","enum":["celsius","fahrenheit"]}},"required":["city"]}`)

// ask is a first turn with two tools.
func ask(choice model.ToolChoice) *model.Request {
	return &model.Request{
		System:   "You are terse.",
		Messages: []model.Message{{Role: model.RoleUser, Text: "Weather in Paris, and the time?"}},
		Tools: []model.ToolSpec{
			{Name: "get_weather", Description: "Current weather in a city.", Parameters: weatherSchema},
			{Name: "get_time", Description: "The time now."},
		},
		ToolChoice: choice,
	}
}

// history is a conversation after a turn of tool calls: thinking with
// its signature, redacted thinking, a call whose arguments were unusable,
// results (one failed) and a user message after them.
func history() *model.Request {
	return &model.Request{
		Messages: []model.Message{
			{Role: model.RoleUser, Text: "Weather in Oslo and Lyon?", Images: []model.Image{{MimeType: "image/png", Data: "iVBORw0KGgo="}}},
			{Role: model.RoleAssistant, Text: "Checking.",
				Reasoning: []model.Reasoning{
					{Source: "thinking", Text: "I should call get_weather twice.", Signature: "EqQBCgIYAhIM1gbc"},
					{Source: "redacted_thinking", Redacted: "EmwKAhgBEgy3va3p"},
					{Source: "think", Text: "inline thoughts from another provider"},
					{Source: "thought", Text: "Gemini's, signed by Google", Signature: "CiQB0e2K"},
				},
				ToolCalls: []model.ToolCall{
					{ID: "toolu_01", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Oslo"}`)},
					{ID: "toolu_02", Name: "get_weather", Arguments: json.RawMessage(`{"city": "Lyon",}`), Invalid: "the arguments are not valid JSON"},
				}},
			{Role: model.RoleTool, ToolResults: []model.ToolResult{
				{CallID: "toolu_01", Name: "get_weather", Text: "-3°C, snow"},
				{CallID: "toolu_02", Name: "get_weather", Text: "invalid arguments: not valid JSON", IsError: true},
			}},
			{Role: model.RoleUser, Text: "And in Kelvin?"},
		},
		Tools:      []model.ToolSpec{{Name: "get_weather", Parameters: weatherSchema}},
		ToolChoice: "get_weather",
		MaxTokens:  1024,
	}
}

func TestGenerate(t *testing.T) {
	sse := http.Header{"Content-Type": {"text/event-stream"}}
	tests := []struct {
		name        string
		reply       wiretest.Reply
		stream      bool
		budget      int // Model.ThinkingBudget
		req         *model.Request
		wantRequest string // golden file of the request body
		want        *model.Response
		wantDeltas  wiretest.Deltas
	}{{
		name:        "text, usage with cache reads, request id",
		reply:       wiretest.Reply{File: "text.json", Header: http.Header{"Request-Id": {"req_011CSHoEeqs5C35K2UUqR7Fy"}}},
		req:         &model.Request{System: "You are terse.", Messages: []model.Message{{Role: model.RoleUser, Text: "Capital of France?"}}},
		wantRequest: "text.request.json",
		want: &model.Response{
			Message:    model.Message{Text: "Paris is the capital of France."},
			StopReason: model.StopEnd,
			Usage:      model.Usage{InputTokens: 12 + 100 + 2048, OutputTokens: 9, CachedTokens: 2048},
			RequestID:  "req_011CSHoEeqs5C35K2UUqR7Fy",
		},
	}, {
		name:        "tool_use blocks, system on top, tool_choice any",
		reply:       wiretest.Reply{File: "tool_use.json"},
		req:         ask(model.ToolChoiceRequired),
		wantRequest: "tool_use.request.json",
		want: &model.Response{
			Message: model.Message{Text: "I'll check both cities.", ToolCalls: []model.ToolCall{
				{ID: "toolu_01A09q90qw90lq917835lq9", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris","unit":"celsius"}`)},
				{ID: "toolu_01B19r01rx01mr028946mr0", Name: "get_time", Arguments: json.RawMessage(`{}`)},
			}},
			StopReason: model.StopToolCalls,
			Usage:      model.Usage{InputTokens: 472, OutputTokens: 91},
			RequestID:  "msg_01Aq9w938a90dw8q",
		},
	}, {
		name:        "stream: text deltas among pings, usage of message_delta replaces message_start's",
		reply:       wiretest.Reply{File: "stream_text.sse", Header: sse},
		stream:      true,
		req:         &model.Request{Messages: []model.Message{{Role: model.RoleUser, Text: "Hi"}}},
		wantRequest: "stream_text.request.json",
		want: &model.Response{
			Message:    model.Message{Text: "Hello, world!"},
			StopReason: model.StopEnd,
			Usage:      model.Usage{InputTokens: 25 + 1024, OutputTokens: 15, CachedTokens: 1024},
		},
		wantDeltas: wiretest.Deltas{Text: "Hello, world!", N: 3},
	}, {
		name:   "stream: input_json_delta split inside an escape; a tool with no input is {}",
		reply:  wiretest.Reply{File: "stream_tool_use.sse", Header: sse},
		stream: true,
		req:    ask(model.ToolChoiceAuto),
		want: &model.Response{
			Message: model.Message{Text: "Let me look.", ToolCalls: []model.ToolCall{
				{ID: "toolu_01T1x1fJ34qAmk2tNTrN7Up6", Name: "get_weather", Arguments: json.RawMessage(`{"city":"San Francisco, été","unit":"fahrenheit"}`)},
				{ID: "toolu_01B19r01rx01mr028946mr0", Name: "get_time", Arguments: json.RawMessage(`{}`)},
			}},
			StopReason: model.StopToolCalls,
			Usage:      model.Usage{InputTokens: 472, OutputTokens: 89},
		},
		wantDeltas: wiretest.Deltas{Text: "Let me look.", N: 1},
	}, {
		name:        "stream: thinking with its signature, redacted thinking; thinking asked for with room in max_tokens",
		reply:       wiretest.Reply{File: "stream_thinking.sse", Header: sse},
		stream:      true,
		budget:      8000,
		req:         &model.Request{Messages: []model.Message{{Role: model.RoleUser, Text: "Weather in Oslo?"}}, Tools: []model.ToolSpec{{Name: "get_weather", Parameters: weatherSchema}}},
		wantRequest: "stream_thinking.request.json",
		want: &model.Response{
			Message: model.Message{
				Reasoning: []model.Reasoning{
					{Source: "thinking", Text: "The user wants the weather. I should call get_weather.", Signature: "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"},
					{Source: "redacted_thinking", Redacted: "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"},
				},
				ToolCalls: []model.ToolCall{{ID: "toolu_01CqTh1nk1ngT00lUs3", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Oslo"}`)}},
			},
			StopReason: model.StopToolCalls,
			Usage:      model.Usage{InputTokens: 90, OutputTokens: 160},
		},
		wantDeltas: wiretest.Deltas{Reasoning: "The user wants the weather. I should call get_weather.", N: 2},
	}, {
		name:   "stream: max_tokens cuts a call, which is invalid",
		reply:  wiretest.Reply{File: "stream_max_tokens.sse", Header: sse},
		stream: true,
		req:    ask(model.ToolChoiceAuto),
		want: &model.Response{
			Message:    model.Message{ToolCalls: []model.ToolCall{{ID: "toolu_01MaxT0kensCut", Name: "write_file", Invalid: "cut off"}}},
			StopReason: model.StopLength,
			Usage:      model.Usage{InputTokens: 300, OutputTokens: 16},
		},
	}, {
		name:   "stream: invalid JSON input is an invalid call",
		reply:  wiretest.Reply{File: "stream_invalid_json.sse", Header: sse},
		stream: true,
		req:    ask(model.ToolChoiceAuto),
		want: &model.Response{
			Message:    model.Message{ToolCalls: []model.ToolCall{{ID: "toolu_01Inval1dJs0n", Name: "get_weather", Invalid: "not JSON"}}},
			StopReason: model.StopToolCalls,
			Usage:      model.Usage{InputTokens: 40, OutputTokens: 12},
		},
	}, {
		name:        "history: thinking replayed with signatures, results in one user message first, is_error, invalid call as {}",
		reply:       wiretest.Reply{File: "text.json"},
		req:         history(),
		wantRequest: "history.request.json",
		want: &model.Response{
			Message:    model.Message{Text: "Paris is the capital of France."},
			StopReason: model.StopEnd,
			Usage:      model.Usage{InputTokens: 12 + 100 + 2048, OutputTokens: 9, CachedTokens: 2048},
		},
	}, {
		name:  "history: results that come after a user message, in two tool messages, still lead it in order; an empty result has no text block",
		reply: wiretest.Reply{File: "text.json"},
		req: &model.Request{Messages: []model.Message{
			{Role: model.RoleUser, Text: "Time?"},
			{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "toolu_09", Name: "get_time", Arguments: json.RawMessage(`{}`)}, {ID: "toolu_10", Name: "clear_cache"}}},
			{Role: model.RoleUser, Text: "In UTC, please."},
			{Role: model.RoleTool, ToolResults: []model.ToolResult{{CallID: "toolu_09", Text: "03:35"}}},
			{Role: model.RoleTool, ToolResults: []model.ToolResult{{CallID: "toolu_10", Text: ""}}},
		}},
		wantRequest: "results_first.request.json",
		want: &model.Response{
			Message:    model.Message{Text: "Paris is the capital of France."},
			StopReason: model.StopEnd,
			Usage:      model.Usage{InputTokens: 12 + 100 + 2048, OutputTokens: 9, CachedTokens: 2048},
		},
	}, {
		name:  "tool search: deferred tools with defer_loading, a search's result as tool_reference blocks (its text left out), a result without references as text",
		reply: wiretest.Reply{File: "tool_use.json"},
		req: &model.Request{
			Messages: []model.Message{
				{Role: model.RoleUser, Text: "Weather in Paris?"},
				{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{
					{ID: "toolu_s1", Name: "search_tools", Arguments: json.RawMessage(`{"query":"weather"}`)},
					{ID: "toolu_s2", Name: "search_tools", Arguments: json.RawMessage(`{"query":"zebra"}`)},
				}},
				{Role: model.RoleTool, ToolResults: []model.ToolResult{
					{CallID: "toolu_s1", Name: "search_tools", Text: "2 of 3 tools match: get_weather, get_time", ToolRefs: []string{"get_weather", "get_time"}},
					{CallID: "toolu_s2", Name: "search_tools", Text: `No tool matches "zebra".`},
				}},
			},
			Tools: []model.ToolSpec{
				{Name: "search_tools", Description: "Finds tools.", Parameters: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}`)},
				{Name: "get_weather", Description: "Current weather in a city.", Parameters: weatherSchema, Deferred: true},
				{Name: "get_time", Description: "The time now.", Deferred: true},
			},
		},
		wantRequest: "tool_search.request.json",
		want: &model.Response{
			Message: model.Message{Text: "I'll check both cities.", ToolCalls: []model.ToolCall{
				{ID: "toolu_01A09q90qw90lq917835lq9", Name: "get_weather", Arguments: json.RawMessage(`{"city": "Paris", "unit": "celsius"}`)},
				{ID: "toolu_01B19r01rx01mr028946mr0", Name: "get_time", Arguments: json.RawMessage(`{}`)},
			}},
			StopReason: model.StopToolCalls,
			Usage:      model.Usage{InputTokens: 472, OutputTokens: 91},
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := wiretest.NewServer(t, tt.reply)
			m := &anthropic.Model{Name: "claude-sonnet-4-5", BaseURL: srv.URL, APIKey: "sk-ant-test", ThinkingBudget: tt.budget}
			req := wiretest.Exchange(t, srv, m, tt.req, tt.stream, tt.want, tt.wantDeltas)
			r := req
			if r.Path != "/v1/messages" || r.Header.Get("x-api-key") != "sk-ant-test" || r.Header.Get("anthropic-version") != "2023-06-01" {
				t.Errorf("request to %s with key %q, version %q", r.Path, r.Header.Get("x-api-key"), r.Header.Get("anthropic-version"))
			}
			var body struct {
				Stream    bool `json:"stream"`
				MaxTokens int  `json:"max_tokens"`
			}
			if err := json.Unmarshal(r.Body, &body); err != nil {
				t.Fatal(err)
			}
			if body.Stream != tt.stream {
				t.Errorf("stream %v, want %v", body.Stream, tt.stream)
			}
			want := tt.req.MaxTokens
			if want == 0 {
				want = anthropic.DefaultMaxTokens
			}
			if tt.budget >= want {
				want = tt.budget + anthropic.DefaultMaxTokens
			}
			if body.MaxTokens != want {
				t.Errorf("max_tokens %d, want %d", body.MaxTokens, want)
			}
			if tt.wantRequest != "" {
				wiretest.EqualJSON(t, r.Body, tt.wantRequest)
			}
		})
	}
}

// TestStreamError: an error event in the middle of a stream is an
// *APIError with the provider's type and message, temporary for an
// overload, and not retried once text was shown.
func TestStreamError(t *testing.T) {
	srv := wiretest.NewServer(t, wiretest.Reply{File: "stream_error.sse", Header: http.Header{"Content-Type": {"text/event-stream"}}})
	m := &anthropic.Model{Name: "claude-sonnet-4-5", BaseURL: srv.URL, APIKey: "k"}
	var d wiretest.Deltas
	_, err := m.Generate(context.Background(), ask(model.ToolChoiceAuto), d.On)
	var ae *model.APIError
	if !errors.As(err, &ae) {
		t.Fatalf("error %v, want an *APIError", err)
	}
	if ae.Type != "overloaded_error" || ae.Message != "Overloaded" || !ae.Temporary() {
		t.Errorf("error %+v, want a temporary overloaded_error", ae)
	}
	if d.Text != "Partial" {
		t.Errorf("text shown %q, want %q", d.Text, "Partial")
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests, want 1: a stream that produced output is not retried", n)
	}
}

// TestAPIError: an error answer keeps the provider's message, type,
// status and request id.
func TestAPIError(t *testing.T) {
	srv := wiretest.NewServer(t, wiretest.Reply{
		Status: http.StatusBadRequest,
		Header: http.Header{"Request-Id": {"req_018EeWyXxfu5pfWkrYcMdjWG"}},
		Body:   `{"type":"error","error":{"type":"invalid_request_error","message":"messages.1.content.0: unexpected tool_use_id found in tool_result blocks"}}`,
	})
	m := &anthropic.Model{Name: "claude-sonnet-4-5", BaseURL: srv.URL, APIKey: "k"}
	_, err := m.Generate(context.Background(), ask(model.ToolChoiceAuto), nil)
	var ae *model.APIError
	if !errors.As(err, &ae) {
		t.Fatalf("error %v, want an *APIError", err)
	}
	want := model.APIError{Provider: "anthropic", URL: srv.URL + "/v1/messages", Status: 400, Type: "invalid_request_error",
		Message: "messages.1.content.0: unexpected tool_use_id found in tool_result blocks", RequestID: "req_018EeWyXxfu5pfWkrYcMdjWG"}
	if *ae != want {
		t.Errorf("error %+v, want %+v", *ae, want)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests, want 1: a bad request is not retried", n)
	}
}

// TestToolChoice: each tool choice as the API spells it.
func TestToolChoice(t *testing.T) {
	tests := []struct {
		choice model.ToolChoice
		want   string // the tool_choice sent, "" for none
	}{
		{model.ToolChoiceAuto, ""},
		{model.ToolChoiceNone, `{"type":"none"}`},
		{model.ToolChoiceRequired, `{"type":"any"}`},
		{"get_time", `{"type":"tool","name":"get_time"}`},
	}
	for _, tt := range tests {
		t.Run(string(tt.choice), func(t *testing.T) {
			srv := wiretest.NewServer(t, wiretest.Reply{File: "text.json"})
			m := &anthropic.Model{Name: "claude-sonnet-4-5", BaseURL: srv.URL, APIKey: "k"}
			if _, err := m.Generate(context.Background(), ask(tt.choice), nil); err != nil {
				t.Fatal(err)
			}
			var body struct {
				ToolChoice json.RawMessage `json:"tool_choice"`
			}
			if err := json.Unmarshal(srv.Requests()[0].Body, &body); err != nil {
				t.Fatal(err)
			}
			if string(body.ToolChoice) != tt.want {
				t.Errorf("tool_choice %s, want %s", body.ToolChoice, tt.want)
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
			newModel := func() model.Model { return &anthropic.Model{Name: "claude-sonnet-4-5", BaseURL: srv.URL, APIKey: "k"} }
			wiretest.CheckReuse(t, srv, newModel(), newModel, stream)
		})
	}
}

// TestDefersTools: the models from Claude 4.5 on take deferred tools.
func TestDefersTools(t *testing.T) {
	for name, want := range map[string]bool{
		"claude-sonnet-4-5": true, "claude-sonnet-4-5-20250929": true, "claude-opus-4-6": true, "claude-haiku-4-5-20251001": true, "claude-sonnet-5": true,
		"claude-3-7-sonnet-latest": false, "claude-sonnet-4-20250514": false, "claude-opus-4-1-20250805": false, "claude-opus-4-0": false,
	} {
		var m model.Model = &anthropic.Model{Name: name}
		if d, ok := m.(model.Deferrer); !ok || d.DefersTools() != want {
			t.Errorf("%s: DefersTools() = %v, want %v", name, ok && d.DefersTools(), want)
		}
	}
}
