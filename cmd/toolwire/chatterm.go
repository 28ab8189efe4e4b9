package main

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"

	"golang.org/x/term"
)

// errInterrupted is the cause of a turn the user stopped with Ctrl-C, and
// what chat.read returns for a line Ctrl-C ended. Its text is the reason
// an MCP server is given with the cancellation of a call.
var errInterrupted = errors.New("interrupted by the user (Ctrl-C)")

const ctrlC = 3

// keyboard reads a raw terminal's keys on a goroutine of its own, so that
// a Ctrl-C is seen at once while a turn runs (the terminal is raw: no
// SIGINT), and hands the other keys to the line editor, which reads them
// as an io.Reader. A Ctrl-C during a turn cancels it and drops the keys
// typed during it; while a line is read (the prompt, or a question
// during the turn) it ends the line as Enter does, the line marked as
// interrupted.
type keyboard struct {
	mu   sync.Mutex
	more *sync.Cond
	buf  []byte // keys for the editor
	err  error  // the input's end
	last byte   // the last key handed on, to count CR LF as one line end
	// reading says the editor is reading a line.
	reading bool
	// cancel cancels the running turn; nil between turns.
	cancel context.CancelCauseFunc
	// ends counts the line ends handed to the editor, read those it
	// returned; interrupts holds the numbers of the ends that Ctrl-C made.
	ends, read int
	interrupts []int
}

func newKeyboard(r io.Reader) *keyboard {
	k := &keyboard{}
	k.more = sync.NewCond(&k.mu)
	go k.run(r)
	return k
}

// run reads the keys until the input ends.
func (k *keyboard) run(r io.Reader) {
	b := make([]byte, 256)
	for {
		n, err := r.Read(b)
		k.mu.Lock()
		for _, c := range b[:n] {
			k.key(c)
		}
		if err != nil {
			k.err = err
		}
		k.more.Broadcast()
		k.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// key takes one key; k.mu is held.
func (k *keyboard) key(c byte) {
	if c != ctrlC {
		k.buf = append(k.buf, c)
		if isLineEnd(c, k.last) {
			k.ends++
		}
		k.last = c
		return
	}
	if k.cancel != nil {
		k.cancel(errInterrupted)
		k.cancel = nil
		if !k.reading {
			// What was typed during the turn goes with it.
			k.ends -= lineEnds(k.buf)
			k.buf = k.buf[:0]
			return
		}
	}
	k.buf = append(k.buf, '\r')
	k.last = '\r'
	k.ends++
	k.interrupts = append(k.interrupts, k.ends)
}

// isLineEnd reports whether key c ends a line for the editor, after
// key last: a CR, or an LF but for the one of a CR LF.
func isLineEnd(c, last byte) bool {
	return c == '\r' || c == '\n' && last != '\r'
}

// lineEnds counts the line ends in keys.
func lineEnds(keys []byte) int {
	n, last := 0, byte(0)
	for _, c := range keys {
		if isLineEnd(c, last) {
			n++
		}
		last = c
	}
	return n
}

// Read hands the editor the keys typed.
func (k *keyboard) Read(p []byte) (int, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for len(k.buf) == 0 && k.err == nil {
		k.more.Wait()
	}
	if len(k.buf) == 0 {
		return 0, k.err
	}
	n := copy(p, k.buf)
	k.buf = k.buf[n:]
	return n, nil
}

// readLine reads a line with t, which reads k; errInterrupted (with the
// line typed so far) when Ctrl-C ended it.
func (k *keyboard) readLine(t *term.Terminal) (string, error) {
	k.mu.Lock()
	k.reading = true
	k.mu.Unlock()
	line, err := t.ReadLine()
	k.mu.Lock()
	defer k.mu.Unlock()
	k.reading = false
	if err != nil {
		return line, err
	}
	k.read++
	for len(k.interrupts) > 0 && k.interrupts[0] < k.read {
		k.interrupts = k.interrupts[1:] // dropped with the keys of a turn
	}
	if len(k.interrupts) > 0 && k.interrupts[0] == k.read {
		k.interrupts = k.interrupts[1:]
		return line, errInterrupted
	}
	return line, nil
}

// setTurn says which turn a Ctrl-C cancels; nil: none runs.
func (k *keyboard) setTurn(cancel context.CancelCauseFunc) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.cancel = cancel
}

// markdown renders an answer's markdown for a terminal as it streams: a
// block (up to a blank line outside a code fence) is rendered once it is
// complete, word-wrapped at the terminal's width, a blank line between
// the blocks of an answer.
type markdown struct {
	r       *mdRenderer
	width   int
	pending string
	shown   bool // a block of the answer was shown
}

// write adds text to the answer and returns what is ready to show.
func (m *markdown) write(text string) string {
	m.pending += text
	cut, fence := -1, false
	for i := 0; i < len(m.pending); {
		j := strings.IndexByte(m.pending[i:], '\n')
		if j < 0 {
			break
		}
		line := strings.TrimSpace(m.pending[i : i+j])
		i += j + 1
		switch {
		case strings.HasPrefix(line, "```") || strings.HasPrefix(line, "~~~"):
			fence = !fence
		case line == "" && !fence:
			cut = i
		}
	}
	if cut < 0 {
		return ""
	}
	block := m.pending[:cut]
	m.pending = m.pending[cut:]
	return m.render(block)
}

// flush returns the rest of the answer, rendered; the next write starts
// another answer.
func (m *markdown) flush() string {
	block := m.pending
	m.pending = ""
	out := m.render(block)
	m.shown = false
	return out
}

func (m *markdown) render(block string) string {
	out := m.r.render(block, m.width)
	if out == "" {
		return ""
	}
	if m.shown {
		out = "\n" + out
	}
	m.shown = true
	return out
}

// setWidth makes the next blocks wrap at width columns.
func (m *markdown) setWidth(width int) {
	m.width = width
}

// newMarkdown renders for a terminal width columns wide, in colour unless
// color is false.
func newMarkdown(width int, color bool) *markdown {
	return &markdown{r: newMDRenderer(color), width: width}
}
