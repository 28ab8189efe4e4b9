// Package openaiscript is the script of the agent-loop benchmark's
// OpenAI-compatible server (servers/openaiscript): what it answers and
// how it checks a request. It writes OpenAI's wire format: a
// chat.completion object, or a text/event-stream of
// chat.completion.chunk objects (the tool call's arguments split over
// several chunks, "usage": null on each chunk and a last chunk with the
// usage when stream_options.include_usage asks for it), then
// "data: [DONE]".
//
// The script: while the conversation holds fewer than Calls tool
// results, the answer is one call of the tool add with arguments
// {"a":N,"b":3} (N counts the results so far) and id call_N; then a text
// answer, FinalText.
package openaiscript

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// FinalText is the answer once the calls are made.
const FinalText = "The sums are all done."

// Request is what the script reads of a request.
type Request struct {
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

// Check reads the conversation: n is the number of tool results in it;
// problem says what is wrong with it, if anything. The history must be
// well formed (each tool result answers the call before it by id, each
// call is the one the script made) and each result must be N+3, the sum
// its call asked for.
func Check(req *Request) (n int, problem string) {
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

// Answer writes the answer to a request whose conversation holds n tool
// results, of calls in all: promptBytes is the request's size (the usage
// counts a token for every four bytes), stream and withUsage say how it
// asked for the answer.
func Answer(n, calls, promptBytes int, stream, withUsage bool) []byte {
	var buf bytes.Buffer
	usage := fmt.Sprintf(`{"prompt_tokens":%d,"completion_tokens":17,"total_tokens":%d,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}`, promptBytes/4, promptBytes/4+17)
	id := "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT"
	callID := "call_" + strconv.Itoa(n)
	args := `{"a":` + strconv.Itoa(n) + `,"b":3}`
	if !stream {
		var msg string
		if n < calls {
			a, _ := json.Marshal(args)
			msg = `{"role":"assistant","content":null,"tool_calls":[{"id":"` + callID + `","type":"function","function":{"name":"add","arguments":` + string(a) + `}}],"refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"tool_calls"`
		} else {
			msg = `{"role":"assistant","content":` + strconv.Quote(FinalText) + `,"refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"stop"`
		}
		fmt.Fprintf(&buf, `{"id":"%s","object":"chat.completion","created":1741569952,"model":"gpt-4.1-2025-04-14","choices":[{"index":0,"message":%s}],"usage":%s,"service_tier":"default","system_fingerprint":"fp_7a53abb7a2"}`, id, msg, usage)
		return buf.Bytes()
	}
	chunk := func(choice string) {
		fmt.Fprintf(&buf, `data: {"id":"%s","object":"chat.completion.chunk","created":1741569952,"model":"gpt-4.1-2025-04-14","service_tier":"default","system_fingerprint":"fp_7a53abb7a2","choices":[%s]`, id, choice)
		if withUsage {
			buf.WriteString(`,"usage":null`)
		}
		buf.WriteString("}\n\n")
	}
	if n < calls {
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
	return buf.Bytes()
}
