package ollama_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/toolwire/toolwire/model"
	"github.com/toolwire/toolwire/model/internal/wiretest"
	"github.com/toolwire/toolwire/model/ollama"
)

var weatherSchema = json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)

func ask() *model.Request {
	return &model.Request{
		System:   "You are terse.",
		Messages: []model.Message{{Role: model.RoleUser, Text: "Weather in Paris, and the time?"}},
		Tools: []model.ToolSpec{
			{Name: "get_weather", Description: "Current weather in a city.", Parameters: weatherSchema},
			{Name: "get_time", Description: "The time now."},
		},
	}
}

// history is a conversation after a turn of calls: thinking to send
// back, arguments to send back as an object, a call that was unusable,
// and results as tool messages (one with no name: found by its id).
func history() *model.Request {
	return &model.Request{
		System: "You are terse.",
		Messages: []model.Message{
			{Role: model.RoleUser, Text: "Weather in Tokyo and Osaka?", Images: []model.Image{{MimeType: "image/png", Data: "iVBORw0KGgo="}}},
			{Role: model.RoleAssistant,
				Reasoning: []model.Reasoning{{Source: "thinking", Text: "Two cities: two calls."}},
				ToolCalls: []model.ToolCall{
					{ID: "call_r8j2kq1x", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Tokyo","unit":"celsius"}`)},
					{ID: "Zx8wV7uT6", Name: "get_weather", Arguments: json.RawMessage(`["Osaka"]`), Invalid: "the arguments must be a JSON object"},
				}},
			{Role: model.RoleTool, ToolResults: []model.ToolResult{
				{CallID: "call_r8j2kq1x", Name: "get_weather", Text: "18°C, clear"},
				{CallID: "Zx8wV7uT6", Text: "error: the arguments must be a JSON object", IsError: true},
			}},
		},
		Tools:       []model.ToolSpec{{Name: "get_weather", Parameters: weatherSchema}},
		MaxTokens:   200,
		Temperature: new(0.0),
	}
}

func TestGenerate(t *testing.T) {
	ndjson := http.Header{"Content-Type": {"application/x-ndjson"}}
	tests := []struct {
		name        string
		reply       wiretest.Reply
		stream      bool
		req         *model.Request
		wantRequest string
		want        *model.Response
		wantDeltas  wiretest.Deltas
	}{{
		name:        "not streamed: text, thinking, counts, stream false",
		reply:       wiretest.Reply{File: "text.json"},
		req:         &model.Request{Messages: []model.Message{{Role: model.RoleUser, Text: "Capital of France?"}}},
		wantRequest: "text.request.json",
		want: &model.Response{
			Message: model.Message{Text: "Paris is the capital of France.",
				Reasoning: []model.Reasoning{{Source: "thinking", Text: "The user asks for the capital of France. That is Paris."}}},
			StopReason: model.StopEnd,
			Usage:      model.Usage{InputTokens: 26, OutputTokens: 42},
		},
	}, {
		name:        "tool calls with object arguments and no ids; done_reason stop",
		reply:       wiretest.Reply{File: "tool_calls.json"},
		req:         ask(),
		wantRequest: "tool_calls.request.json",
		want: &model.Response{
			Message: model.Message{ToolCalls: []model.ToolCall{
				{ID: wiretest.AnyID, Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris","unit":"celsius"}`)},
				{ID: wiretest.AnyID, Name: "get_time", Arguments: json.RawMessage(`{}`)},
			}},
			StopReason: model.StopToolCalls,
			Usage:      model.Usage{InputTokens: 210, OutputTokens: 37},
		},
	}, {
		name:        "NDJSON stream: thinking then text, counts on the done line",
		reply:       wiretest.Reply{File: "stream_text.ndjson", Header: ndjson},
		stream:      true,
		req:         &model.Request{Messages: []model.Message{{Role: model.RoleUser, Text: "Say hello."}}},
		wantRequest: "stream_text.request.json",
		want: &model.Response{
			Message:    model.Message{Text: "Hello, world!", Reasoning: []model.Reasoning{{Source: "thinking", Text: "The user wants a greeting."}}},
			StopReason: model.StopEnd,
			Usage:      model.Usage{InputTokens: 11, OutputTokens: 9},
		},
		wantDeltas: wiretest.Deltas{Text: "Hello, world!", Reasoning: "The user wants a greeting.", N: 4},
	}, {
		name:   "NDJSON stream: calls in separate lines, an id when the server sends one",
		reply:  wiretest.Reply{File: "stream_tool_calls.ndjson", Header: ndjson},
		stream: true,
		req:    ask(),
		want: &model.Response{
			Message: model.Message{ToolCalls: []model.ToolCall{
				{ID: "call_r8j2kq1x", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Tokyo","unit":"celsius"}`)},
				{ID: wiretest.AnyID, Name: "get_weather", Arguments: json.RawMessage(`{"city":"Osaka"}`)},
			}},
			StopReason: model.StopToolCalls,
			Usage:      model.Usage{InputTokens: 180, OutputTokens: 44},
		},
	}, {
		name:   "NDJSON stream: inline <think> split across lines is reasoning",
		reply:  wiretest.Reply{File: "stream_inline_think.ndjson", Header: ndjson},
		stream: true,
		req:    &model.Request{Messages: []model.Message{{Role: model.RoleUser, Text: "2+2?"}}},
		want: &model.Response{
			Message:    model.Message{Text: "4", Reasoning: []model.Reasoning{{Source: "think", Text: "\nTwo plus two is four.\n"}}},
			StopReason: model.StopEnd,
			Usage:      model.Usage{InputTokens: 8, OutputTokens: 20},
		},
		wantDeltas: wiretest.Deltas{Text: "4", Reasoning: "\nTwo plus two is four.\n", N: 3},
	}, {
		name:  "done_reason length: the call is invalid",
		reply: wiretest.Reply{File: "length.json"},
		req:   ask(),
		want: &model.Response{
			Message:    model.Message{ToolCalls: []model.ToolCall{{ID: wiretest.AnyID, Name: "write_file", Invalid: "cut off"}}},
			StopReason: model.StopLength,
			Usage:      model.Usage{InputTokens: 300, OutputTokens: 64},
		},
	}, {
		name:  "arguments as a string of JSON are read; as an array, invalid",
		reply: wiretest.Reply{File: "string_arguments.json"},
		req:   ask(),
		want: &model.Response{
			Message: model.Message{ToolCalls: []model.ToolCall{
				{ID: wiretest.AnyID, Name: "get_weather", Arguments: json.RawMessage(`{"city":"Lima"}`)},
				{ID: wiretest.AnyID, Name: "get_weather", Invalid: "not an object"},
			}},
			StopReason: model.StopToolCalls,
			Usage:      model.Usage{InputTokens: 50, OutputTokens: 20},
		},
	}, {
		name:        "history: arguments sent back as an object, thinking replayed, tool messages with tool_name, invalid call as {}",
		reply:       wiretest.Reply{File: "text.json"},
		req:         history(),
		wantRequest: "history.request.json",
		want: &model.Response{
			Message: model.Message{Text: "Paris is the capital of France.",
				Reasoning: []model.Reasoning{{Source: "thinking", Text: "The user asks for the capital of France. That is Paris."}}},
			StopReason: model.StopEnd,
			Usage:      model.Usage{InputTokens: 26, OutputTokens: 42},
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := wiretest.NewServer(t, tt.reply)
			m := &ollama.Model{Name: "qwen3:8b", Host: srv.URL}
			req := wiretest.Exchange(t, srv, m, tt.req, tt.stream, tt.want, tt.wantDeltas)
			if req.Path != "/api/chat" {
				t.Errorf("request to %s, want /api/chat", req.Path)
			}
			var body struct {
				Stream *bool `json:"stream"`
			}
			if err := json.Unmarshal(req.Body, &body); err != nil {
				t.Fatal(err)
			}
			if body.Stream == nil || *body.Stream != tt.stream {
				t.Errorf("stream %v, want %v (Ollama streams unless told not to)", body.Stream, tt.stream)
			}
			if tt.wantRequest != "" {
				wiretest.EqualJSON(t, req.Body, tt.wantRequest)
			}
		})
	}
}

// TestStreamError: an error line in the middle of a stream is an
// *APIError with Ollama's message, and not retried after output.
func TestStreamError(t *testing.T) {
	srv := wiretest.NewServer(t, wiretest.Reply{File: "stream_error.ndjson", Header: http.Header{"Content-Type": {"application/x-ndjson"}}})
	m := &ollama.Model{Name: "qwen3:8b", Host: srv.URL}
	var d wiretest.Deltas
	_, err := m.Generate(context.Background(), ask(), d.On)
	var ae *model.APIError
	if !errors.As(err, &ae) || ae.Message != "an error was encountered while running the model: unexpected EOF" {
		t.Fatalf("error %v, want an *APIError with Ollama's message", err)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

// TestModelNotFound: Ollama's error answer (a plain {"error": "..."})
// keeps its message and status.
func TestModelNotFound(t *testing.T) {
	srv := wiretest.NewServer(t, wiretest.Reply{Status: http.StatusNotFound, Body: `{"error":"model \"qwen9\" not found, try pulling it first"}`})
	m := &ollama.Model{Name: "qwen9", Host: srv.URL}
	_, err := m.Generate(context.Background(), ask(), nil)
	var ae *model.APIError
	if !errors.As(err, &ae) || ae.Status != 404 || ae.Message != `model "qwen9" not found, try pulling it first` {
		t.Fatalf("error %v, want the 404 with Ollama's message", err)
	}
}

func TestHostURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", "http://127.0.0.1:11434"},
		{"0.0.0.0", "http://0.0.0.0:11434"},
		{"example.com", "http://example.com:11434"},
		{"example.com:56789", "http://example.com:56789"},
		{":56789", "http://127.0.0.1:56789"},
		{"10.0.0.5:8080", "http://10.0.0.5:8080"},
		{"[::1]", "http://[::1]:11434"},
		{"[::1]:1234", "http://[::1]:1234"},
		{"http://example.com", "http://example.com:80"},
		{"https://example.com", "https://example.com:443"},
		{"https://example.com:8443/ollama/", "https://example.com:8443/ollama"},
		{"http://127.0.0.1:11434", "http://127.0.0.1:11434"},
		{"  localhost:11435  ", "http://localhost:11435"},
		{"example.com:99999", "http://127.0.0.1:11434"},
	}
	for _, tt := range tests {
		if got := ollama.HostURL(tt.in); got != tt.want {
			t.Errorf("HostURL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestToolChoiceNone: the native API has no tool choice; "none" offers no
// tools, anything else offers them all.
func TestToolChoiceNone(t *testing.T) {
	for _, tt := range []struct {
		choice model.ToolChoice
		tools  int
	}{{model.ToolChoiceAuto, 2}, {model.ToolChoiceNone, 0}, {model.ToolChoiceRequired, 2}, {"get_time", 2}} {
		srv := wiretest.NewServer(t, wiretest.Reply{File: "text.json"})
		m := &ollama.Model{Name: "qwen3", Host: srv.URL}
		req := ask()
		req.ToolChoice = tt.choice
		if _, err := m.Generate(context.Background(), req, nil); err != nil {
			t.Fatal(err)
		}
		var body struct {
			Tools []json.RawMessage `json:"tools"`
		}
		if err := json.Unmarshal(srv.Requests()[0].Body, &body); err != nil {
			t.Fatal(err)
		}
		if len(body.Tools) != tt.tools {
			t.Errorf("tool choice %q: %d tools sent, want %d", tt.choice, len(body.Tools), tt.tools)
		}
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
				reply = wiretest.Reply{File: "stream_text.ndjson", Header: http.Header{"Content-Type": {"application/x-ndjson"}}}
			}
			srv := wiretest.NewServer(t, reply)
			newModel := func() model.Model { return &ollama.Model{Name: "qwen3:8b", Host: srv.URL} }
			wiretest.CheckReuse(t, srv, newModel(), newModel, stream)
		})
	}
}
