// Package adapter holds what the model adapters (model/openai,
// model/anthropic, model/gemini, model/ollama) share and a user of package
// model does not need: ids for tool calls a provider left without one,
// the check of a call's arguments, and the splitting of inline reasoning.
package adapter

import "strings"

// ThinkSplitter separates reasoning that a model writes inline, between
// <think> and </think> at the start of its answer (Qwen, DeepSeek-R1 and
// others served without a reasoning parser), from the answer itself. Feed
// it the text as it streams; tags split across pieces are handled.
type ThinkSplitter struct {
	state   int    // thinkStart, thinkIn, thinkOut
	pending string // text held back: a tag may begin in it
}

const (
	thinkStart = iota // nothing but white space seen yet
	thinkIn           // inside <think>
	thinkOut          // answer text
)

const (
	openThink  = "<think>"
	closeThink = "</think>"
)

// Write takes the next piece of text and returns what of it is reasoning
// and what is answer, as far as can be told yet.
func (t *ThinkSplitter) Write(s string) (reasoning, answer string) {
	s = t.pending + s
	t.pending = ""
	for s != "" {
		switch t.state {
		case thinkStart:
			trimmed := strings.TrimLeft(s, " \t\r\n")
			switch {
			case trimmed == "":
				t.pending = s
				return reasoning, answer
			case strings.HasPrefix(trimmed, openThink):
				t.state = thinkIn
				s = trimmed[len(openThink):]
			case strings.HasPrefix(openThink, trimmed):
				t.pending = s // maybe the start of <think>
				return reasoning, answer
			default:
				t.state = thinkOut
			}
		case thinkIn:
			if i := strings.Index(s, closeThink); i >= 0 {
				reasoning += s[:i]
				s = strings.TrimLeft(s[i+len(closeThink):], " \t\r\n")
				t.state = thinkOut
				continue
			}
			keep := partialSuffix(s, closeThink)
			reasoning += s[:len(s)-keep]
			t.pending = s[len(s)-keep:]
			return reasoning, answer
		case thinkOut:
			return reasoning, answer + s
		}
	}
	return reasoning, answer
}

// Flush returns what was held back at the end of the text.
func (t *ThinkSplitter) Flush() (reasoning, answer string) {
	s := t.pending
	t.pending = ""
	if t.state == thinkIn {
		return s, ""
	}
	return "", s
}

// partialSuffix is the length of the longest suffix of s that begins tag.
func partialSuffix(s, tag string) int {
	for n := min(len(s), len(tag)-1); n > 0; n-- {
		if strings.HasPrefix(tag, s[len(s)-n:]) {
			return n
		}
	}
	return 0
}
