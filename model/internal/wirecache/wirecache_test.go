package wirecache

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/toolwire/toolwire/model"
)

// enc encodes a message as a test adapter would: every field that can
// change, and the name of the call before (as adapters that pair results
// with calls by place read it), so that a stale encoding shows.
func enc(msgs []model.Message, i int) (string, error) {
	m := msgs[i]
	var b strings.Builder
	fmt.Fprintf(&b, "%s:%q", m.Role, m.Text)
	for _, img := range m.Images {
		fmt.Fprintf(&b, " img(%s,%s)", img.MimeType, img.Data)
	}
	for _, r := range m.Reasoning {
		fmt.Fprintf(&b, " think(%s,%s,%s,%s)", r.Source, r.Text, r.Signature, r.Redacted)
	}
	for _, c := range m.ToolCalls {
		fmt.Fprintf(&b, " call(%s,%s,%s,%s,%s)", c.ID, c.Name, c.Arguments, c.Invalid, c.Signature)
	}
	for k, r := range m.ToolResults {
		name := r.Name
		if name == "" && i > 0 && k < len(msgs[i-1].ToolCalls) {
			name = msgs[i-1].ToolCalls[k].Name
		}
		fmt.Fprintf(&b, " result(%s,%s,%s,%v)", r.CallID, name, r.Text, r.IsError)
		for _, img := range r.Images {
			fmt.Fprintf(&b, " img(%s,%s)", img.MimeType, img.Data)
		}
	}
	return b.String(), nil
}

// history is a conversation after two turns of calls.
func history() []model.Message {
	return []model.Message{
		{Role: model.RoleUser, Text: "weather?", Images: []model.Image{{MimeType: "image/png", Data: "AAAA"}}},
		{Role: model.RoleAssistant, Reasoning: []model.Reasoning{{Source: "thinking", Text: "two calls", Signature: "sig"}}, ToolCalls: []model.ToolCall{
			{ID: "c1", Name: "weather", Arguments: json.RawMessage(`{"city":"Oslo"}`)},
			{ID: "c2", Name: "weather", Arguments: json.RawMessage(`{"city":"Lyon"}`)},
		}},
		{Role: model.RoleTool, ToolResults: []model.ToolResult{{CallID: "c1", Text: "snow", ToolRefs: []string{"weather"}}, {CallID: "c2", Text: "sun", Images: []model.Image{{MimeType: "image/png", Data: "BBBB"}}}}},
		{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "c3", Name: "time", Arguments: json.RawMessage(`{}`)}}},
		{Role: model.RoleTool, ToolResults: []model.ToolResult{{CallID: "c3", Name: "time", Text: "noon"}}},
	}
}

// TestMessages: a request whose history was sent before, grown, cut or
// edited in place gets the encodings a new cache would make, and only
// the messages from the first difference on are encoded again.
func TestMessages(t *testing.T) {
	tests := []struct {
		name string
		// next makes the second request's history from the first's,
		// which it may change in place.
		next      func(h []model.Message) []model.Message
		reencoded int // messages encoded for the second request
	}{
		{"same history", func(h []model.Message) []model.Message { return h }, 0},
		{"a copy of the history", func(h []model.Message) []model.Message { return history() }, 0},
		{"one more message", func(h []model.Message) []model.Message {
			return append(h, model.Message{Role: model.RoleAssistant, Text: "done"})
		}, 1},
		{"the first messages only", func(h []model.Message) []model.Message { return h[:3] }, 0},
		{"a message removed", func(h []model.Message) []model.Message { return slices.Delete(h, 1, 3) }, 2},
		{"text edited in place", func(h []model.Message) []model.Message { h[0].Text = "rain?"; return h }, 5},
		{"a result's text edited in place", func(h []model.Message) []model.Message { h[2].ToolResults[1].Text = "fog"; return h }, 3},
		{"a result's error flag edited in place", func(h []model.Message) []model.Message { h[4].ToolResults[0].IsError = true; return h }, 1},
		{"a result's tool references edited in place", func(h []model.Message) []model.Message { h[2].ToolResults[0].ToolRefs[0] = "other"; return h }, 3},
		{"arguments edited in place, same length", func(h []model.Message) []model.Message {
			copy(h[1].ToolCalls[0].Arguments[9:], "Rome")
			return h
		}, 4},
		{"a call's id edited in place", func(h []model.Message) []model.Message { h[3].ToolCalls[0].ID = "c9"; return h }, 2},
		{"a call marked invalid", func(h []model.Message) []model.Message { h[1].ToolCalls[1].Invalid = "bad"; return h }, 4},
		{"a call renamed: the results after it name it", func(h []model.Message) []model.Message { h[1].ToolCalls[0].Name = "forecast"; return h }, 4},
		{"a call signed", func(h []model.Message) []model.Message { h[3].ToolCalls[0].Signature = "s"; return h }, 2},
		{"a call dropped", func(h []model.Message) []model.Message { h[1].ToolCalls = h[1].ToolCalls[:1]; return h }, 4},
		{"an image's data edited in place", func(h []model.Message) []model.Message { h[0].Images[0].Data = "CCCC"; return h }, 5},
		{"a result's image edited in place", func(h []model.Message) []model.Message {
			h[2].ToolResults[1].Images[0].MimeType = "image/jpeg"
			return h
		}, 3},
		{"reasoning edited in place", func(h []model.Message) []model.Message { h[1].Reasoning[0].Signature = "other"; return h }, 4},
		{"a role changed", func(h []model.Message) []model.Message { h[0].Role = model.RoleAssistant; return h }, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c Messages[string]
			h := history()
			if _, err := c.Encode(h, enc); err != nil {
				t.Fatal(err)
			}
			h2 := tt.next(h)
			n := 0
			got, err := c.Encode(h2, func(msgs []model.Message, i int) (string, error) { n++; return enc(msgs, i) })
			if err != nil {
				t.Fatal(err)
			}
			var fresh Messages[string]
			want, _ := fresh.Encode(h2, enc)
			if !slices.Equal(got, want) {
				t.Errorf("encodings\n%q\nwant (a new cache's)\n%q", got, want)
			}
			if n != tt.reencoded {
				t.Errorf("%d messages encoded again, want %d", n, tt.reencoded)
			}
		})
	}
}

