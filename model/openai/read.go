package openai

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"unicode/utf8"

	"github.com/toolwire/toolwire/internal/jsonvalue"
	"github.com/toolwire/toolwire/internal/sse"
	"github.com/toolwire/toolwire/model"
	"github.com/toolwire/toolwire/model/internal/adapter"
)

// maxStreamEvent bounds one event of a streamed answer: a chunk carries a
// delta, so a bigger one is a broken stream, not a long answer.
const maxStreamEvent = 16 << 20

// Answers are read with a scanner (internal/jsonvalue) rather than
// decoded into structs: a stream sends a chunk for every token or so, and
// each carries little (a piece of text or of a call's arguments) in an
// envelope that repeats the id, the model and the rest. Only what the
// answer is made of is read: the id once, the choices' text, reasoning,
// calls and finish reason, the usage and the error. A call's arguments
// are kept as the raw insides of the JSON strings they come in, without
// decoding them piece by piece.

// readResponse reads a non-streamed answer.
func readResponse(resp *http.Response) (*model.Response, error) {
	body, err := readAll(resp)
	if err != nil {
		return nil, fmt.Errorf("reading the answer: %w", err)
	}
	var r answerReader
	var p part
	if err := r.read(body, true, &p, nil); err != nil {
		return nil, fmt.Errorf("reading the answer: %w", err)
	}
	if p.choices == 0 {
		return nil, fmt.Errorf("the answer has no choices")
	}
	res := r.acc.response(p.finish, p.usage.usage())
	res.RequestID = r.id
	return res, nil
}

// readAll reads a body whole, in one allocation when it says its length
// (up to a bound: the length is the server's word).
func readAll(resp *http.Response) ([]byte, error) {
	b := make([]byte, 0, min(max(resp.ContentLength, 0), 1<<20)+1)
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := resp.Body.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
}

// readStream reads a streamed answer, handing text to onDelta.
func readStream(ep *adapter.Endpoint, resp *http.Response, onDelta func(model.Delta)) (*model.Response, bool, error) {
	var r answerReader
	produced := false
	finish := ""
	var usage *wireUsage
	emit := func(d model.Delta) {
		if d.Text != "" {
			produced = true
			onDelta(d)
		}
	}
	done := false
	err := sse.Each(resp.Body, maxStreamEvent, 4<<10, func(ev sse.Event) error {
		data := ev.Data
		if bytes.Equal(bytes.TrimSpace(data), []byte("[DONE]")) {
			done = true
			return nil
		}
		var p part
		if err := r.read(data, false, &p, emit); err != nil {
			return fmt.Errorf("reading a stream chunk %.200q: %w", data, err)
		}
		if p.isError {
			return adapter.StreamError(ep.Provider, ep.URL, data)
		}
		if p.usage != nil {
			usage = p.usage
		}
		if p.finish != "" {
			finish = p.finish
		}
		return nil
	})
	if err != nil {
		return nil, produced, err
	}
	if !done && finish == "" {
		return nil, produced, fmt.Errorf("the stream ended before the answer did")
	}
	r.acc.flush(emit)
	res := r.acc.response(finish, usage.usage())
	res.RequestID = r.id
	return res, produced, nil
}

// answerReader reads an answer, whole or chunk by chunk, into acc.
type answerReader struct {
	acc accumulator
	id  string
}

// part is what a chunk (or a whole answer) says besides its content.
type part struct {
	choices int
	finish  string // the last non-empty finish_reason
	usage   *wireUsage
	isError bool // it carries an error
}

// read reads a whole answer (the message of its first choice) or a
// chunk of a stream (the deltas of all its choices). The JSON is checked
// whole before any of it is taken.
func (r *answerReader) read(data []byte, whole bool, p *part, emit func(model.Delta)) error {
	var id, choices, usage []byte
	start := jsonvalue.SkipSpace(data, 0)
	end, err := jsonvalue.Object(data, start, func(key string, s, e int) {
		switch key {
		case "id":
			id = data[s:e]
		case "choices":
			choices = data[s:e]
		case "usage":
			usage = data[s:e]
		case "error":
			p.isError = string(data[s:e]) != "null"
		}
	})
	if err == nil {
		err = jsonvalue.End(data, end)
	}
	if err != nil || p.isError {
		return err
	}
	if len(id) > 0 && id[0] == '"' && string(id[1:len(id)-1]) != r.id {
		if r.id, err = str(id); err != nil {
			return err
		}
	}
	if len(usage) > 0 && usage[0] == '{' {
		if p.usage, err = readUsage(usage); err != nil {
			return fmt.Errorf("usage: %w", err)
		}
	}
	if len(choices) == 0 || choices[0] != '[' {
		return nil
	}
	_, err = jsonvalue.Array(choices, 0, func(s, e int) {
		if err == nil && (!whole || p.choices == 0) {
			err = r.choice(choices[s:e], whole, p, emit)
		}
		p.choices++
	})
	return err
}

// choice reads one choice: its message (whole) or delta, and its finish
// reason.
func (r *answerReader) choice(data []byte, whole bool, p *part, emit func(model.Delta)) error {
	if data[0] != '{' {
		return nil
	}
	var msg, finish []byte
	want := "delta"
	if whole {
		want = "message"
	}
	_, _ = jsonvalue.Object(data, 0, func(key string, s, e int) {
		switch key {
		case want:
			msg = data[s:e]
		case "finish_reason":
			finish = data[s:e]
		}
	})
	if len(msg) > 0 && msg[0] == '{' {
		if err := r.message(msg, whole, emit); err != nil {
			return err
		}
	}
	if len(finish) > 0 && finish[0] == '"' {
		f, err := str(finish)
		if err != nil {
			return err
		}
		if f != "" {
			p.finish = f
		}
	}
	return nil
}

