// Package wirecache keeps what a model adapter encoded of a conversation,
// for the next request of the same conversation: the API is stateless, so
// every request carries the whole history, and without a cache each turn
// would encode every past message again.
//
// A conversation is recognised by its content, never by where it lives in
// memory: each message encoded is kept with a snapshot of it (its strings
// shared, its slices and tool-call arguments copied), and a request reuses
// the encoding of the longest run of its first messages equal to their
// snapshots. A message changed, removed or put in another place after it
// was encoded therefore never meets its old encoding: the messages from
// the first difference on are encoded again. Comparing an unchanged
// message costs little: its strings are the same strings, which compare by
// address first.
package wirecache

import (
	"bytes"
	"slices"
	"sync"

	"github.com/toolwire/toolwire/model"
)

// maxConversations bounds the conversations a cache remembers; the one
// used longest ago is forgotten first.
const maxConversations = 8

// Messages keeps the encodings (E) of the messages of the last few
// conversations of an adapter. The zero value is ready to use, and a
// Messages is safe to use from several goroutines at once; it must not
// be copied after first use.
type Messages[E any] struct {
	mu    sync.Mutex
	convs []*conversation[E] // the most recently used first
}

// conversation is the messages of one conversation encoded so far. Its
// slices only grow, and an element once written never changes: callers
// hold sub-slices of them without the lock.
type conversation[E any] struct {
	msgs []model.Message // snapshots
	enc  []E
}

