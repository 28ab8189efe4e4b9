package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// scriptedModel is an OpenAI-compatible server that answers each request
// with the next scripted stream, and keeps the requests.
type scriptedModel struct {
	*httptest.Server
	mu       sync.Mutex
	requests []map[string]any
}

func newScriptedModel(t *testing.T, streams ...string) *scriptedModel {
	t.Helper()
	s := &scriptedModel{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		b, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(b, &body); err != nil || r.URL.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer test-key" {
			http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		n := len(s.requests)
		s.requests = append(s.requests, body)
		s.mu.Unlock()
		if n >= len(streams) {
			http.Error(w, `{"error":{"message":"the script has no more answers"}}`, http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, chunk := range strings.Split(strings.TrimSpace(streams[n]), "\n") {
			fmt.Fprintf(w, "data: %s\n\n", chunk)
			w.(http.Flusher).Flush()
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(s.Close)
	return s
}

// messages returns request n's messages.
func (s *scriptedModel) messages(n int) []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	for _, m := range s.requests[n]["messages"].([]any) {
		out = append(out, m.(map[string]any))
	}
	return out
}

// TestRunEndToEnd: toolwire run against a scripted model and toolwire's
// own MCP server on stdio: two calls at once in the first turn, one with a
// missing argument that the model repairs in the second, the answer in
// the third. The model server sees the results paired by id, and schemas
// without the parameter the host injects.
func TestRunEndToEnd(t *testing.T) {
	m := newScriptedModel(t,
		`{"choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"calc__calculate","arguments":"{\"expression\":\"6*7\"}"}}]}}]}
{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_2","type":"function","function":{"name":"calc__convert_time","arguments":"{\"time\":\"2026-01-15T12:00:00Z\"}"}}]}}]}
{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":100,"completion_tokens":20}}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_3","type":"function","function":{"name":"calc__convert_time","arguments":"{\"time\":\"2026-01-15T12:00:00Z\",\"to\":\"Asia/Tokyo\"}"}}]}}]}
{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":150,"completion_tokens":15}}`,
		`{"choices":[{"index":0,"delta":{"content":"6*7 is 42; "}}]}
{"choices":[{"index":0,"delta":{"content":"noon UTC is 21:00 in Tokyo."}}]}
{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":200,"completion_tokens":12,"prompt_tokens_details":{"cached_tokens":90}}}`,
	)
	cfg := writeConfig(t, map[string]string{"calc": testServerJSON(t, "calc", nil, `"inject": {"from": "UTC"}`)})
	r := runEnv(t, []string{"OPENAI_API_KEY=test-key", "OPENAI_BASE_URL=" + m.URL + "/v1"}, "",
		"run", "--config", cfg, "--toolsets=", "-m", "openai:test-model", "What is 6*7, and noon UTC on 2026-01-15 in Tokyo?")
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if r.stdout != "6*7 is 42; noon UTC is 21:00 in Tokyo.\n" {
		t.Errorf("stdout %q", r.stdout)
	}
	for _, want := range []string{"→ calc__calculate", "✓ calc__calculate", "✗ calc__convert_time failed", `missing required argument \"to\"`, "3 model requests, 3 tool calls; tokens: 450 in (90 cached), 47 out"} {
		if !strings.Contains(r.stderr, want) && !strings.Contains(r.stderr, strings.ReplaceAll(want, `\"`, `"`)) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if len(m.requests) != 3 {
		t.Fatalf("%d model requests, want 3", len(m.requests))
	}

	// The tools as the model saw them: the injected "from" is not there.
	var convert map[string]any
	for _, tl := range m.requests[0]["tools"].([]any) {
		fn := tl.(map[string]any)["function"].(map[string]any)
		if fn["name"] == "calc__convert_time" {
			convert = fn
		}
	}
	params, _ := json.Marshal(convert["parameters"])
	if convert == nil || strings.Contains(string(params), `"from"`) || !strings.Contains(string(params), `"to"`) {
		t.Errorf("calc__convert_time as the model saw it: %s", params)
	}

	// Results paired with their calls by id, in the model's order.
	second := m.messages(1)
	results := map[string]string{}
	var order []string
	for _, msg := range second {
		if msg["role"] == "tool" {
			id := msg["tool_call_id"].(string)
			results[id] = msg["content"].(string)
			order = append(order, id)
		}
	}
	if strings.Join(order, ",") != "call_1,call_2" || results["call_1"] != "42" || !strings.Contains(results["call_2"], `missing required argument "to"`) {
		t.Errorf("results sent back: %v in order %v", results, order)
	}
	third := m.messages(2)
	last := third[len(third)-1]
	if last["tool_call_id"] != "call_3" || !strings.Contains(last["content"].(string), "2026-01-15T21:00:00+09:00") {
		t.Errorf("the repaired call's result: %v", last)
	}
}

// TestRunWithoutModel: a missing key names the variable to set; an
// unreachable server fails within the timeout, naming its URL.
func TestRunWithoutModel(t *testing.T) {
	r := runEnv(t, []string{"OPENAI_API_KEY=", "TOOLWIRE_MODEL="}, "", "run", "--toolsets=calc", "-m", "openai:gpt-4.1", "hi")
	if r.code != 1 || !strings.Contains(r.stderr, "OPENAI_API_KEY") {
		t.Errorf("no key: exit %d, stderr %q; want 1 and the variable to set", r.code, r.stderr)
	}
	r = runEnv(t, []string{"TOOLWIRE_MODEL="}, "", "run", "hi")
	if r.code != 2 || !strings.Contains(r.stderr, "TOOLWIRE_MODEL") {
		t.Errorf("no model: exit %d, stderr %q; want 2 and how to name one", r.code, r.stderr)
	}
	url := "http://127.0.0.1:1/v1"
	r = runEnv(t, []string{"OPENAI_API_KEY=k", "OPENAI_BASE_URL=" + url}, "", "run", "--toolsets=calc", "--timeout", "20s", "-m", "openai:gpt-4.1", "hi")
	if r.code != 1 || !strings.Contains(r.stderr, "127.0.0.1:1") {
		t.Errorf("unreachable: exit %d, stderr %q; want 1 and the URL", r.code, r.stderr)
	}
	if r.took > 21*time.Second {
		t.Errorf("unreachable: took %v, more than the 20s timeout", r.took)
	}
}

// TestRunApproval: run asks nobody, so a tool that may change things is
// refused unless --yes, --allow or the server's "allow" lets it run.
func TestRunApproval(t *testing.T) {
	script := []string{
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"notes__write_note","arguments":"{\"text\":\"x\"}"}}]}}]}
{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
		`{"choices":[{"index":0,"delta":{"content":"ok"}}]}
{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
	}
	for _, tt := range []struct {
		name, more string
		flags      []string
		want       string
	}{
		{"refused", "", nil, "was not approved: the user must allow it (toolwire run: --allow notes__write_note, or --yes"},
		{"--yes", "", []string{"--yes"}, "saved: x"},
		{"--allow", "", []string{"--allow", "notes__write_note"}, "saved: x"},
		{"config allow", `"allow": ["write_note"]`, nil, "saved: x"},
		{"Cline's alwaysAllow", `"alwaysAllow": ["write_note"]`, nil, "saved: x"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := newScriptedModel(t, script...)
			cfg := writeConfig(t, map[string]string{"notes": testServerJSON(t, "notes", nil, tt.more)})
			args := append([]string{"run", "--config", cfg, "--toolsets=", "-m", "openai:test-model"}, tt.flags...)
			r := runEnv(t, []string{"OPENAI_API_KEY=test-key", "OPENAI_BASE_URL=" + m.URL + "/v1"}, "", append(args, "write x down")...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			result := m.messages(1)[len(m.messages(1))-1]["content"].(string)
			if !strings.Contains(result, tt.want) {
				t.Errorf("the model was told %q, want %q", result, tt.want)
			}
		})
	}
}
