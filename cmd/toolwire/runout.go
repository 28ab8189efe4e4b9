package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/toolwire/toolwire/agent"
)

// readTask returns run's task: the argument, or stdin when it is "-".
func readTask(arg string, stdin io.Reader) (string, error) {
	if arg != "-" {
		return arg, nil
	}
	b, err := io.ReadAll(stdin)
	if err != nil {
		return "", fmt.Errorf("reading the task from stdin: %w", err)
	}
	if len(b) == 0 {
		return "", fmt.Errorf("the task read from stdin is empty: pipe it in (echo \"...\" | toolwire run -) or give it as the argument")
	}
	return string(b), nil
}

// runSteps follows what a run is doing, for the summary and for the
// error event of run --json: it counts the model requests sent (through
// its transport, retries included) and those that failed, and knows the
// step under way.
type runSteps struct {
	next http.RoundTripper

	mu      sync.Mutex
	sent    int    // model requests sent
	failed  int    // of which got no answer or an error status
	answers int    // model answers read (usage events)
	step    string // "model", "tool"
	tool    string // the tool, in step "tool"
}

// RoundTrip counts a model request and marks the step.
func (s *runSteps) RoundTrip(req *http.Request) (*http.Response, error) {
	s.mu.Lock()
	s.sent++
	s.step, s.tool = "model", ""
	s.mu.Unlock()
	resp, err := s.next.RoundTrip(req)
	if err != nil || resp.StatusCode >= 400 {
		s.mu.Lock()
		s.failed++
		s.mu.Unlock()
	}
	return resp, err
}

// event follows the run's events.
func (s *runSteps) event(e agent.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch e.Type {
	case agent.EventUsage:
		s.answers++
	case agent.EventToolStart:
		s.step, s.tool = "tool", e.Tool
	}
}

// requests describes the model requests for the summary: "3 model
// requests", or "5 model requests (5 failed)" when some failed.
func (s *runSteps) requests() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := plural(s.sent, "model request")
	if s.failed > 0 {
		out += fmt.Sprintf(" (%d failed)", s.failed)
	}
	return out
}

// recording marks the step of writing the recorded workflow.
func (s *runSteps) recording() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.step, s.tool = "record", ""
}

// errorEvent is the last line of run --json when the run fails.
type errorEvent struct {
	Type    string `json:"type"` // "error"
	Message string `json:"message"`
	// Step is what failed: "setup" (the model, the tools), "model" (a
	// model request), "tool" (a tool call, Tool), or "record".
	Step string `json:"step"`
	// Turn is the model request under way (from 1), for model and tool.
	Turn int    `json:"turn,omitempty"`
	Tool string `json:"tool,omitempty"`
}

// errorEvent describes err as the step under way.
func (s *runSteps) errorEvent(err error) errorEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := errorEvent{Type: "error", Message: err.Error(), Step: s.step, Tool: s.tool}
	switch s.step {
	case "model":
		e.Turn = s.answers + 1
	case "tool":
		e.Turn = s.answers
	case "record":
	default:
		e.Step = "setup"
	}
	return e
}

// writeErrorEvent writes e as one JSON line.
func writeErrorEvent(w io.Writer, e errorEvent) {
	_ = json.NewEncoder(w).Encode(e)
}

// plural is "1 thing" or "n things".
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}