// Encode returns the encodings of msgs, in order: those of the longest
// run of leading messages a conversation of the cache holds unchanged are
// reused, and encode makes the others. encode(msgs, i) encodes msgs[i],
// and may read the messages before it (the name of the call a result
// answers, say): a message is reused only when every message before it is
// too. The slice returned must not be modified.
func (c *Messages[E]) Encode(msgs []model.Message, encode func(msgs []model.Message, i int) (E, error)) ([]E, error) {
	c.mu.Lock()
	conv, n := c.longest(msgs)
	var doneMsgs []model.Message
	var doneEnc []E
	if conv != nil {
		c.toFront(conv)
		doneMsgs, doneEnc = conv.msgs[:n:n], conv.enc[:n:n]
	}
	c.mu.Unlock()
	if n == len(msgs) {
		return doneEnc, nil
	}

	newMsgs := make([]model.Message, 0, len(msgs)-n)
	newEnc := make([]E, 0, len(msgs)-n)
	for i := n; i < len(msgs); i++ {
		e, err := encode(msgs, i)
		if err != nil {
			return nil, err
		}
		newMsgs = append(newMsgs, snapshot(msgs[i]))
		newEnc = append(newEnc, e)
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	if conv != nil && len(conv.msgs) == n && slices.Contains(c.convs, conv) {
		// The conversation goes on where it was left: extend it. What
		// others hold of it ends at n, so the elements written here
		// are no one else's.
		conv.msgs = append(conv.msgs, newMsgs...)
		conv.enc = append(conv.enc, newEnc...)
	} else {
		// A new conversation, or one that took another turn here (an
		// edited history, or another conversation with the same start):
		// it gets its own, and the old one stays until forgotten.
		conv = &conversation[E]{msgs: append(doneMsgs, newMsgs...), enc: append(doneEnc, newEnc...)}
		c.convs = slices.Insert(c.convs, 0, conv)
		if len(c.convs) > maxConversations {
			c.convs[maxConversations] = nil
			c.convs = c.convs[:maxConversations]
		}
	}
	c.toFront(conv)
	return conv.enc[:len(msgs):len(msgs)], nil
}

// longest finds the conversation holding the longest run of msgs' first
// messages, and its length.
func (c *Messages[E]) longest(msgs []model.Message) (*conversation[E], int) {
	var best *conversation[E]
	bestN := 0
	for _, conv := range c.convs {
		n := 0
		for n < len(msgs) && n < len(conv.msgs) && Same(&conv.msgs[n], &msgs[n]) {
			n++
		}
		if n > bestN {
			best, bestN = conv, n
		}
		if n == len(msgs) {
			break
		}
	}
	return best, bestN
}

func (c *Messages[E]) toFront(conv *conversation[E]) {
	if i := slices.Index(c.convs, conv); i > 0 {
		copy(c.convs[1:i+1], c.convs[:i])
		c.convs[0] = conv
	}
}

// snapshot copies what of m could change in place: its slices, and the
// bytes of its tool calls' arguments. Strings cannot change.
func snapshot(m model.Message) model.Message {
	m.Images = slices.Clone(m.Images)
	m.Reasoning = slices.Clone(m.Reasoning)
	if m.ToolCalls != nil {
		m.ToolCalls = slices.Clone(m.ToolCalls)
		for i := range m.ToolCalls {
			m.ToolCalls[i].Arguments = bytes.Clone(m.ToolCalls[i].Arguments)
		}
	}
	if m.ToolResults != nil {
		m.ToolResults = slices.Clone(m.ToolResults)
		for i := range m.ToolResults {
			m.ToolResults[i].Images = slices.Clone(m.ToolResults[i].Images)
		}
	}
	return m
}

// Same reports whether two messages hold the same content.
func Same(a, b *model.Message) bool {
	if a.Role != b.Role || a.Text != b.Text || len(a.Images) != len(b.Images) || len(a.Reasoning) != len(b.Reasoning) ||
		len(a.ToolCalls) != len(b.ToolCalls) || len(a.ToolResults) != len(b.ToolResults) {
		return false
	}
	for i := range a.Images {
		if a.Images[i] != b.Images[i] {
			return false
		}
	}
	for i := range a.Reasoning {
		if a.Reasoning[i] != b.Reasoning[i] {
			return false
		}
	}
	for i := range a.ToolCalls {
		x, y := &a.ToolCalls[i], &b.ToolCalls[i]
		if x.ID != y.ID || x.Name != y.Name || x.Invalid != y.Invalid || x.Signature != y.Signature || !bytes.Equal(x.Arguments, y.Arguments) {
			return false
		}
	}
	for i := range a.ToolResults {
		x, y := &a.ToolResults[i], &b.ToolResults[i]
		if x.CallID != y.CallID || x.Name != y.Name || x.Text != y.Text || x.IsError != y.IsError || len(x.Images) != len(y.Images) {
			return false
		}
		for j := range x.Images {
			if x.Images[j] != y.Images[j] {
				return false
			}
		}
	}
	return true
}

// Last keeps one value: the encoding of the part of a request that stays
// the same from turn to turn (the model, the system prompt, the tools, the
// settings), under a key that says what it was made from. The zero value
// is ready to use; a Last must not be copied after first use.
type Last[K, V any] struct {
	mu  sync.Mutex
	key K
	v   V
	set bool
}

// Get returns the value kept, when same says its key is the key wanted.
func (l *Last[K, V]) Get(same func(K) bool) (V, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.set && same(l.key) {
		return l.v, true
	}
	var zero V
	return zero, false
}

// Put keeps v under key; the caller changes neither afterwards.
func (l *Last[K, V]) Put(key K, v V) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.key, l.v, l.set = key, v, true
}

// Tools is a snapshot of a request's tools, for a Last key.
type Tools []model.ToolSpec

// SnapshotTools copies what of specs could change in place.
func SnapshotTools(specs []model.ToolSpec) Tools {
	out := slices.Clone(specs)
	for i := range out {
		out[i].Parameters = bytes.Clone(out[i].Parameters)
	}
	return out
}

// Same reports whether specs are the tools of the snapshot.
func (t Tools) Same(specs []model.ToolSpec) bool {
	return slices.EqualFunc(t, specs, func(x, y model.ToolSpec) bool {
		return x.Name == y.Name && x.Description == y.Description && bytes.Equal(x.Parameters, y.Parameters)
	})
}

// Join returns a request body: head, then the non-empty parts of lists
// separated by commas, then tail, in one allocation.
func Join(head, tail []byte, lists ...[][]byte) []byte {
	n := len(head) + len(tail)
	for _, parts := range lists {
		for _, p := range parts {
			n += len(p) + 1
		}
	}
	body := make([]byte, 0, n)
	body = append(body, head...)
	first := true
	for _, parts := range lists {
		for _, p := range parts {
			if len(p) == 0 {
				continue
			}
			if !first {
				body = append(body, ',')
			}
			first = false
			body = append(body, p...)
		}
	}
	return append(body, tail...)
}
