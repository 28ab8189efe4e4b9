package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// modelEnv points the openai provider at a test server.
func modelEnv(url string) []string {
	return []string{"OPENAI_API_KEY=test-key", "OPENAI_BASE_URL=" + url + "/v1", "TOOLWIRE_MODEL=", "TOOLWIRE_CONFIG="}
}

// narrated is a run whose model says something before its tool call,
// then answers.
var narrated = []string{
	`{"choices":[{"index":0,"delta":{"content":"Let me compute that."}}]}
{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"calculate","arguments":"{\"expression\":\"6*7\"}"}}]}}]}
{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
	`{"choices":[{"index":0,"delta":{"content":"It is 42."}}]}
{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
}

// TestRunOutput: run - reads the task from stdin; run -q prints the
// answer alone, on a line of its own; without -q, the narration ends its
// line before the tool call is shown.
func TestRunOutput(t *testing.T) {
	m := newScriptedModel(t, narrated...)
	r := runEnv(t, modelEnv(m.URL), "What is 6*7?\n", "run", "-q", "--toolsets=calc", "-m", "openai:test-model", "-")
	if r.code != 0 || r.stdout != "It is 42.\n" || r.stderr != "" {
		t.Errorf("run -q -: exit %d\nstdout %q (want the answer alone)\nstderr %q", r.code, r.stdout, r.stderr)
	}
	if msgs := m.messages(0); len(msgs) == 0 || msgs[len(msgs)-1]["content"] != "What is 6*7?\n" {
		t.Errorf("the model was asked %v; want the task read from stdin", msgs)
	}

	m = newScriptedModel(t, narrated...)
	r = runEnv(t, modelEnv(m.URL), "", "run", "--toolsets=calc", "-m", "openai:test-model", "What is 6*7?")
	if r.code != 0 || r.stdout != "Let me compute that.\nIt is 42.\n" {
		t.Errorf("run: exit %d\nstdout %q\nstderr %s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "toolwire: 2 model requests, 1 tool call; tokens") {
		t.Errorf("run's summary:\n%s", r.stderr)
	}

	r = runEnv(t, modelEnv(m.URL), "", "run", "--toolsets=calc", "-m", "openai:test-model", "-")
	if r.code != 1 || !strings.Contains(r.stderr, "the task read from stdin is empty") {
		t.Errorf("run - with nothing on stdin: exit %d\nstderr %s", r.code, r.stderr)
	}
}

// lastEvent decodes the last line of run --json.
func lastEvent(t *testing.T, stdout string) errorEvent {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	var e errorEvent
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &e); err != nil {
		t.Fatalf("the last line of run --json is not JSON: %v\n%s", err, stdout)
	}
	return e
}

// TestRunFailures: a model that fails every attempt, a stream cut
// mid-answer, a bad flag: the summary counts the failed requests, the
// error names the provider, the URL and how much came, and run --json
// ends with an error event naming the step.
func TestRunFailures(t *testing.T) {
	limited := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Retry-After-Ms", "1")
		http.Error(w, `{"error":{"message":"Rate limit reached","type":"tokens","code":"rate_limit_exceeded"}}`, http.StatusTooManyRequests)
	}))
	t.Cleanup(limited.Close)
	const part = `data: {"choices":[{"index":0,"delta":{"content":"The answer is"}}]}` + "\n\n"
	cut := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, part)
		w.(http.Flusher).Flush()
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close() // mid-answer
		}
	}))
	t.Cleanup(cut.Close)

	r := runEnv(t, modelEnv(limited.URL), "", "run", "--toolsets=calc", "-m", "openai:test-model", "hi")
	if r.code != 1 || !strings.Contains(r.stderr, "toolwire: 5 model requests (5 failed), 0 tool calls") || !strings.Contains(r.stderr, "Rate limit reached") {
		t.Errorf("a model that always fails: exit %d\nstderr %s", r.code, r.stderr)
	}
	r = runEnv(t, modelEnv(limited.URL), "", "run", "--json", "--toolsets=calc", "-m", "openai:test-model", "hi")
	if e := lastEvent(t, r.stdout); r.code != 1 || e.Type != "error" || e.Step != "model" || e.Turn != 1 || !strings.Contains(e.Message, "Rate limit reached") {
		t.Errorf("run --json, a model that always fails: exit %d, last event %+v", r.code, e)
	}

	r = runEnv(t, modelEnv(cut.URL), "", "run", "--toolsets=calc", "-m", "openai:test-model", "hi")
	want := fmt.Sprintf("openai: the answer from %s/v1/chat/completions broke off after %d bytes", cut.URL, len(part))
	if r.code != 1 || !strings.Contains(r.stderr, want) || r.stdout != "The answer is\n" {
		t.Errorf("a stream cut mid-answer: exit %d\nstdout %q\nstderr %s\nwant %q", r.code, r.stdout, r.stderr, want)
	}
	r = runEnv(t, modelEnv(cut.URL), "", "run", "--json", "--toolsets=calc", "-m", "openai:test-model", "hi")
	if e := lastEvent(t, r.stdout); r.code != 1 || e.Step != "model" || !strings.Contains(e.Message, want) {
		t.Errorf("run --json, a stream cut: exit %d, last event %+v", r.code, e)
	}

	r = runEnv(t, modelEnv(cut.URL), "", "run", "--json", "--toolsets=nope", "-m", "openai:test-model", "hi")
	if e := lastEvent(t, r.stdout); r.code != 2 || e.Type != "error" || e.Step != "setup" || !strings.Contains(e.Message, "nope") {
		t.Errorf("run --json, a bad flag: exit %d, last event %+v", r.code, e)
	}
}

// TestRunInterrupted: Ctrl-C (SIGINT) while the model thinks ends run
// with status 130 (128+SIGINT), as it does call.
func TestRunInterrupted(t *testing.T) {
	asked := make(chan struct{}, 1)
	stuck := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		asked <- struct{}{}
		<-r.Context().Done()
	}))
	t.Cleanup(stuck.Close)
	cmd := exec.Command(build(t), "run", "--toolsets=calc", "-m", "openai:test-model", "hi")
	cmd.Env = append(cmd.Environ(), modelEnv(stuck.URL)...)
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill() }()
	select {
	case <-asked:
	case <-time.After(20 * time.Second):
		t.Fatal("the model was never asked")
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("run did not end after SIGINT")
	}
	if code := cmd.ProcessState.ExitCode(); code != 130 {
		t.Errorf("exit %d after SIGINT, want 130\nstderr %s", code, stderr.String())
	}
}
