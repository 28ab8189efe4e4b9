package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/toolwire/toolwire/model"
	"github.com/toolwire/toolwire/model/internal/wiretest"
	"github.com/toolwire/toolwire/model/openai"
)

// server replays a fixture file as the answer to every request, as a
// Chat Completions server would send it, and keeps the request bodies.
type server struct {
	*httptest.Server
	mu     sync.Mutex
	bodies []map[string]any
}

func replay(t *testing.T, fixture string) *server {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", fixture))
	if err != nil {
		t.Fatal(err)
	}
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer k" {
			http.Error(w, `{"error":{"message":"wrong path or key"}}`, http.StatusNotFound)
			return
		}
		var body map[string]any
		raw, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(raw, &body); err != nil {
			t.Errorf("request body %s: %v", raw, err)
		}
		s.mu.Lock()
		s.bodies = append(s.bodies, body)
		s.mu.Unlock()
		if strings.HasSuffix(fixture, ".sse") {
			w.Header().Set("Content-Type", "text/event-stream")
		} else {
			w.Header().Set("Content-Type", "application/json")
		}
		w.Header().Set("x-request-id", "req_123")
		w.Write(b)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *server) model() *openai.Model {
	return &openai.Model{Name: "m", BaseURL: s.URL + "/v1", APIKey: "k", Retry: model.RetryPolicy{MaxRetries: -1}}
}

var weatherTool = model.ToolSpec{Name: "get_weather", Description: "Weather in a city", Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)}

// call is what a test expects of a tool call.
type call struct {
	id, name, args, invalid string
}

var generatedID = regexp.MustCompile(`^[A-Za-z0-9]{9}$`)

