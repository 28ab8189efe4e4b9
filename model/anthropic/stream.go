package anthropic

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/toolwire/toolwire/internal/sse"
	"github.com/toolwire/toolwire/model"
	"github.com/toolwire/toolwire/model/internal/adapter"
)

// maxStreamEvent bounds one event of a streamed answer: a chunk carries a
// delta, so a bigger one is a broken stream, not a long answer.
const maxStreamEvent = 16 << 20

// answer puts an answer together from its content blocks, whole or
// streamed.
type answer struct {
	text      strings.Builder
	reasoning []model.Reasoning
	calls     []*partialCall
	blocks    map[int]*partialBlock
}

// partialCall is a tool_use block: its input whole, or the pieces of
// input_json_delta.
type partialCall struct {
	id, name string
	input    []byte
	streamed bool
}

// partialBlock is a content block being streamed.
type partialBlock struct {
	typ       string
	reasoning int // index in answer.reasoning
	call      *partialCall
}

// block takes a whole content block.
func (a *answer) block(b wireBlock) {
	switch b.Type {
	case "text":
		if b.Text != nil {
			a.text.WriteString(*b.Text)
		}
	case "thinking":
		r := model.Reasoning{Source: "thinking", Signature: b.Signature}
		if b.Thinking != nil {
			r.Text = *b.Thinking
		}
		a.reasoning = append(a.reasoning, r)
	case "redacted_thinking":
		a.reasoning = append(a.reasoning, model.Reasoning{Source: "redacted_thinking", Redacted: b.Data})
	case "tool_use":
		a.calls = append(a.calls, &partialCall{id: b.ID, name: b.Name, input: b.Input})
	}
}

// start takes content_block_start: the block's type and what it starts
// with.
func (a *answer) start(index int, b wireBlock, emit func(model.Delta)) {
	if a.blocks == nil {
		a.blocks = map[int]*partialBlock{}
	}
	p := &partialBlock{typ: b.Type}
	a.blocks[index] = p
	switch b.Type {
	case "text":
		if b.Text != nil {
			a.textDelta(*b.Text, emit)
		}
	case "thinking", "redacted_thinking":
		p.reasoning = len(a.reasoning)
		a.block(b)
		if b.Thinking != nil && *b.Thinking != "" {
			emit(model.Delta{Kind: model.DeltaReasoning, Text: *b.Thinking})
		}
	case "tool_use":
		// The start carries "input": {}; the input follows in deltas.
		p.call = &partialCall{id: b.ID, name: b.Name, streamed: true}
		a.calls = append(a.calls, p.call)
	}
}

func (a *answer) textDelta(s string, emit func(model.Delta)) {
	if s == "" {
		return
	}
	a.text.WriteString(s)
	emit(model.Delta{Kind: model.DeltaText, Text: s})
}

type wireDelta struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	Thinking    string `json:"thinking"`
	Signature   string `json:"signature"`
	PartialJSON string `json:"partial_json"`
	// message_delta
	StopReason string `json:"stop_reason"`
}

// delta takes content_block_delta.
func (a *answer) delta(index int, d wireDelta, emit func(model.Delta)) error {
	p := a.blocks[index]
	if p == nil {
		return fmt.Errorf("a %s for block %d, which never started", d.Type, index)
	}
	switch d.Type {
	case "text_delta":
		a.textDelta(d.Text, emit)
	case "thinking_delta":
		if p.typ == "thinking" && d.Thinking != "" {
			a.reasoning[p.reasoning].Text += d.Thinking
			emit(model.Delta{Kind: model.DeltaReasoning, Text: d.Thinking})
		}
	case "signature_delta":
		if p.typ == "thinking" {
			a.reasoning[p.reasoning].Signature += d.Signature
		}
	case "input_json_delta":
		if p.call != nil {
			p.call.input = append(p.call.input, d.PartialJSON...)
		}
	}
	return nil
}

// response finishes the answer.
func (a *answer) response(stop string, u model.Usage) *model.Response {
	res := &model.Response{Usage: u}
	res.Message = model.Message{Role: model.RoleAssistant, Text: a.text.String(), Reasoning: a.reasoning}
	for _, c := range a.calls {
		call := model.ToolCall{ID: c.id, Name: c.name, Arguments: json.RawMessage(c.input)}
		if call.ID == "" {
			call.ID = adapter.NewCallID()
		}
		switch {
		case stop == "max_tokens":
			call.Invalid = "the answer was cut off by the length limit before the call was complete"
		case strings.TrimSpace(string(c.input)) == "":
			// A tool without parameters streams no input at all.
			call.Arguments = json.RawMessage(`{}`)
		default:
			call.Invalid = adapter.CheckArguments(call.Arguments)
		}
		res.Message.ToolCalls = append(res.Message.ToolCalls, call)
	}
	switch stop {
	case "max_tokens":
		res.StopReason = model.StopLength
	case "refusal":
		res.StopReason = model.StopFilter
	default: // end_turn, tool_use, stop_sequence, pause_turn
		res.StopReason = model.StopEnd
		if len(res.Message.ToolCalls) > 0 {
			res.StopReason = model.StopToolCalls
		}
	}
	return res
}

type wireEvent struct {
	Type         string        `json:"type"`
	Index        int           `json:"index"`
	Message      *wireResponse `json:"message"`
	ContentBlock *wireBlock    `json:"content_block"`
	Delta        *wireDelta    `json:"delta"`
	Usage        *wireUsage    `json:"usage"`
}

// readStream reads a streamed answer, handing text and thinking to
// onDelta.
func readStream(ep *adapter.Endpoint, resp *http.Response, onDelta func(model.Delta)) (*model.Response, bool, error) {
	var a answer
	var u usage
	produced := false
	emit := func(d model.Delta) {
		if d.Text != "" {
			produced = true
			onDelta(d)
		}
	}
	id, stop := "", ""
	done := false
	err := sse.Each(resp.Body, maxStreamEvent, 4<<10, func(ev sse.Event) error {
		event, data := ev.Name, ev.Data
		var e wireEvent
		if err := json.Unmarshal(data, &e); err != nil {
			return fmt.Errorf("reading a stream event %.200q: %w", data, err)
		}
		if e.Type == "" {
			e.Type = event
		}
		switch e.Type {
		case "message_start":
			if e.Message != nil {
				id = e.Message.ID
				u.update(e.Message.Usage)
			}
		case "content_block_start":
			if e.ContentBlock != nil {
				a.start(e.Index, *e.ContentBlock, emit)
			}
		case "content_block_delta":
			if e.Delta != nil {
				return a.delta(e.Index, *e.Delta, emit)
			}
		case "message_delta":
			if e.Delta != nil && e.Delta.StopReason != "" {
				stop = e.Delta.StopReason
			}
			u.update(e.Usage)
		case "message_stop":
			done = true
		case "error":
			return adapter.StreamError(ep.Provider, ep.URL, data)
		}
		// ping, content_block_stop and events yet unknown need nothing.
		return nil
	})
	if err != nil {
		return nil, produced, err
	}
	if !done {
		return nil, produced, fmt.Errorf("the stream ended before the answer did")
	}
	res := a.response(stop, u.usage())
	res.RequestID = id
	return res, produced, nil
}
