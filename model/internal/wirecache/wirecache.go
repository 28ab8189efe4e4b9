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
// address first. Conversations that start alike share what they have in
// common, and only that: what a request gets is what its own messages
// encode to.
//
// A cache holds the last maxConversations conversations of its adapter:
// their snapshots (which keep the messages' strings alive) and encodings.
package wirecache

import (
	"bytes"
	"encoding/json"
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
		for n < len(msgs) && n < len(conv.msgs) && same(&conv.msgs[n], &msgs[n]) {
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
			m.ToolResults[i].ToolRefs = slices.Clone(m.ToolResults[i].ToolRefs)
		}
	}
	return m
}

// same reports whether two messages hold the same content.
func same(a, b *model.Message) bool {
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
		if x.CallID != y.CallID || x.Name != y.Name || x.Text != y.Text || x.IsError != y.IsError || len(x.Images) != len(y.Images) || !slices.Equal(x.ToolRefs, y.ToolRefs) {
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

// Envelope is what a request holds besides its messages: Head goes
// before them and Tail after; First, when set, is an element of the
// list of messages that goes before them (a system message).
type Envelope struct{ Head, First, Tail []byte }

// Envelopes keeps the last envelope an adapter made, for the requests
// that follow with the same settings (S: a comparable struct of all the
// envelope is made from but the tools) and the same tools. The zero
// value is ready to use; an Envelopes must not be copied after first use.
type Envelopes[S comparable] struct {
	mu       sync.Mutex
	settings S
	tools    []model.ToolSpec // a snapshot
	env      Envelope
	set      bool
}

// Get returns the envelope for settings and tools: the one kept, or a
// new one that build makes (and that is kept).
func (e *Envelopes[S]) Get(settings S, tools []model.ToolSpec, build func() (Envelope, error)) (Envelope, error) {
	e.mu.Lock()
	if e.set && e.settings == settings && sameTools(e.tools, tools) {
		env := e.env
		e.mu.Unlock()
		return env, nil
	}
	e.mu.Unlock()
	env, err := build()
	if err != nil {
		return Envelope{}, err
	}
	snap := slices.Clone(tools)
	for i := range snap {
		snap[i].Parameters = bytes.Clone(snap[i].Parameters)
	}
	e.mu.Lock()
	e.settings, e.tools, e.env, e.set = settings, snap, env, true
	e.mu.Unlock()
	return env, nil
}

func sameTools(a, b []model.ToolSpec) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Description != b[i].Description || a[i].Deferred != b[i].Deferred || !bytes.Equal(a[i].Parameters, b[i].Parameters) {
			return false
		}
	}
	return true
}

// Temperature is a request's temperature as a comparable value, for
// settings.
type Temperature struct {
	Value float64
	Set   bool
}

// TemperatureOf reads t.
func TemperatureOf(t *float64) Temperature {
	if t == nil {
		return Temperature{}
	}
	return Temperature{*t, true}
}

// Join returns a request body: the envelope with the messages' encodings
// that are not empty between Head and Tail, after First, separated by
// commas, in one allocation.
func Join(env Envelope, msgs [][]byte) []byte {
	n := len(env.Head) + len(env.First) + len(env.Tail)
	for _, m := range msgs {
		n += len(m) + 1
	}
	body := make([]byte, 0, n)
	body = append(append(body, env.Head...), env.First...)
	first := len(env.First) == 0
	for _, m := range msgs {
		if len(m) == 0 {
			continue
		}
		if !first {
			body = append(body, ',')
		}
		first = false
		body = append(body, m...)
	}
	return append(body, env.Tail...)
}

// Tail makes the tail of an envelope from rest, the JSON object of the
// request's members that follow the messages: "]" closes the list of
// messages, and rest's members, if any, follow.
func Tail(rest []byte) []byte {
	if len(rest) <= 2 { // {}
		return []byte("]}")
	}
	return append([]byte("],"), rest[1:]...)
}

// AppendList appends each item encoded as JSON to dst, separated by
// commas: the members of a JSON array without its brackets.
func AppendList[T any](dst []byte, items []T) ([]byte, error) {
	for i, item := range items {
		b, err := json.Marshal(item)
		if err != nil {
			return dst, err
		}
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, b...)
	}
	return dst, nil
}
