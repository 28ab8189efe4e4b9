package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/toolwire/toolwire/host"
	"github.com/toolwire/toolwire/tool"
)

// isTerminal reports whether v is a file open on a terminal.
func isTerminal(v any) bool {
	f, ok := v.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// progress shows, on a terminal, a line per server with its state and the
// time it has taken, and a line per task (a call) while it runs, redrawn
// as they change. It is cleared when the command ends. A nil *progress
// shows nothing.
type progress struct {
	w        io.Writer
	stop     chan struct{}
	done     chan struct{}
	stopOnce sync.Once

	mu    sync.Mutex
	lines []*progressLine
	drawn int // lines on screen
	frame int
}

type progressLine struct {
	label   string
	state   string
	start   time.Time
	elapsed time.Duration // set when finished
	ended   bool
	failed  bool
}

// progressTick is how often the display is redrawn.
const progressTick = 100 * time.Millisecond

// spinner holds the frames of the mark of a line in progress.
const spinner = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"

func newProgress(w io.Writer) *progress {
	p := &progress{w: w, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		t := time.NewTicker(progressTick)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
				p.mu.Lock()
				p.frame++
				p.redraw()
				p.mu.Unlock()
			}
		}
	}()
	return p
}

// observe takes a host event.
func (p *progress) observe(e host.Event) {
	switch e.State {
	case host.Connecting:
		p.begin("server "+e.Server, "connecting")
	case host.Ready:
		p.end("server "+e.Server, "ready", e.Elapsed, false)
	case host.Failed:
		p.end("server "+e.Server, "failed", e.Elapsed, true)
	}
}

// task shows a line while something runs; the returned func ends it.
func (p *progress) task(label, state string) func() {
	if p == nil {
		return func() {}
	}
	start := time.Now()
	p.begin(label, state)
	return func() { p.end(label, "done", time.Since(start), false) }
}

func (p *progress) line(label string) *progressLine {
	for _, l := range p.lines {
		if l.label == label {
			return l
		}
	}
	l := &progressLine{label: label}
	p.lines = append(p.lines, l)
	return l
}

func (p *progress) begin(label, state string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	l := p.line(label)
	*l = progressLine{label: label, state: state, start: time.Now()}
	p.redraw()
}

func (p *progress) end(label, state string, elapsed time.Duration, failed bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	l := p.line(label)
	l.state, l.elapsed, l.ended, l.failed = state, elapsed, true, failed
	p.redraw()
}

// redraw rewrites the display in place. The caller holds p.mu.
func (p *progress) redraw() {
	var b strings.Builder
	if p.drawn > 0 {
		fmt.Fprintf(&b, "\x1b[%dF", p.drawn) // to the start of the first line
	}
	width := 0
	for _, l := range p.lines {
		width = max(width, len(l.label))
	}
	for _, l := range p.lines {
		frames := []rune(spinner)
		mark, took := string(frames[p.frame%len(frames)]), time.Since(l.start)
		if l.ended {
			mark, took = "✓", l.elapsed
			if l.failed {
				mark = "✗"
			}
		}
		fmt.Fprintf(&b, "\x1b[2K%s %-*s  %-10s %5.1fs\n", mark, width, l.label, l.state, took.Seconds())
	}
	p.drawn = len(p.lines)
	_, _ = io.WriteString(p.w, b.String())
}

// close stops the display and clears it, so that what the command prints
// next stands alone. Closing again does nothing.
func (p *progress) close() {
	if p == nil {
		return
	}
	p.stopOnce.Do(func() { close(p.stop) })
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn > 0 {
		fmt.Fprintf(p.w, "\x1b[%dF\x1b[J", p.drawn)
		p.drawn = 0
	}
}

// callClient is the tool.Client of a call the command makes: the progress
// the tool reports (a task's status, for a tool run as an MCP task) shows
// on the call's line; it cannot ask the user or a model.
type callClient struct {
	p     *progress
	label string
}

func (c callClient) Progress(_ context.Context, _, _ float64, message string) error {
	if c.p != nil && message != "" {
		c.p.mu.Lock()
		c.p.line(c.label).state = message
		c.p.redraw()
		c.p.mu.Unlock()
	}
	return nil
}

func (callClient) Log(context.Context, tool.LogLevel, string, any) error { return nil }

func (callClient) Elicit(context.Context, *tool.Elicitation) (*tool.ElicitResult, error) {
	return nil, fmt.Errorf("toolwire call cannot ask for input: %w; use toolwire chat or run", errors.ErrUnsupported)
}

func (callClient) Sample(context.Context, *tool.Sampling) (*tool.SamplingResult, error) {
	return nil, fmt.Errorf("toolwire call has no model to sample: %w; use toolwire chat or run", errors.ErrUnsupported)
}
