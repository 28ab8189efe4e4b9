// Command openaiscript is a scripted OpenAI-compatible Chat Completions
// server for the agent-loop benchmark (BenchmarkAgentLoop): it listens
// on -http ADDR (default 127.0.0.1:0), prints "LISTENING <host:port>" on stdout once bound, and
// answers POST /v1/chat/completions as OpenAI's API does, in its wire
// format: a chat.completion object, or with "stream": true a
// text/event-stream of chat.completion.chunk objects (the tool call's
// arguments split over several chunks, "usage": null on each chunk and a
// last chunk with the usage when stream_options.include_usage asks for
// it), then "data: [DONE]".
//
// The script: while the conversation holds fewer than -calls tool
// results, the answer is one call of the tool add with arguments
// {"a":N,"b":3} (N counts the results so far) and id call_N; then a text
// answer. Every request is checked as a real server would check it and
// more: the history must be well formed (each tool result answers the
// call before it by id) and the last result must be N-1+3, the sum the
// call asked for, so a client that runs the tool wrongly, drops or
// reorders history fails with a 400. It runs in its own process so that
// the benchmark's CPU figures are the client's alone.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strconv"
)

func main() {
	calls := flag.Int("calls", 50, "tool calls per conversation before the text answer")
	addr := flag.String("http", "127.0.0.1:0", "listen on `addr`")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("openaiscript: ")
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("LISTENING %s\n", ln.Addr())
	mux := http.NewServeMux()
	mux.Handle("POST /v1/chat/completions", &script{calls: *calls})
	log.Fatal(http.Serve(ln, mux))
}

type script struct{ calls int }

// request is what the script reads of a request.
type request struct {
	Model    string `json:"model"`
	Messages []struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		ToolCallID string          `json:"tool_call_id"`
		ToolCalls  []struct {
			ID       string `json:"id"`
			Type     string `json:"type"`
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"messages"`
	Tools []struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
	Stream        bool `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

func (s *script) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	var req request
	if err := json.Unmarshal(body, &req); err != nil {
		fail(w, "the body is not a chat completion request: "+err.Error())
		return
	}
	n, problem := s.check(&req)
	if problem != "" {
		fail(w, problem)
		return
	}
	usage := fmt.Sprintf(`{"prompt_tokens":%d,"completion_tokens":17,"total_tokens":%d,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}`, len(body)/4, len(body)/4+17)
	id := "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT"
	callID := "call_" + strconv.Itoa(n)
	args := `{"a":` + strconv.Itoa(n) + `,"b":3}`
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		var msg string
		if n < s.calls {
			a, _ := json.Marshal(args)
			msg = `{"role":"assistant","content":null,"tool_calls":[{"id":"` + callID + `","type":"function","function":{"name":"add","arguments":` + string(a) + `}}],"refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"tool_calls"`
		} else {
			msg = `{"role":"assistant","content":"The sums are all done.","refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"stop"`
		}
		fmt.Fprintf(w, `{"id":"%s","object":"chat.completion","created":1741569952,"model":"gpt-4.1-2025-04-14","choices":[{"index":0,"message":%s}],"usage":%s,"service_tier":"default","system_fingerprint":"fp_7a53abb7a2"}`, id, msg, usage)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	withUsage := req.StreamOptions != nil && req.StreamOptions.IncludeUsage
	var buf bytes.Buffer
	chunk := func(choice string) {
		fmt.Fprintf(&buf, `data: {"id":"%s","object":"chat.completion.chunk","created":1741569952,"model":"gpt-4.1-2025-04-14","service_tier":"default","system_fingerprint":"fp_7a53abb7a2","choices":[%s]`, id, choice)
		if withUsage {
			buf.WriteString(`,"usage":null`)
		}
		buf.WriteString("}\n\n")
	}
	if n < s.calls {
		chunk(`{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"` + callID + `","type":"function","function":{"name":"add","arguments":""}}],"refusal":null},"logprobs":null,"finish_reason":null}`)
		// The arguments in pieces, as OpenAI sends them (a token or so
		// each).
		for _, piece := range []string{`{"`, `a`, `":`, strconv.Itoa(n), `,"`, `b`, `":`, `3`, `}`} {
			p, _ := json.Marshal(piece)
			chunk(`{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":` + string(p) + `}}]},"logprobs":null,"finish_reason":null}`)
		}
		chunk(`{"index":0,"delta":{},"logprobs":null,"finish_reason":"tool_calls"}`)
	} else {
		chunk(`{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}`)
		for _, piece := range []string{"The", " sums", " are", " all", " done", "."} {
			chunk(`{"index":0,"delta":{"content":"` + piece + `"},"logprobs":null,"finish_reason":null}`)
		}
		chunk(`{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}`)
	}
	if withUsage {
		fmt.Fprintf(&buf, `data: {"id":"%s","object":"chat.completion.chunk","created":1741569952,"model":"gpt-4.1-2025-04-14","service_tier":"default","system_fingerprint":"fp_7a53abb7a2","choices":[],"usage":%s}`+"\n\n", id, usage)
	}
	buf.WriteString("data: [DONE]\n\n")
	_, _ = w.Write(buf.Bytes())
}

// check reads the conversation: n is the number of tool results in it;
// problem says what is wrong with it, if anything.
func (s *script) check(req *request) (n int, problem string) {
	if req.Model == "" {
		return 0, "model is missing"
	}
	if len(req.Tools) != 1 || req.Tools[0].Type != "function" || req.Tools[0].Function.Name != "add" {
		return 0, "tools must hold the function add alone"
	}
	msgs := req.Messages
	if len(msgs) == 0 || msgs[0].Role != "user" {
		return 0, "the conversation must start with the user's message"
	}
	pending := ""
	for i, m := range msgs[1:] {
		switch m.Role {
		case "assistant":
			if pending != "" || len(m.ToolCalls) != 1 {
				return 0, fmt.Sprintf("message %d: an assistant message with one call must follow the user or a result", i+1)
			}
			c := m.ToolCalls[0]
			want := `{"a":` + strconv.Itoa(n) + `,"b":3}`
			if c.ID != "call_"+strconv.Itoa(n) || c.Type != "function" || c.Function.Name != "add" || (c.Function.Arguments != want && !sameJSON(c.Function.Arguments, want)) {
				return 0, fmt.Sprintf("message %d: the call is not the one the script made (%+v)", i+1, c)
			}
			pending = c.ID
		case "tool":
			if m.ToolCallID != pending || pending == "" {
				return 0, fmt.Sprintf("message %d: a tool result answering %q, want %q", i+1, m.ToolCallID, pending)
			}
			var text string
			if err := json.Unmarshal(m.Content, &text); err != nil || text != strconv.Itoa(n+3) {
				return 0, fmt.Sprintf("message %d: result %s, want %q", i+1, m.Content, strconv.Itoa(n+3))
			}
			pending = ""
			n++
		default:
			return 0, fmt.Sprintf("message %d: unexpected role %q", i+1, m.Role)
		}
	}
	if pending != "" {
		return 0, "the last call has no result"
	}
	return n, ""
}

func sameJSON(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return bytes.Equal(xb, yb)
}

func fail(w http.ResponseWriter, msg string) {
	fmt.Fprintln(os.Stderr, "openaiscript:", msg)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error", "param": nil, "code": nil}})
	_, _ = w.Write(b)
}
