// Package floorloop is the floor of the agent-loop benchmark: the
// function-calling loop as one writes it by hand over net/http and
// encoding/json against an OpenAI-compatible Chat Completions server,
// with nothing a minimal correct client could leave out and nothing
// more. Each turn it builds the request from the whole history (the API
// is stateless), posts it, reads the answer (whole, or streamed: SSE
// chunks whose tool-call arguments arrive in pieces, put together by
// index), runs the calls, appends the assistant's message and the
// results to the history, and goes on until the model answers without
// calls. It asks for the usage and adds it up, as any client that counts
// tokens does.
package floorloop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Message is a message of the conversation, in the API's format.
type Message struct {
	Role       string     `json:"role"`
	Content    *string    `json:"content"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

// ToolCall is a call the model asked for.
type ToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// Tool is a tool the model may call, and the function that runs it.
type Tool struct {
	Name        string
	Description string
	Parameters  json.RawMessage
	Run         func(args string) (string, error)
}

type wireTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

type request struct {
	Model         string     `json:"model"`
	Messages      []Message  `json:"messages"`
	Tools         []wireTool `json:"tools"`
	Stream        bool       `json:"stream,omitempty"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options,omitempty"`
}

// Usage counts tokens.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
}

// Result is what a run produced.
type Result struct {
	Answer    string
	Messages  []Message
	ToolCalls int
	Usage     Usage
}

// Run runs the loop: url is the server's /chat/completions.
func Run(ctx context.Context, client *http.Client, url, modelName string, tools []Tool, prompt string, stream bool, maxTurns int) (*Result, error) {
	req := request{Model: modelName, Stream: stream}
	if stream {
		req.StreamOptions = &struct {
			IncludeUsage bool `json:"include_usage"`
		}{true}
	}
	byName := map[string]Tool{}
	for _, t := range tools {
		var wt wireTool
		wt.Type = "function"
		wt.Function.Name, wt.Function.Description, wt.Function.Parameters = t.Name, t.Description, t.Parameters
		req.Tools = append(req.Tools, wt)
		byName[t.Name] = t
	}
	res := &Result{Messages: []Message{{Role: "user", Content: &prompt}}}
	for turn := 0; turn < maxTurns; turn++ {
		req.Messages = res.Messages
		body, err := json.Marshal(&req)
		if err != nil {
			return res, err
		}
		hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			return res, err
		}
		hreq.Header.Set("Content-Type", "application/json")
		hreq.Header.Set("Authorization", "Bearer k")
		resp, err := client.Do(hreq)
		if err != nil {
			return res, err
		}
		var msg Message
		var usage Usage
		if resp.StatusCode != http.StatusOK {
			b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			resp.Body.Close()
			return res, fmt.Errorf("status %s: %s", resp.Status, b)
		}
		if stream {
			msg, usage, err = readStream(resp.Body)
		} else {
			msg, usage, err = readWhole(resp.Body)
		}
		resp.Body.Close()
		if err != nil {
			return res, err
		}
		res.Usage.PromptTokens += usage.PromptTokens
		res.Usage.CompletionTokens += usage.CompletionTokens
		res.Messages = append(res.Messages, msg)
		if len(msg.ToolCalls) == 0 {
			if msg.Content != nil {
				res.Answer = *msg.Content
			}
			return res, nil
		}
		for _, c := range msg.ToolCalls {
			out := ""
			t, ok := byName[c.Function.Name]
			if !ok {
				out = "error: no tool named " + c.Function.Name
			} else if out, err = t.Run(c.Function.Arguments); err != nil {
				out = "error: " + err.Error()
			}
			res.Messages = append(res.Messages, Message{Role: "tool", Content: &out, ToolCallID: c.ID})
			res.ToolCalls++
		}
	}
	return res, fmt.Errorf("no answer after %d turns", maxTurns)
}

func readWhole(r io.Reader) (Message, Usage, error) {
	var w struct {
		Choices []struct {
			Message Message `json:"message"`
		} `json:"choices"`
		Usage Usage `json:"usage"`
	}
	if err := json.NewDecoder(r).Decode(&w); err != nil {
		return Message{}, Usage{}, err
	}
	if len(w.Choices) == 0 {
		return Message{}, Usage{}, errors.New("no choices")
	}
	return w.Choices[0].Message, w.Usage, nil
}

func readStream(r io.Reader) (Message, Usage, error) {
	var chunk struct {
		Choices []struct {
			Delta struct {
				Content   string `json:"content"`
				ToolCalls []struct {
					Index    int    `json:"index"`
					ID       string `json:"id"`
					Function struct {
						Name      string `json:"name"`
						Arguments string `json:"arguments"`
					} `json:"function"`
				} `json:"tool_calls"`
			} `json:"delta"`
		} `json:"choices"`
		Usage *Usage `json:"usage"`
	}
	var text strings.Builder
	var calls []ToolCall
	var args []strings.Builder
	var usage Usage
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long := append([]byte(nil), line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = br.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if len(line) > 0 {
			data, ok := bytes.CutPrefix(bytes.TrimRight(line, "\r\n"), []byte("data: "))
			if ok {
				if string(data) == "[DONE]" {
					break
				}
				chunk.Choices, chunk.Usage = nil, nil
				if err := json.Unmarshal(data, &chunk); err != nil {
					return Message{}, Usage{}, err
				}
				if chunk.Usage != nil {
					usage = *chunk.Usage
				}
				for _, c := range chunk.Choices {
					text.WriteString(c.Delta.Content)
					for _, tc := range c.Delta.ToolCalls {
						for len(calls) <= tc.Index {
							calls = append(calls, ToolCall{Type: "function"})
							args = append(args, strings.Builder{})
						}
						if tc.ID != "" {
							calls[tc.Index].ID = tc.ID
						}
						if tc.Function.Name != "" {
							calls[tc.Index].Function.Name = tc.Function.Name
						}
						args[tc.Index].WriteString(tc.Function.Arguments)
					}
				}
			}
		}
		if err == io.EOF {
			return Message{}, Usage{}, errors.New("the stream ended before [DONE]")
		}
		if err != nil {
			return Message{}, Usage{}, err
		}
	}
	msg := Message{Role: "assistant", ToolCalls: calls}
	for i := range calls {
		calls[i].Function.Arguments = args[i].String()
	}
	if len(calls) == 0 || text.Len() > 0 {
		s := text.String()
		msg.Content = &s
	}
	return msg, usage, nil
}