// TestQuirks replays one fixture per quirk of real servers and checks the
// tool calls, text, reasoning and usage recovered.
func TestQuirks(t *testing.T) {
	tests := []struct {
		fixture   string
		calls     []call
		text      string
		reasoning string
		stop      model.StopReason
		usage     model.Usage
	}{
		{fixture: "ollama_parallel_index0.sse", stop: model.StopToolCalls, calls: []call{
			{id: "call_a1", name: "get_weather", args: `{"city":"Paris"}`}, {id: "call_b2", name: "get_weather", args: `{"city":"Tokyo"}`}}},
		{fixture: "index_missing.sse", stop: model.StopToolCalls, calls: []call{
			{id: "t1", name: "add", args: `{"a": 2, "b": 3}`}, {id: "t2", name: "add", args: `{"a":1,"b":1}`}}},
		{fixture: "index_minus1_no_id.sse", stop: model.StopToolCalls, calls: []call{{id: "*", name: "add", args: `{"a":4,"b":5}`}}},
		{fixture: "empty_tool_calls_every_delta.sse", stop: model.StopEnd, text: "The answer is 42.",
			usage: model.Usage{InputTokens: 11, OutputTokens: 5, CachedTokens: 3}},
		{fixture: "split_escape.sse", stop: model.StopToolCalls, calls: []call{{id: "call_x", name: "greet", args: `{"name":"Jos\u00e9 \ud83d\ude00"}`}}},
		{fixture: "split_surrogate_outer.sse", stop: model.StopToolCalls, calls: []call{{id: "call_s", name: "greet", args: `{"name":"😀 é"}`}}},
		{fixture: "deepseek_reasoning_content.sse", stop: model.StopToolCalls, reasoning: "reasoning_content:The user wants the weather.",
			calls: []call{{id: "call_0_ab", name: "get_weather", args: `{"city":"Oslo"}`}},
			usage: model.Usage{InputTokens: 20, OutputTokens: 9, CachedTokens: 16, ReasoningTokens: 6}},
		{fixture: "ollama_reasoning.sse", stop: model.StopEnd, text: "Done.", reasoning: "reasoning:Thinking hard."},
		{fixture: "inline_think.sse", stop: model.StopEnd, text: "The sum is 5.", reasoning: "think:I should add."},
		{fixture: "finish_length.sse", stop: model.StopLength, calls: []call{{id: "call_l", name: "write", args: `{"text":"a very long`, invalid: "cut off by the length limit"}}},
		{fixture: "invalid_json_args.sse", stop: model.StopToolCalls, calls: []call{{id: "call_bad", name: "add", args: `{a: 2, b: 3}`, invalid: "not valid JSON"}}},
		{fixture: "object_arguments.sse", stop: model.StopToolCalls, calls: []call{{id: "call_o", name: "add", args: `{"a":1,"b":2}`}}},
		{fixture: "whole_response.json", stop: model.StopToolCalls, reasoning: "reasoning_content:Two cities.",
			calls: []call{{id: "call_1", name: "get_weather", args: `{"city":"Paris"}`}, {id: "call_2", name: "get_weather", args: `{"city":"Rome"}`}},
			usage: model.Usage{InputTokens: 30, OutputTokens: 12, CachedTokens: 10, ReasoningTokens: 4}},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			s := replay(t, tt.fixture)
			stream := strings.HasSuffix(tt.fixture, ".sse")
			var deltas []model.Delta
			var onDelta func(model.Delta)
			if stream {
				onDelta = func(d model.Delta) { deltas = append(deltas, d) }
			}
			res, err := s.model().Generate(context.Background(), &model.Request{Messages: []model.Message{{Role: model.RoleUser, Text: "hi"}}, Tools: []model.ToolSpec{weatherTool}}, onDelta)
			if err != nil {
				t.Fatal(err)
			}
			if res.StopReason != tt.stop || res.Message.Text != tt.text || res.Usage != tt.usage {
				t.Errorf("stop %q, text %q, usage %+v; want %q, %q, %+v", res.StopReason, res.Message.Text, res.Usage, tt.stop, tt.text, tt.usage)
			}
			var reasoning []string
			for _, r := range res.Message.Reasoning {
				reasoning = append(reasoning, r.Source+":"+r.Text)
			}
			if got := strings.Join(reasoning, "|"); got != tt.reasoning {
				t.Errorf("reasoning %q, want %q", got, tt.reasoning)
			}
			if len(res.Message.ToolCalls) != len(tt.calls) {
				t.Fatalf("calls %+v, want %+v", res.Message.ToolCalls, tt.calls)
			}
			for i, want := range tt.calls {
				got := res.Message.ToolCalls[i]
				idOK := got.ID == want.id || want.id == "*" && generatedID.MatchString(got.ID)
				if !idOK || got.Name != want.name || string(got.Arguments) != want.args || !strings.Contains(got.Invalid, want.invalid) || (want.invalid == "") != (got.Invalid == "") {
					t.Errorf("call %d = %+v (args %s), want %+v", i, got, got.Arguments, want)
				}
			}
			if stream {
				// The deltas add up to the text and reasoning.
				var text, thought strings.Builder
				for _, d := range deltas {
					if d.Kind == model.DeltaText {
						text.WriteString(d.Text)
					} else {
						thought.WriteString(d.Text)
					}
				}
				if text.String() != tt.text {
					t.Errorf("text deltas %q, want %q", text.String(), tt.text)
				}
				if wantThought := reasoningText(res); thought.String() != wantThought {
					t.Errorf("reasoning deltas %q, want %q", thought.String(), wantThought)
				}
				if s.bodies[0]["stream"] != true {
					t.Errorf("request %v is not a streaming one", s.bodies[0])
				}
			}
		})
	}
}

func reasoningText(res *model.Response) string {
	var b strings.Builder
	for _, r := range res.Message.Reasoning {
		b.WriteString(r.Text)
	}
	return b.String()
}

