package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/toolwire/toolwire/internal/jsonvalue"
	"github.com/toolwire/toolwire/model"
	"github.com/toolwire/toolwire/model/internal/adapter"
)

// accumulator puts an answer together from what the server sends, whole or
// in stream deltas.
type accumulator struct {
	text     strings.Builder
	think    adapter.ThinkSplitter
	thoughts []model.Reasoning
	calls    []*partialCall
	byIndex  map[int]*partialCall
	last     *partialCall
}

// partialCall is a tool call being received. Its arguments are kept as
// the raw insides of the JSON strings they came in, and decoded once
// whole, so that a piece that ends inside an escape or between the halves
// of a surrogate pair takes no harm.
type partialCall struct {
	id, name string
	rawArgs  []byte
}

// content takes answer text, separating inline <think> reasoning.
func (a *accumulator) content(s string, emit func(model.Delta)) {
	if s == "" {
		return
	}
	r, t := a.think.Write(s)
	a.addThink(r, t, emit)
}

func (a *accumulator) addThink(r, t string, emit func(model.Delta)) {
	if r != "" {
		a.addReasoning("think", r)
		if emit != nil {
			emit(model.Delta{Kind: model.DeltaReasoning, Text: r})
		}
	}
	if t != "" {
		a.text.WriteString(t)
		if emit != nil {
			emit(model.Delta{Kind: model.DeltaText, Text: t})
		}
	}
}

func (a *accumulator) flush(emit func(model.Delta)) {
	r, t := a.think.Flush()
	a.addThink(r, t, emit)
}

// addReasoning appends reasoning text from source, merging with the last
// piece from the same source.
func (a *accumulator) addReasoning(source, text string) {
	if n := len(a.thoughts); n > 0 && a.thoughts[n-1].Source == source {
		a.thoughts[n-1].Text += text
		return
	}
	a.thoughts = append(a.thoughts, model.Reasoning{Source: source, Text: text})
}

// reasoningText takes reasoning text sent in the field source.
func (a *accumulator) reasoningText(source, text string, emit func(model.Delta)) {
	if text == "" {
		return
	}
	a.addReasoning(source, text)
	if emit != nil {
		emit(model.Delta{Kind: model.DeltaReasoning, Text: text})
	}
}

// callPiece is a tool call, or a piece of one, as the server sent it.
type callPiece struct {
	index    int
	hasIndex bool
	id, name string
	// args is the arguments' JSON: a string (the usual way) or an
	// object.
	args []byte
}

// toolCall takes a tool call or a piece of one. A piece starts a new call
// when it names a new index, or carries an id unlike the current call's at
// its index (Ollama sends parallel calls all at index 0); a piece without
// an index (or with -1) continues the last call unless its id is new.
func (a *accumulator) toolCall(tc *callPiece) {
	var c *partialCall
	newID := func(cur *partialCall) bool { return tc.id != "" && cur.id != "" && tc.id != cur.id }
	switch {
	case tc.hasIndex && tc.index >= 0:
		c = a.byIndex[tc.index]
		if c == nil || newID(c) {
			c = a.start()
			if a.byIndex == nil {
				a.byIndex = map[int]*partialCall{}
			}
			a.byIndex[tc.index] = c
		}
	case a.last == nil || newID(a.last):
		c = a.start()
	default:
		c = a.last
	}
	a.last = c
	if tc.id != "" {
		c.id = tc.id
	}
	if tc.name != "" && c.name == "" {
		c.name = tc.name
	}
	c.rawArgs = appendArgs(c.rawArgs, tc.args)
}

func (a *accumulator) start() *partialCall {
	c := &partialCall{}
	a.calls = append(a.calls, c)
	return c
}

// appendArgs appends a piece of arguments: the insides of a JSON string,
// as written, or (from servers that send the arguments as an object, not a
// string) the object's text, escaped as a string's insides would be.
func appendArgs(dst []byte, piece []byte) []byte {
	if len(piece) == 0 || string(piece) == "null" {
		return dst
	}
	if piece[0] == '"' && len(piece) >= 2 {
		return append(dst, piece[1:len(piece)-1]...)
	}
	b, _ := json.Marshal(string(piece))
	return append(dst, b[1:len(b)-1]...)
}

// response finishes the answer.
func (a *accumulator) response(finish string, usage model.Usage) *model.Response {
	res := &model.Response{Usage: usage}
	res.Message = model.Message{Role: model.RoleAssistant, Text: a.text.String(), Reasoning: a.thoughts}
	for _, c := range a.calls {
		if c.name == "" && len(c.rawArgs) == 0 {
			continue
		}
		call := model.ToolCall{ID: c.id, Name: c.name}
		if call.ID == "" {
			call.ID = adapter.NewCallID()
		}
		args, err := unquote(c.rawArgs)
		if err != nil {
			call.Invalid = fmt.Sprintf("the arguments could not be read: %v", err)
		}
		call.Arguments = args
		switch {
		case call.Invalid != "":
		case finish == "length":
			call.Invalid = "the answer was cut off by the length limit before the call was complete"
		case len(bytes.TrimSpace(args)) == 0:
			call.Arguments = json.RawMessage(`{}`)
		default:
			if msg := adapter.CheckArguments(call.Arguments); msg != "" {
				call.Invalid = msg
			}
		}
		res.Message.ToolCalls = append(res.Message.ToolCalls, call)
	}
	switch {
	case finish == "length":
		res.StopReason = model.StopLength
	case len(res.Message.ToolCalls) > 0:
		res.StopReason = model.StopToolCalls
	case finish == "content_filter":
		res.StopReason = model.StopFilter
	default:
		res.StopReason = model.StopEnd
	}
	return res
}

// unquote decodes the insides of a JSON string, as encoding/json does:
// at once when its only escapes are \" and \\ (arguments are a JSON
// object written as a string: its quotes are escaped), else with
// jsonvalue.
func unquote(raw []byte) ([]byte, error) {
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c == '\\' && i+1 < len(raw) && (raw[i+1] == '"' || raw[i+1] == '\\') {
			i++
			c = raw[i]
		} else if c == '\\' || c == '"' || c < 0x20 {
			return unquoteSlow(raw)
		}
		out = append(out, c)
	}
	if !utf8.Valid(out) {
		return unquoteSlow(raw) // invalid UTF-8 becomes U+FFFD
	}
	return out, nil
}

func unquoteSlow(raw []byte) ([]byte, error) {
	quoted := append(append(append(make([]byte, 0, len(raw)+2), '"'), raw...), '"')
	if end, err := jsonvalue.Skip(quoted, 0); err != nil {
		return nil, err
	} else if end != len(quoted) {
		return nil, fmt.Errorf("invalid character %q after the end of the string", quoted[end])
	}
	s, err := jsonvalue.String(quoted)
	return []byte(s), err
}
