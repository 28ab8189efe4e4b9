package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/creack/pty"

	"github.com/toolwire/toolwire/tool"
)

type noteIn struct {
	Text string `json:"text" description:"What to write down"`
}

// noteTool writes a note: a tool that may change things (it has no
// annotations), slow enough for the spinner to show; with
// $TOOLWIRE_TEST_LOG set, its server says so in two lines on stderr.
func noteTool() tool.Tool {
	return tool.Must(tool.New("write_note", "Writes a note down.", func(_ context.Context, in noteIn) (string, error) {
		if os.Getenv("TOOLWIRE_TEST_LOG") != "" {
			fmt.Fprintf(os.Stderr, "notes: writing %q\nnotes: at %s\n", in.Text, time.Now().Format(time.TimeOnly))
		}
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

// chatOnTerminal is toolwire chat started on a terminal of cols columns,
// with the scripted model m and more arguments.
type chatOnTerminal struct {
	tty  *os.File
	scr  *screen
	cmd  *exec.Cmd
	done chan error
}

func startChat(t *testing.T, modelURL string, cols uint16, args ...string) *chatOnTerminal {
	t.Helper()
	return startChatEnv(t, modelURL, cols, nil, args...)
}

// startChatEnv is startChat with more environment (which wins over the
// test's own).
func startChatEnv(t *testing.T, modelURL string, cols uint16, env []string, args ...string) *chatOnTerminal {
	t.Helper()
	cmd := exec.Command(build(t), append([]string{"chat", "--toolsets=", "-m", "openai:test-model"}, args...)...)
	cmd.Env = append(append(cmd.Environ(), "OPENAI_API_KEY=test-key", "OPENAI_BASE_URL="+modelURL+"/v1", "NO_COLOR="), env...)
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: cols})
	if err != nil {
		t.Fatal(err)
	}
	c := &chatOnTerminal{tty: tty, scr: &screen{}, cmd: cmd, done: make(chan error, 1)}
	go func() { _, _ = tty.WriteTo(c.scr) }()
	go func() { c.done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		tty.Close()
	})
	c.scr.waitFor(t, "toolwire chat with openai:test-model")
	return c
}

// typeKeys types keys on the terminal.
func (c *chatOnTerminal) typeKeys(t *testing.T, keys string) {
	t.Helper()
	if _, err := c.tty.WriteString(keys); err != nil {
		t.Fatal(err)
	}
}

// exit waits for chat to end, and fails unless its status is 0.
func (c *chatOnTerminal) exit(t *testing.T) {
	t.Helper()
	select {
	case err := <-c.done:
		if err != nil {
			t.Fatalf("chat ended with %v:\n%s", err, c.scr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("chat did not end:\n%q", c.scr.String())
	}
}

// TestChatOnTerminal: toolwire chat on a terminal streams the answer,
// shows a tool call with a spinner and a result line, asks before a tool
// that may change things (answered with the keyboard; the time the user
// took is not the tool's), counts in words ("1 tool call"), and leaves on
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
	c := startChat(t, m.URL, 120, "--config", cfg)
	c.typeKeys(t, "please note: buy milk\r")
	c.scr.waitFor(t, "Writing it down.")
	c.scr.waitFor(t, "Allow notes__write_note")
	time.Sleep(1200 * time.Millisecond) // the user thinks
	c.typeKeys(t, "y\r")
	c.scr.waitFor(t, "✓ notes__write_note")
	c.scr.waitFor(t, "Noted: buy milk.")
	c.scr.waitFor(t, "(1 tool call; tokens 50 in, 5 out)")
	c.typeKeys(t, "/exit\r")
	c.exit(t)
	out := c.scr.String()
	if !strings.ContainsAny(out, spinner) {
		t.Errorf("no spinner while the tool ran:\n%q", out)
	}
	took := regexp.MustCompile(`✓ notes__write_note \{"text":"buy milk"\}  ([0-9.]+m?s), 15 bytes`).FindStringSubmatch(out)
	if took == nil {
		t.Fatalf("the tool line should show the arguments, the time and the result's size:\n%q", out)
	}
	if d, err := time.ParseDuration(took[1]); err != nil || d < 400*time.Millisecond || d > time.Second {
		t.Errorf("the tool's time is %s: it slept 400 ms, and the 1.2 s the user took to approve it are not its own", took[1])
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
		`{"choices":[{"index":0,"delta":{"reasoning_content":"The user said no."}}]}
{"choices":[{"index":0,"delta":{"content":"Not written."}}]}
{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
	)
	cfg := writeConfig(t, map[string]string{"notes": testServerJSON(t, "notes", nil, "")})
	r := runEnv(t, []string{"OPENAI_API_KEY=test-key", "OPENAI_BASE_URL=" + m.URL + "/v1"}, "note x\nn\n/tools\n/nope\n",
		"chat", "--config", cfg, "--toolsets=", "-m", "openai:test-model")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"Allow notes__write_note", "the user declined", "The user said no.\nNot written.", "(1 tool call; tokens", "notes__write_note    Writes a note down.", "unknown command /nope"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	// /tools: the descriptions in a column.
	column := map[int]bool{}
	toolLine := regexp.MustCompile(`^  (\w+)( +)\S`)
	for _, line := range strings.Split(r.stdout, "\n") {
		if m := toolLine.FindStringSubmatch(strings.TrimPrefix(line, "> ")); m != nil {
			column[len(m[1])+len(m[2])] = true
		}
	}
	if len(column) != 1 {
		t.Errorf("/tools does not align the descriptions (they start at columns %v):\n%s", column, r.stdout)
	}
	if strings.Contains(r.stdout, "\x1b[") {
		t.Errorf("escape sequences in plain output:\n%q", r.stdout)
	}
}

type waitIn struct{}

// waitTool waits until its call is cancelled, then writes why to the file
// $TOOLWIRE_TEST_CANCELLED names: the server's side of a cancellation.
func waitTool() tool.Tool {
	return tool.Must(tool.New("wait", "Waits until cancelled.", func(ctx context.Context, _ waitIn) (string, error) {
		<-ctx.Done()
		if p := os.Getenv("TOOLWIRE_TEST_CANCELLED"); p != "" {
			_ = os.WriteFile(p, []byte("cancelled: "+context.Cause(ctx).Error()), 0o644)
		}
		return "", ctx.Err()
	}))
}

// raw is what the screen got, escape sequences and all.
func (s *screen) raw() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// frontModel stands before the scripted model m: request n (from 0) goes
// to answer, which handles it itself when it returns true, else to m.
func frontModel(t *testing.T, m *scriptedModel, answer func(n int, w http.ResponseWriter, r *http.Request) bool) *httptest.Server {
	t.Helper()
	to, err := url.Parse(m.URL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(to)
	var mu sync.Mutex
	n := 0
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		i := n
		n++
		mu.Unlock()
		if !answer(i, w, r) {
			proxy.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

// userTexts returns the texts of the user's messages of request n.
func (s *scriptedModel) userTexts(n int) []string {
	var out []string
	for _, msg := range s.messages(n) {
		if msg["role"] == "user" {
			out = append(out, fmt.Sprint(msg["content"]))
		}
	}
	return out
}

// TestChatInterruptModel: Ctrl-C while the model answers stops the
// request (a spinner showed the wait), and chat goes on at the prompt
// with the conversation kept: the next request has the interrupted
// question, without the unfinished answer.
func TestChatInterruptModel(t *testing.T) {
	m := newScriptedModel(t, `{"choices":[{"index":0,"delta":{"content":"The second answer."}}]}
{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`)
	stopped := make(chan struct{})
	front := frontModel(t, m, func(n int, w http.ResponseWriter, r *http.Request) bool {
		if n > 0 {
			return false
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, `data: {"choices":[{"index":0,"delta":{"role":"assistant","content":"Half an ans"}}]}`+"\n\n")
		w.(http.Flusher).Flush()
		select { // a slow model: until the request is cancelled
		case <-r.Context().Done():
			close(stopped)
		case <-time.After(20 * time.Second):
		}
		return true
	})
	c := startChat(t, front.URL, 120)
	c.typeKeys(t, "first question\r")
	c.scr.waitFor(t, "waiting for openai:test-model")
	c.typeKeys(t, "\x03")
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatalf("the model's request was not cancelled:\n%s", c.scr.String())
	}
	c.scr.waitFor(t, "Interrupted: the conversation so far is kept.")
	c.typeKeys(t, "second question\r")
	c.scr.waitFor(t, "The second answer.")
	c.typeKeys(t, "/exit\r")
	c.exit(t)
	if got, want := m.userTexts(0), []string{"first question", "second question"}; !slices.Equal(got, want) {
		t.Errorf("the request after the interruption has the user's messages %q, want %q", got, want)
	}
	for _, msg := range m.messages(0) {
		if msg["role"] == "assistant" {
			t.Errorf("the unfinished answer was kept: %v", msg)
		}
	}
}

// TestChatInterruptTool: Ctrl-C while an MCP server's tool runs cancels
// the call on the server (notifications/cancelled reaches the tool), and
// the conversation goes on with the call and its result kept, paired.
func TestChatInterruptTool(t *testing.T) {
	m := newScriptedModel(t,
		`{"choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"notes__wait","arguments":"{}"}}]}}]}
{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
		`{"choices":[{"index":0,"delta":{"content":"Fine, no waiting."}}]}
{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`)
	marker := filepath.Join(t.TempDir(), "cancelled")
	cfg := writeConfig(t, map[string]string{"notes": testServerJSON(t, "notes", map[string]string{"TOOLWIRE_TEST_CANCELLED": marker}, "")})
	c := startChat(t, m.URL, 120, "--config", cfg, "--yes")
	c.typeKeys(t, "wait for me\r")
	c.scr.waitFor(t, "notes__wait {} (")
	c.typeKeys(t, "\x03")
	c.scr.waitFor(t, "Interrupted: the conversation so far is kept.")
	var seen []byte
	for deadline := time.Now().Add(10 * time.Second); seen == nil && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		seen, _ = os.ReadFile(marker)
	}
	if want := "cancelled: "; !strings.HasPrefix(string(seen), want) {
		t.Fatalf("the server's tool was not cancelled (it wrote %q)", seen)
	}
	c.typeKeys(t, "never mind\r")
	c.scr.waitFor(t, "Fine, no waiting.")
	c.typeKeys(t, "/exit\r")
	c.exit(t)
	msgs := m.messages(1)
	var roles []string
	for _, msg := range msgs {
		roles = append(roles, fmt.Sprint(msg["role"]))
	}
	if want := []string{"user", "assistant", "tool", "user"}; !slices.Equal(roles, want) {
		t.Fatalf("the request after the interruption has messages %q, want %q: %v", roles, want, msgs)
	}
	if msgs[2]["tool_call_id"] != "call_1" || !strings.Contains(fmt.Sprint(msgs[2]["content"]), "interrupted") {
		t.Errorf("the cancelled call's result should pair with call_1 and say it was interrupted: %v", msgs[2])
	}
}

// TestChatCtrlCAtPrompt: at the prompt, Ctrl-C clears the line typed
// (nothing is sent); on an empty line it says how to leave, and a second
// one leaves, with status 0 (a line cleared in between does not count).
func TestChatCtrlCAtPrompt(t *testing.T) {
	m := newScriptedModel(t)
	c := startChat(t, m.URL, 120)
	c.typeKeys(t, "half a thought")
	c.scr.waitFor(t, "half a thought")
	c.typeKeys(t, "\x03")
	c.typeKeys(t, "\r") // an empty line now: sends nothing
	c.typeKeys(t, "more\x03")
	c.typeKeys(t, "\x03") // on an empty line
	c.scr.waitFor(t, "(Ctrl-C again, Ctrl-D or /exit leaves)")
	select {
	case err := <-c.done:
		t.Fatalf("chat left on the first Ctrl-C on an empty line (%v)", err)
	case <-time.After(300 * time.Millisecond):
	}
	c.typeKeys(t, "\x03")
	c.exit(t)
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.requests) != 0 {
		t.Errorf("the cleared line was sent: %v", m.requests)
	}
}

// TestChatMarkdownAtWidth: on a terminal 120 columns wide, the answer's
// markdown is rendered (no # or ** left) and wrapped at 120 columns
// without breaking words, and the line typed is not wrapped at 80.
func TestChatMarkdownAtWidth(t *testing.T) {
	answer, _ := json.Marshal("# Title\n\nSome **bold** words.\n\n" + manyWords + "\n")
	m := newScriptedModel(t, `{"choices":[{"index":0,"delta":{"content":`+string(answer)+`}}]}
{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`)
	c := startChat(t, m.URL, 120)
	typed := strings.Repeat("x", 100)
	c.typeKeys(t, typed)
	c.scr.waitFor(t, typed)
	if !strings.Contains(c.scr.raw(), typed) {
		t.Errorf("the line typed was wrapped before 120 columns:\n%q", c.scr.raw())
	}
	c.typeKeys(t, "\r")
	c.scr.waitFor(t, "word39")
	c.typeKeys(t, "/exit\r")
	c.exit(t)
	out := c.scr.String()
	for _, raw := range []string{"# Title", "**bold**"} {
		if strings.Contains(out, raw) {
			t.Errorf("the markdown %q was not rendered:\n%s", raw, out)
		}
	}
	if !strings.Contains(out, "Title") || !strings.Contains(out, "bold") {
		t.Errorf("the rendered answer lacks its words:\n%s", out)
	}
	checkWrapped(t, out, 120, 80)
}

// manyWords is a paragraph of 40 words (word00 to word39) on one line.
var manyWords = func() string {
	var words []string
	for i := range 40 {
		words = append(words, fmt.Sprintf("word%02d", i))
	}
	return strings.Join(words, " ")
}()

// checkWrapped checks that the lines of manyWords on the screen out are
// at most width columns, one of them wider than over, and that no word
// was broken.
func checkWrapped(t *testing.T, out string, width, over int) {
	t.Helper()
	var wide bool
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimRight(line, "\r")
		line = line[strings.LastIndex(line, "\r")+1:] // what a CR left shown
		if !strings.Contains(line, "word0") {
			continue
		}
		if n := utf8.RuneCountInString(line); n > width {
			t.Errorf("a line of %d columns on a terminal of %d: %q", n, width, line)
		}
		wide = wide || utf8.RuneCountInString(line) > over
		for _, f := range strings.Fields(line) {
			if !regexp.MustCompile(`^word\d\d$`).MatchString(f) {
				t.Errorf("a word broken by the wrapping: %q in %q", f, line)
			}
		}
	}
	if !wide {
		t.Errorf("the answer was wrapped at %d columns or less:\n%s", over, out)
	}
}

// TestChatFollowsResize: a terminal made wider while chat runs gets wider
// answers.
func TestChatFollowsResize(t *testing.T) {
	answer, _ := json.Marshal(manyWords)
	m := newScriptedModel(t, `{"choices":[{"index":0,"delta":{"content":`+string(answer)+`}}]}
{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`)
	c := startChat(t, m.URL, 60)
	if err := pty.Setsize(c.tty, &pty.Winsize{Rows: 40, Cols: 120}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // for SIGWINCH to arrive
	c.typeKeys(t, "hello\r")
	c.scr.waitFor(t, "word39")
	c.typeKeys(t, "/exit\r")
	c.exit(t)
	checkWrapped(t, c.scr.String(), 120, 60)
}

// TestChatPromptAtColumn0: on a raw terminal every line ends with CR LF,
// so that after /save's message (on stderr) the prompt starts at column 0.
func TestChatPromptAtColumn0(t *testing.T) {
	m := newScriptedModel(t,
		`{"choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"notes__write_note","arguments":"{\"text\":\"x\"}"}}]}}]}
{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
		`{"choices":[{"index":0,"delta":{"content":"Done."}}]}
{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`)
	cfg := writeConfig(t, map[string]string{"notes": testServerJSON(t, "notes", nil, "")})
	c := startChat(t, m.URL, 120, "--config", cfg, "--yes")
	c.typeKeys(t, "note x\r")
	c.scr.waitFor(t, "Done.")
	wf := filepath.Join(t.TempDir(), "note.yaml")
	c.typeKeys(t, "/save "+wf+"\r")
	c.scr.waitFor(t, "toolwire: wrote "+wf)
	c.typeKeys(t, "/exit\r")
	c.exit(t)
	raw := c.scr.raw()
	if !strings.Contains(raw, "(toolwire workflow run "+wf+")\r\n> ") {
		t.Errorf("the prompt after /save does not start at column 0:\n%q", raw)
	}
	if i := regexp.MustCompile(`[^\r]\n`).FindStringIndex(raw); i != nil {
		t.Errorf("a line ends without CR at %d: %q", i[0], raw[max(0, i[0]-80):i[1]])
	}
}

// TestChatVerboseServerStderr: with -v, what a stdio server writes on its
// stderr while the terminal is raw goes through chat's line editor, so
// that its lines end with CR LF like chat's own.
func TestChatVerboseServerStderr(t *testing.T) {
	m := newScriptedModel(t,
		`{"choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"notes__write_note","arguments":"{\"text\":\"x\"}"}}]}}]}
{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
		`{"choices":[{"index":0,"delta":{"content":"Done."}}]}
{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`)
	cfg := writeConfig(t, map[string]string{"notes": testServerJSON(t, "notes", map[string]string{"TOOLWIRE_TEST_LOG": "1"}, "")})
	c := startChat(t, m.URL, 120, "--config", cfg, "--yes", "-v")
	c.typeKeys(t, "note x\r")
	c.scr.waitFor(t, "Done.")
	c.scr.waitFor(t, "notes: writing")
	c.typeKeys(t, "/exit\r")
	c.exit(t)
	raw := c.scr.raw()
	if !strings.Contains(raw, "\r\x1b[Knotes: writing") {
		t.Errorf("the server's line does not start a line of its own:\n%q", raw)
	}
	if i := regexp.MustCompile(`[^\r]\n`).FindStringIndex(raw); i != nil {
		t.Errorf("a line ends without CR at %d: %q", i[0], raw[max(0, i[0]-80):i[1]])
	}
}