// TestHistoryReplay: what goes back to the server in the next request:
// reasoning in the field it came in, calls with their ids, unusable
// arguments replaced by {}, and one tool message per result.
func TestHistoryReplay(t *testing.T) {
	s := replay(t, "empty_tool_calls_every_delta.sse")
	history := []model.Message{
		{Role: model.RoleUser, Text: "weather?", Images: []model.Image{{MimeType: "image/png", Data: "AAAA"}}},
		{Role: model.RoleAssistant, Reasoning: []model.Reasoning{{Source: "reasoning_content", Text: "two calls"}}, ToolCalls: []model.ToolCall{
			{ID: "c1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Oslo"}`)},
			{ID: "c2", Name: "get_weather", Arguments: json.RawMessage(`{"city":`), Invalid: "cut off"},
		}},
		{Role: model.RoleTool, ToolResults: []model.ToolResult{{CallID: "c1", Name: "get_weather", Text: "sunny"}, {CallID: "c2", Name: "get_weather", Text: "error: cut off", IsError: true}}},
	}
	_, err := s.model().Generate(context.Background(), &model.Request{System: "be brief", Messages: history, Tools: []model.ToolSpec{weatherTool}, ToolChoice: "get_weather"}, func(model.Delta) {})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(s.bodies[0]["messages"])
	want := `[{"content":"be brief","role":"system"},` +
		`{"content":[{"text":"weather?","type":"text"},{"image_url":{"url":"data:image/png;base64,AAAA"},"type":"image_url"}],"role":"user"},` +
		`{"content":null,"reasoning_content":"two calls","role":"assistant","tool_calls":[{"function":{"arguments":"{\"city\":\"Oslo\"}","name":"get_weather"},"id":"c1","type":"function"},{"function":{"arguments":"{}","name":"get_weather"},"id":"c2","type":"function"}]},` +
		`{"content":"sunny","role":"tool","tool_call_id":"c1"},{"content":"error: cut off","role":"tool","tool_call_id":"c2"}]`
	if string(got) != want {
		t.Errorf("messages sent:\n%s\nwant:\n%s", got, want)
	}
	choice, _ := json.Marshal(s.bodies[0]["tool_choice"])
	if string(choice) != `{"function":{"name":"get_weather"},"type":"function"}` {
		t.Errorf("tool_choice %s", choice)
	}
}

// TestStreamErrors: an error chunk in the middle of a stream is the
// provider's error, and the stream is not retried after output.
func TestStreamErrors(t *testing.T) {
	s := replay(t, "midstream_error.sse")
	m := s.model()
	m.Retry = model.RetryPolicy{MaxRetries: 3, BaseDelay: 1}
	_, err := m.Generate(context.Background(), &model.Request{Messages: []model.Message{{Role: model.RoleUser, Text: "hi"}}}, func(model.Delta) {})
	var ae *model.APIError
	if !errors.As(err, &ae) || !strings.Contains(ae.Message, "The server had an error") || ae.Type != "server_error" {
		t.Fatalf("error %v, want the server's error", err)
	}
	if len(s.bodies) != 1 {
		t.Errorf("%d requests: a stream that produced output was retried", len(s.bodies))
	}
}

// TestReuse: what the model keeps of a conversation between requests is
// never sent once the history changed: each request is byte for byte a
// new model's.
func TestReuse(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			reply := wiretest.Reply{File: "whole_response.json"}
			if stream {
				reply = wiretest.Reply{File: "empty_tool_calls_every_delta.sse", Header: http.Header{"Content-Type": {"text/event-stream"}}}
			}
			srv := wiretest.NewServer(t, reply)
			newModel := func() model.Model { return &openai.Model{Name: "m", BaseURL: srv.URL + "/v1", APIKey: "k"} }
			wiretest.CheckReuse(t, srv, newModel(), newModel, stream)
		})
	}
}

// TestStreamTruncated: a stream cut in the middle of its last event is an
// error, even when what arrived of the event would parse.
func TestStreamTruncated(t *testing.T) {
	s := replay(t, "truncated_finish.sse")
	_, err := s.model().Generate(context.Background(), &model.Request{Messages: []model.Message{{Role: model.RoleUser, Text: "hi"}}}, func(model.Delta) {})
	if err == nil || !strings.Contains(err.Error(), "the event stream ended in the middle of an event") {
		t.Fatalf("err = %v, want the stream named as cut", err)
	}
}