// message reads a message or a delta: its reasoning and content (for a
// delta, the reasoning first, as it streams), then its calls.
func (r *answerReader) message(data []byte, whole bool, emit func(model.Delta)) error {
	var content, reasoningContent, reasoning, calls []byte
	_, _ = jsonvalue.Object(data, 0, func(key string, s, e int) {
		switch key {
		case "content":
			content = data[s:e]
		case "reasoning_content":
			reasoningContent = data[s:e]
		case "reasoning":
			reasoning = data[s:e]
		case "tool_calls":
			calls = data[s:e]
		}
	})
	text, err := contentText(content)
	if err != nil {
		return err
	}
	if whole {
		// A whole message's inline reasoning comes first.
		r.acc.content(text, nil)
	}
	for _, f := range []struct {
		source string
		raw    []byte
	}{{"reasoning_content", reasoningContent}, {"reasoning", reasoning}} {
		if len(f.raw) == 0 || f.raw[0] != '"' {
			continue
		}
		t, err := str(f.raw)
		if err != nil {
			return err
		}
		r.acc.reasoningText(f.source, t, emit)
	}
	if !whole {
		r.acc.content(text, emit)
	}
	if len(calls) == 0 || calls[0] != '[' {
		return nil
	}
	i := 0
	_, _ = jsonvalue.Array(calls, 0, func(s, e int) {
		if err == nil {
			err = r.call(calls[s:e], whole, i)
		}
		i++
	})
	return err
}

// call reads a tool call or a piece of one; in a whole message, a call
// without an index has its place as index.
func (r *answerReader) call(data []byte, whole bool, place int) error {
	if data[0] != '{' {
		return nil
	}
	var tc callPiece
	var index, id, fn []byte
	_, _ = jsonvalue.Object(data, 0, func(key string, s, e int) {
		switch key {
		case "index":
			index = data[s:e]
		case "id":
			id = data[s:e]
		case "function":
			fn = data[s:e]
		}
	})
	if len(index) > 0 && string(index) != "null" {
		n, err := strconv.Atoi(string(index))
		if err != nil {
			return fmt.Errorf("a tool call's index is %s, not an integer", index)
		}
		tc.index, tc.hasIndex = n, true
	} else if whole {
		tc.index, tc.hasIndex = place, true
	}
	var err error
	if len(id) > 0 && id[0] == '"' {
		if tc.id, err = str(id); err != nil {
			return err
		}
	}
	if len(fn) > 0 && fn[0] == '{' {
		var name []byte
		_, _ = jsonvalue.Object(fn, 0, func(key string, s, e int) {
			switch key {
			case "name":
				name = fn[s:e]
			case "arguments":
				tc.args = fn[s:e]
			}
		})
		if len(name) > 0 && name[0] == '"' {
			if tc.name, err = str(name); err != nil {
				return err
			}
		}
	}
	r.acc.toolCall(&tc)
	return nil
}

// contentText reads a message's content: a string, or text parts (their
// text joined); anything else is no text.
func contentText(raw []byte) (string, error) {
	switch {
	case len(raw) == 0:
		return "", nil
	case raw[0] == '"':
		return str(raw)
	case raw[0] != '[':
		return "", nil
	}
	var b []byte
	var err error
	_, _ = jsonvalue.Array(raw, 0, func(s, e int) {
		if err != nil || raw[s] != '{' {
			return
		}
		_, _ = jsonvalue.Object(raw, s, func(key string, ks, ke int) {
			if key == "text" && raw[ks] == '"' && err == nil {
				var t string
				t, err = str(raw[ks:ke])
				b = append(b, t...)
			}
		})
	})
	return string(b), err
}

// str decodes a JSON string that the scanner has checked.
func str(raw []byte) (string, error) {
	if in := raw[1 : len(raw)-1]; bytes.IndexByte(in, '\\') < 0 && utf8.Valid(in) {
		return string(in), nil
	}
	return jsonvalue.String(raw)
}

// readUsage reads a usage object.
func readUsage(data []byte) (*wireUsage, error) {
	u := &wireUsage{}
	var err error
	count := func(dst *int, raw []byte) {
		if err == nil && string(raw) != "null" {
			if *dst, err = strconv.Atoi(string(raw)); err != nil {
				err = fmt.Errorf("a token count is %s, not an integer", raw)
			}
		}
	}
	// details reads the one count wanted of a details object.
	details := func(dst *int, raw []byte, name string) {
		if raw[0] == '{' {
			_, _ = jsonvalue.Object(raw, 0, func(key string, s, e int) {
				if key == name {
					count(dst, raw[s:e])
				}
			})
		}
	}
	_, _ = jsonvalue.Object(data, 0, func(key string, s, e int) {
		v := data[s:e]
		switch key {
		case "prompt_tokens":
			count(&u.PromptTokens, v)
		case "completion_tokens":
			count(&u.CompletionTokens, v)
		case "prompt_cache_hit_tokens":
			count(&u.PromptCacheHitTokens, v)
		case "prompt_tokens_details":
			details(&u.cachedTokens, v, "cached_tokens")
		case "completion_tokens_details":
			details(&u.reasoningTokens, v, "reasoning_tokens")
		}
	})
	return u, err
}
