package main

import (
	"bytes"
	"context"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/toolwire/toolwire/tool"
)

type noteIn struct {
	Text string `json:"text" description:"What to write down"`
}

// noteTool writes a note: a tool that may change things (it has no
// annotations), slow enough for the spinner to show.
func noteTool() tool.Tool {
	return tool.Must(tool.New("write_note", "Writes a note down.", func(_ context.Context, in noteIn) (string, error) {
		time.Sleep(400 * time.Millisecond)
		return "saved: " + in.Text, nil
	}))
}

// screen collects what a program writes to its terminal.
type screen struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *screen) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

// String is what the screen got, without terminal escape sequences.
func (s *screen) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return ansi.ReplaceAllString(s.buf.String(), "")
}

var ansi = regexp.MustCompile(`\x1b\[[0-9;]*[A-Za-z]`)

// waitFor waits until the screen shows want, at most 20 s.
func (s *screen) waitFor(t *testing.T, want string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(s.String(), want); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the terminal never showed %q:\n%q", want, s.String())
		}
	}
}

// TestChatOnTerminal: toolwire chat on a terminal streams the answer,
// shows a tool call with a spinner and a result line, asks before a tool
// that may change things (answered with the keyboard), and leaves on
// /exit.
func TestChatOnTerminal(t *testing.T) {
	m := newScriptedModel(t,
		`{"choices":[{"index":0,"delta":{"role":"assistant","content":"Writing it "}}]}
{"choices":[{"index":0,"delta":{"content":"down."}}]}
{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"notes__write_note","arguments":"{\"text\":\"buy milk\"}"}}]}}]}
{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
		`{"choices":[{"index":0,"delta":{"content":"Noted: buy milk."}}]}
{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":50,"completion_tokens":5}}`,
	)
	cfg := writeConfig(t, map[string]string{"notes": testServerJSON(t, "notes", nil, "")})
	cmd := exec.Command(build(t), "chat", "--config", cfg, "--toolsets=", "-m", "openai:test-model")
	cmd.Env = append(cmd.Environ(), "OPENAI_API_KEY=test-key", "OPENAI_BASE_URL="+m.URL+"/v1", "NO_COLOR=")
	tty, err := pty.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	var scr screen
	go func() { _, _ = tty.WriteTo(&scr) }()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	scr.waitFor(t, "toolwire chat with openai:test-model")
	tty.WriteString("please note: buy milk\r")
	scr.waitFor(t, "Writing it down.")
	scr.waitFor(t, "Allow notes__write_note")
	tty.WriteString("y\r")
	scr.waitFor(t, "✓ notes__write_note")
	scr.waitFor(t, "Noted: buy milk.")
	tty.WriteString("/exit\r")
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("chat ended with %v:\n%s", err, scr.String())
		}
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("chat did not end on /exit:\n%q", scr.String())
	}
	out := scr.String()
	if !strings.ContainsAny(out, spinner) {
		t.Errorf("no spinner while the tool ran:\n%q", out)
	}
	if !strings.Contains(out, `✓ notes__write_note {"text":"buy milk"}`) || !strings.Contains(out, "15 bytes") {
		t.Errorf("the tool line should show the arguments and the result's size:\n%q", out)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.requests) != 2 {
		t.Errorf("%d model requests, want 2", len(m.requests))
	}
}

// TestChatPlain: piped, chat reads lines and writes plain text; a tool
// that may change things is refused when the user says no.
func TestChatPlain(t *testing.T) {
	m := newScriptedModel(t,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"notes__write_note","arguments":"{\"text\":\"x\"}"}}]}}]}
{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
		`{"choices":[{"index":0,"delta":{"content":"Not written."}}]}
{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
	)
	cfg := writeConfig(t, map[string]string{"notes": testServerJSON(t, "notes", nil, "")})
	r := runEnv(t, []string{"OPENAI_API_KEY=test-key", "OPENAI_BASE_URL=" + m.URL + "/v1"}, "note x\nn\n/tools\n/nope\n",
		"chat", "--config", cfg, "--toolsets=", "-m", "openai:test-model")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"Allow notes__write_note", "the user declined", "Not written.", "notes__write_note  Writes a note down.", "unknown command /nope"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "\x1b[") {
		t.Errorf("escape sequences in plain output:\n%q", r.stdout)
	}
}