// TestChatShowsRetries: a 503 from the model is retried, and chat says so.
func TestChatShowsRetries(t *testing.T) {
	m := newScriptedModel(t, `{"choices":[{"index":0,"delta":{"content":"At last."}}]}
{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`)
	front := frontModel(t, m, func(n int, w http.ResponseWriter, _ *http.Request) bool {
		if n > 0 {
			return false
		}
		http.Error(w, `{"error":{"message":"upstream overloaded"}}`, http.StatusServiceUnavailable)
		return true
	})
	c := startChat(t, front.URL, 120)
	c.typeKeys(t, "hello\r")
	c.scr.waitFor(t, "retrying after 503 from openai (attempt 2/5)…")
	c.scr.waitFor(t, "At last.")
	c.typeKeys(t, "/exit\r")
	c.exit(t)
}

// TestChatInterruptApproval: Ctrl-C at the question whether a tool may
// run stops the turn too; the call is kept with a result that says so.
func TestChatInterruptApproval(t *testing.T) {
	m := newScriptedModel(t,
		`{"choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"notes__write_note","arguments":"{\"text\":\"x\"}"}}]}}]}
{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
		`{"choices":[{"index":0,"delta":{"content":"As you like."}}]}
{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`)
	cfg := writeConfig(t, map[string]string{"notes": testServerJSON(t, "notes", nil, "")})
	c := startChat(t, m.URL, 120, "--config", cfg)
	c.typeKeys(t, "note x\r")
	c.scr.waitFor(t, "Allow notes__write_note")
	c.typeKeys(t, "\x03")
	c.scr.waitFor(t, "Interrupted: the conversation so far is kept.")
	c.typeKeys(t, "forget it\r")
	c.scr.waitFor(t, "As you like.")
	c.typeKeys(t, "/exit\r")
	c.exit(t)
	msgs := m.messages(1)
	if len(msgs) != 4 || msgs[2]["tool_call_id"] != "call_1" || !strings.Contains(fmt.Sprint(msgs[2]["content"]), "interrupted") || msgs[3]["content"] != "forget it" {
		t.Errorf("the request after the interruption should have the call, its result saying it was interrupted, and the new question: %v", msgs)
	}
}