// TestMessagesConversations: conversations that share their start, more
// of them than the cache keeps, each get their own encodings while they
// go on, taking turns and at the same time.
func TestMessagesConversations(t *testing.T) {
	var c Messages[string]
	const convs = maxConversations + 3
	var wg sync.WaitGroup
	for k := range convs {
		wg.Go(func() {
			h := history()[:1] // the same first message for all
			for turn := range 6 {
				h = append(h, model.Message{Role: model.RoleAssistant, Text: fmt.Sprintf("conversation %d, turn %d", k, turn)})
				got, err := c.Encode(h, enc)
				if err != nil {
					t.Error(err)
					return
				}
				var fresh Messages[string]
				if want, _ := fresh.Encode(h, enc); !slices.Equal(got, want) {
					t.Errorf("conversation %d, turn %d: %q, want %q", k, turn, got, want)
				}
			}
		})
	}
	wg.Wait()
	if len(c.convs) > maxConversations {
		t.Errorf("%d conversations kept, want at most %d", len(c.convs), maxConversations)
	}
}

// TestMessagesError: an encoding error is returned, and nothing of the
// failed request is kept.
func TestMessagesError(t *testing.T) {
	var c Messages[string]
	h := history()
	_, err := c.Encode(h, func(msgs []model.Message, i int) (string, error) {
		if i == 3 {
			return "", fmt.Errorf("message %d cannot be encoded", i)
		}
		return enc(msgs, i)
	})
	if err == nil || !strings.Contains(err.Error(), "message 3") {
		t.Fatalf("error %v, want message 3's", err)
	}
	n := 0
	if _, err := c.Encode(h, func(msgs []model.Message, i int) (string, error) { n++; return enc(msgs, i) }); err != nil || n != len(h) {
		t.Errorf("%d messages encoded after the error (%v), want %d", n, err, len(h))
	}
}

// TestEnvelopes: the envelope is made again when a setting or a tool
// changes, in place included, and only then.
func TestEnvelopes(t *testing.T) {
	type set struct{ name string }
	tools := []model.ToolSpec{{Name: "weather", Description: "Weather.", Parameters: json.RawMessage(`{"type":"object"}`)}}
	var e Envelopes[set]
	made := 0
	build := func() (Envelope, error) {
		made++
		return Envelope{Head: []byte(fmt.Sprint(made))}, nil
	}
	steps := []struct {
		name  string
		edit  func()
		s     set
		built bool
	}{
		{"first", func() {}, set{"a"}, true},
		{"same", func() {}, set{"a"}, false},
		{"a setting changed", func() {}, set{"b"}, true},
		{"a copy of the tools", func() { tools = slices.Clone(tools) }, set{"b"}, false},
		{"a schema edited in place", func() { copy(tools[0].Parameters[9:], "string") }, set{"b"}, true},
		{"a description changed", func() { tools[0].Description = "The weather." }, set{"b"}, true},
		{"a tool deferred", func() { tools[0].Deferred = true }, set{"b"}, true},
		{"a tool more", func() { tools = append(tools, model.ToolSpec{Name: "time"}) }, set{"b"}, true},
	}
	for _, st := range steps {
		st.edit()
		before := made
		env, err := e.Get(st.s, tools, build)
		if err != nil {
			t.Fatal(err)
		}
		if built := made > before; built != st.built || string(env.Head) != fmt.Sprint(made) {
			t.Errorf("%s: made again %v (envelope %s), want %v", st.name, built, env.Head, st.built)
		}
	}
}

func TestJoin(t *testing.T) {
	for _, tt := range []struct {
		first string
		msgs  []string
		want  string
	}{
		{"", nil, "[]"},
		{"", []string{"a", "", "b"}, "[a,b]"},
		{"s", []string{"", "a"}, "[s,a]"},
		{"s", nil, "[s]"},
	} {
		var msgs [][]byte
		for _, m := range tt.msgs {
			msgs = append(msgs, []byte(m))
		}
		if got := string(Join(Envelope{Head: []byte("["), First: []byte(tt.first), Tail: []byte("]")}, msgs)); got != tt.want {
			t.Errorf("Join(%q, %q) = %s, want %s", tt.first, tt.msgs, got, tt.want)
		}
	}
}
