package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/testpeers"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/model"
	"github.com/toolwire/toolwire/tool"
)

type tripIn struct {
	Trip string `json:"trip" description:"The trip to plan"`
}

// formTool asks the user for a form whose required field has a default,
// and returns what it got.
func formTool() tool.Tool {
	readOnly := true
	t := tool.Must(tool.New("plan_trip", "Plans a trip, asking where to.", func(ctx context.Context, in tripIn) (string, error) {
		res, err := tool.Elicit(ctx, &tool.Elicitation{
			Message: "Where to, for " + in.Trip + "?",
			Schema:  json.RawMessage(`{"type":"object","properties":{"city":{"type":"string","default":"Paris"},"nights":{"type":"integer","minimum":1,"default":2}},"required":["city"]}`),
		})
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%s: city=%v nights=%v", res.Action, res.Content["city"], res.Content["nights"]), nil
	}))
	info := t.Info()
	info.Annotations = &tool.Annotations{ReadOnlyHint: &readOnly}
	return tool.NewFunc(info, t.Call)
}

// everythingJSON configures the reference server-everything on stdio.
func everythingJSON(t *testing.T) string {
	node := testpeers.Node(t)
	everything := filepath.Join(testpeers.Package(t, "@modelcontextprotocol/server-everything"), "dist", "index.js")
	return fmt.Sprintf(`{"command": %q, "args": [%q, "stdio"]}`, node, everything)
}

// callScript is a model's script that calls a tool once, then answers,
// with answers to sampling requests between.
func callScript(name, args string, samples ...string) []string {
	script := []string{fmt.Sprintf(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":%q,"arguments":%q}}]}}]}
{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`, name, args)}
	for _, s := range samples {
		script = append(script, fmt.Sprintf(`{"choices":[{"index":0,"delta":{"content":%q}}]}
{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`, s))
	}
	return append(script, `{"choices":[{"index":0,"delta":{"content":"All finished."}}]}
{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`)
}

// lastToolResult is what the model was told of the tool call, in its
// last request.
func (s *scriptedModel) lastToolResult(t *testing.T) string {
	t.Helper()
	s.mu.Lock()
	n := len(s.requests)
	s.mu.Unlock()
	if n == 0 {
		t.Fatal("no model request")
	}
	msgs := s.messages(n - 1)
	content, _ := msgs[len(msgs)-1]["content"].(string)
	return content
}

// TestRunServerAsks: toolwire run answers what servers ask by its flags:
// elicitation refused (--yes: a form's defaults when every required field
// has one, else declined), roots (the working directory and --allow-dir),
// sampling by the run's model only with --allow-sampling, bounded.
func TestRunServerAsks(t *testing.T) {
	everything := everythingJSON(t)
	asks := testServerJSON(t, "asks", nil, "")
	wd, _ := os.Getwd()
	wd, _ = filepath.EvalSymlinks(wd)
	extra, _ := filepath.EvalSymlinks(t.TempDir())
	for _, tt := range []struct {
		name, server, tool, args string
		flags, samples           []string
		stderr, result           []string // wanted in stderr, and in the tool's result the model got
		requests                 int
	}{
		{name: "elicitation refused", server: everything, tool: "trigger-elicitation-request", args: `{}`,
			stderr: []string{"toolwire: server s asked for input (Please provide inputs for the following fields:); run is not interactive: use chat, or --yes to accept with defaults"},
			result: []string{"run is not interactive"}},
		{name: "elicitation --yes without defaults", server: everything, tool: "trigger-elicitation-request", args: `{}`, flags: []string{"--yes"},
			stderr: []string{"server s asked for input (Please provide inputs for the following fields:): declined, as --yes accepts a form only when every required field has a default (name has none; use chat to answer)"},
			result: []string{"User declined"}},
		{name: "elicitation --yes with defaults", server: asks, tool: "plan_trip", args: `{"trip":"spring"}`, flags: []string{"--yes"},
			stderr: []string{"server s asked for input (Where to, for spring?): accepted with the form's defaults (--yes)"},
			result: []string{"accept: city=Paris nights=2"}},
		{name: "URL elicitation --yes", server: everything, tool: "trigger-url-elicitation", args: `{"url":"https://example.com/consent"}`, flags: []string{"--yes"},
			stderr: []string{"server s asked for input (Please open the link to complete this action.) at https://example.com/consent: declined, as run cannot open a page for you (use chat)"},
			result: []string{"User declined to open the URL"}},
		{name: "roots", server: everything, tool: "get-roots-list", args: `{}`, flags: []string{"--allow-dir", extra},
			result: []string{"Current MCP Roots (2 total)", "URI: file://" + wd + "\n", "URI: file://" + extra + "\n"}},
		{name: "sampling refused", server: everything, tool: "trigger-sampling-request", args: `{"prompt":"a haiku"}`, flags: []string{"--allow", "s__trigger-sampling-request"},
			stderr: []string{`server s asked the model for a completion (sampling: 1 message, the last "Resource trigger-sampling-request context: a haiku"); run answers only with --allow-sampling`},
			result: []string{"--allow-sampling"}},
		{name: "sampling allowed", server: everything, tool: "trigger-sampling-request", args: `{"prompt":"a haiku","maxTokens":100000}`, flags: []string{"--allow-sampling", "--allow", "s__trigger-sampling-request"},
			samples: []string{"Tests pass at dawn"}, requests: 3,
			stderr: []string{"server s has the model complete 1 message"},
			result: []string{"LLM sampling result", "Tests pass at dawn", `"model": "openai:test-model"`, `"stopReason": "endTurn"`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := newScriptedModel(t, callScript("s__"+tt.tool, tt.args, tt.samples...)...)
			cfg := writeConfig(t, map[string]string{"s": tt.server})
			args := append([]string{"run", "--config", cfg, "--toolsets=", "-m", "openai:test-model"}, tt.flags...)
			r := runEnv(t, []string{"OPENAI_API_KEY=test-key", "OPENAI_BASE_URL=" + m.URL + "/v1"}, "", append(args, "go")...)
			if r.code != 0 {
				t.Fatalf("exit %d\n%s", r.code, r.stderr)
			}
			for _, want := range tt.stderr {
				if !strings.Contains(r.stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
				}
			}
			result := m.lastToolResult(t)
			for _, want := range tt.result {
				if !strings.Contains(result, want) {
					t.Errorf("the model was told %q, which lacks %q", result, want)
				}
			}
			if tt.requests != 0 {
				m.mu.Lock()
				defer m.mu.Unlock()
				if len(m.requests) != tt.requests {
					t.Fatalf("%d model requests, want %d", len(m.requests), tt.requests)
				}
				sampling := m.requests[1]
				if _, ok := sampling["tools"]; ok {
					t.Errorf("the sampling request was sent tools: %v", sampling["tools"])
				}
				if got := fmt.Sprint(sampling["max_tokens"], sampling["max_completion_tokens"]); !strings.Contains(got, "4096") {
					t.Errorf("the sampling request's token bound is %s, want 4096 (capped)", got)
				}
				msgs, _ := json.Marshal(sampling["messages"])
				if !strings.Contains(string(msgs), "You are a helpful test server.") || !strings.Contains(string(msgs), "context: a haiku") {
					t.Errorf("the sampling request's messages: %s", msgs)
				}
			}
		})
	}
}

// TestRunAllowDirBad: a --allow-dir that is not a directory is a usage
// error naming it.
func TestRunAllowDirBad(t *testing.T) {
	r := runEnv(t, []string{"OPENAI_API_KEY=k"}, "", "run", "--toolsets=calc", "-m", "openai:x", "--allow-dir", "/nonexistent/dir", "hi")
	if r.code != 2 || !strings.Contains(r.stderr, "--allow-dir") || !strings.Contains(r.stderr, "/nonexistent/dir") {
		t.Errorf("exit %d, stderr %q; want 2 and the flag with its value", r.code, r.stderr)
	}
}

// chatWithServers starts toolwire chat on a pseudo-terminal with the
// servers of cfg.
func chatWithServers(t *testing.T, m *scriptedModel, cfg string, env ...string) (*os.File, *screen, chan error) {
	t.Helper()
	c := startChatEnv(t, m.URL, 200, append([]string{"NO_COLOR=1"}, env...), "--config", cfg)
	return c.tty, c.scr, c.done
}

// answer waits for the terminal to show a prompt, then types a line.
func answer(t *testing.T, tty *os.File, scr *screen, prompt, line string) {
	t.Helper()
	scr.waitFor(t, prompt)
	before := scr.String()
	if _, err := tty.WriteString(line + "\r"); err != nil {
		t.Fatal(err)
	}
	// The line echoes before the next prompt shows.
	for deadline := time.Now().Add(10 * time.Second); scr.String() == before && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
	}
}

// TestChatElicitationForm: chat asks a server's form on the terminal,
// field by field with its title, type, default and choices, re-asking
// when an answer does not fit the field's schema.
func TestChatElicitationForm(t *testing.T) {
	m := newScriptedModel(t, callScript("everything__trigger-elicitation-request", `{}`)...)
	cfg := writeConfig(t, map[string]string{"everything": everythingJSON(t)})
	tty, scr, _ := chatWithServers(t, m, cfg)
	scr.waitFor(t, "toolwire chat with openai:test-model")
	tty.WriteString("ask me\r")
	scr.waitFor(t, "Server everything asks: Please provide inputs for the following fields:")
	steps := []struct{ prompt, line string }{
		{"Answer? [y]es, [n]o (decline), [c]ancel: ", "y"},
		{"String (string, required): Your full, legal name", ""},
		{"name is required: type a value", "Ann Lee"},
		{"  check: ", "yes"},
		{`String with default (string, default "It was a dark and stormy night.")`, ""},
		{"  email: ", "not-an-email"},
		{`"not-an-email" does not fit`, "ann@example.com"},
		{"  homepage: ", "-"},
		{"  birthdate: ", "-"},
		{"Integer (integer, default 42)", "500"},
		{`"500" does not fit`, "7"},
		{"  number: ", ""},
		{"one of 1) Monica  2) Rachel  3) Joey", "Joey"},
		{"any of, separated by commas: 1) Guitar  2) Piano  3) Violin", "1, 3"},
		{"one of 1) Superman  2) Green Lantern  3) Wonder Woman", "wonder woman"},
		{"  titledMultipleSelectEnum: ", ""},
		{"one of 1) Cats  2) Dogs  3) Birds", "2"},
	}
	for _, s := range steps {
		answer(t, tty, scr, s.prompt, s.line)
	}
	scr.waitFor(t, "✓ everything__trigger-elicitation-request")
	scr.waitFor(t, "All finished.")
	tty.WriteString("/exit\r")
	result := m.lastToolResult(t)
	for _, want := range []string{"- Name: Ann Lee", "- Agreed to terms: true", "- Email: ann@example.com", "- Favorite Integer: 7", "- Favorite Number: 3.14",
		`"untitledSingleSelectEnum": "Joey"`, `"Guitar",`, `"Violin"`, `"titledSingleSelectEnum": "hero-3"`, `"fish-1"`, `"legacyTitledEnum": "pet-2"`, `"firstLine": "It was a dark and stormy night."`} {
		if !strings.Contains(result, want) {
			t.Errorf("the tool's result lacks %q:\n%s", want, result)
		}
	}
	if strings.Contains(result, "homepage") {
		t.Errorf("a field left out was sent:\n%s", result)
	}
}

// TestChatElicitationURL: a URL elicitation shows the page's address and
// host, opens it in the browser only when the user says yes, and waits
// for the user; a form can be declined.
func TestChatElicitationURL(t *testing.T) {
	m := newScriptedModel(t, callScript("everything__trigger-url-elicitation", `{"url":"https://example.com/consent?x=1","message":"Consent, please"}`)...)
	cfg := writeConfig(t, map[string]string{"everything": everythingJSON(t)})
	dir := t.TempDir()
	opened := filepath.Join(dir, "opened")
	browser := filepath.Join(dir, "browser")
	if err := os.WriteFile(browser, []byte("#!/bin/sh\necho \"$1\" > "+opened+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	tty, scr, _ := chatWithServers(t, m, cfg, "BROWSER="+browser)
	scr.waitFor(t, "toolwire chat with")
	tty.WriteString("open it\r")
	// The tool is open-world: chat asks before it runs.
	answer(t, tty, scr, "? [y]es, [n]o, [a]lways: ", "y")
	scr.waitFor(t, "Server everything asks you to open a page on example.com: Consent, please")
	scr.waitFor(t, "https://example.com/consent?x=1")
	if _, err := os.Stat(opened); err == nil {
		t.Fatal("the page was opened before the user said yes")
	}
	answer(t, tty, scr, "Open it? [y]es, [n]o (decline), [c]ancel: ", "y")
	answer(t, tty, scr, "Press Enter when you are done there: ", "")
	scr.waitFor(t, "All finished.")
	tty.WriteString("/exit\r")
	b, _ := os.ReadFile(opened)
	if strings.TrimSpace(string(b)) != "https://example.com/consent?x=1" {
		t.Errorf("the browser was asked to open %q", b)
	}
	if result := m.lastToolResult(t); !strings.Contains(result, "User completed the URL elicitation flow") {
		t.Errorf("the tool's result: %s", result)
	}
}

// TestChatSampling: chat asks before a server has the model complete its
// messages; refused, the server is told so; allowed, the model answers.
func TestChatSampling(t *testing.T) {
	script := callScript("everything__trigger-sampling-request", `{"prompt":"a haiku","maxTokens":50}`, "Tests pass at dawn")
	m := newScriptedModel(t, append(script[:1:1], append([]string{script[len(script)-1]}, script...)...)...)
	cfg := writeConfig(t, map[string]string{"everything": everythingJSON(t)})
	tty, scr, _ := chatWithServers(t, m, cfg)
	scr.waitFor(t, "toolwire chat with")
	tty.WriteString("sample\r")
	// The tool is open-world: chat asks before it runs, then no more.
	answer(t, tty, scr, "? [y]es, [n]o, [a]lways: ", "a")
	scr.waitFor(t, `Server everything asks openai:test-model for a completion: 1 message, the last "Resource trigger-sampling-request context: a haiku"`)
	answer(t, tty, scr, "Allow (at most 50 tokens, no tools)? [y/N]: ", "")
	scr.waitFor(t, "All finished.")
	if result := m.lastToolResult(t); !strings.Contains(result, "the user did not allow server everything to use the model") {
		t.Errorf("refused, the tool's result: %s", result)
	}
	tty.WriteString("again\r")
	answer(t, tty, scr, "Allow (at most 50 tokens, no tools)? [y/N]: ", "y")
	for deadline := time.Now().Add(20 * time.Second); strings.Count(scr.String(), "All finished.") < 2 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
	}
	tty.WriteString("/exit\r")
	if result := m.lastToolResult(t); !strings.Contains(result, "Tests pass at dawn") {
		t.Errorf("allowed, the tool's result: %s", result)
	}
}

// echoModel answers every request with its text, and keeps the request.
type echoModel struct {
	req  *model.Request
	stop model.StopReason
}

func (m *echoModel) Generate(_ context.Context, req *model.Request, _ func(model.Delta)) (*model.Response, error) {
	m.req = req
	return &model.Response{Message: model.Message{Role: model.RoleAssistant, Text: "answer"}, StopReason: m.stop}, nil
}

// TestSample: a server's sampling request reaches the model bounded (at
// most maxSamplingTokens, no tools), and content the model cannot take
// is refused with what to send instead.
func TestSample(t *testing.T) {
	text := json.RawMessage(`{"type":"text","text":"hi"}`)
	for _, tt := range []struct {
		name      string
		p         mcp.CreateMessageParams
		maxTokens int
		stop      string
		err       string
	}{
		{name: "small bound kept", p: mcp.CreateMessageParams{MaxTokens: 50, Messages: []mcp.SamplingMessage{{Role: "user", Content: text}}}, maxTokens: 50, stop: "maxTokens"},
		{name: "large bound capped", p: mcp.CreateMessageParams{MaxTokens: 1 << 20, Messages: []mcp.SamplingMessage{{Role: "user", Content: text}}}, maxTokens: maxSamplingTokens, stop: "maxTokens"},
		{name: "no bound", p: mcp.CreateMessageParams{Messages: []mcp.SamplingMessage{{Role: "user", Content: json.RawMessage(`[{"type":"text","text":"a"},{"type":"image","data":"AA==","mimeType":"image/png"}]`)}}}, maxTokens: maxSamplingTokens, stop: "maxTokens"},
		{name: "tools", p: mcp.CreateMessageParams{MaxTokens: 5, Tools: json.RawMessage(`[{"name":"x"}]`), Messages: []mcp.SamplingMessage{{Role: "user", Content: text}}}, err: `toolwire answers sampling requests without tools: send the request without "tools"`},
		{name: "role", p: mcp.CreateMessageParams{MaxTokens: 5, Messages: []mcp.SamplingMessage{{Role: "system", Content: text}}}, err: `message 1 has role "system": use user or assistant`},
		{name: "audio", p: mcp.CreateMessageParams{MaxTokens: 5, Messages: []mcp.SamplingMessage{{Role: "user", Content: json.RawMessage(`{"type":"audio","data":"AA=="}`)}}}, err: `message 1 has "audio" content, which toolwire does not send to a model: send text or images`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := &echoModel{stop: model.StopLength}
			res, err := sample(context.Background(), m, "test:model", &tt.p)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || m.req != nil {
					t.Fatalf("error %v (the model asked: %v), want %q and no request", err, m.req != nil, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if m.req.MaxTokens != tt.maxTokens || len(m.req.Tools) != 0 || m.req.ToolChoice != model.ToolChoiceNone {
				t.Errorf("the model was asked for %d tokens with %d tools (choice %q), want %d and none", m.req.MaxTokens, len(m.req.Tools), m.req.ToolChoice, tt.maxTokens)
			}
			if res.Model != "test:model" || res.StopReason != tt.stop || string(res.Content) != `{"text":"answer","type":"text"}` {
				t.Errorf("result %+v %s", res, res.Content)
			}
		})
	}
}

// TestPrintable: what a server sends reaches the terminal without escape
// sequences.
func TestPrintable(t *testing.T) {
	if got := printable("ok\x1b[2J\u009b31m\x07 done\nnext\x9b"); got != "ok[2J31m done\nnext\ufffd" {
		t.Errorf("printable = %q", got)
	}
}

// TestOpenPageRefusesOtherSchemes: only an http or https page is shown
// to be opened.
func TestOpenPageRefusesOtherSchemes(t *testing.T) {
	for _, u := range []string{"javascript:alert(1)", "file:///etc/passwd", "https://"} {
		if _, err := (&chat{}).openPage("s", &mcp.ElicitParams{Mode: "url", URL: u}); err == nil || !strings.Contains(err.Error(), "is not an http or https address") {
			t.Errorf("%s: %v", u, err)
		}
	}
}

// TestChatElicitationDeclined: piped, chat asks a form too; the user may
// decline it, or cancel it.
func TestChatElicitationDeclined(t *testing.T) {
	call := callScript("everything__trigger-elicitation-request", `{}`)
	m := newScriptedModel(t, append(call, call...)...)
	cfg := writeConfig(t, map[string]string{"everything": everythingJSON(t)})
	r := runEnv(t, []string{"OPENAI_API_KEY=test-key", "OPENAI_BASE_URL=" + m.URL + "/v1"}, "ask me\nn\nask again\nc\n",
		"chat", "--config", cfg, "--toolsets=", "-m", "openai:test-model")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if n := strings.Count(r.stdout, "Answer? [y]es, [n]o (decline), [c]ancel: "); n != 2 {
		t.Errorf("asked %d times, want 2:\n%s", n, r.stdout)
	}
	declined, _ := json.Marshal(m.messages(1))
	cancelled, _ := json.Marshal(m.messages(3))
	if !strings.Contains(string(declined), "User declined") || !strings.Contains(string(cancelled), "User cancelled") {
		t.Errorf("the model was told:\n%s\nthen:\n%s", declined, cancelled)
	}
}

// TestRunAllowDir: run's data toolset reads a CSV outside the working
// directory only when --allow-dir names its directory.
func TestRunAllowDir(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join(dir, "sales.csv")
	if err := os.WriteFile(csv, []byte("region,amount\nnorth,3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name  string
		flags []string
		want  string
	}{
		{"outside", nil, " is outside the directories"},
		{"allowed", []string{"--allow-dir", dir}, `"rows":1`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := newScriptedModel(t, callScript("load_csv", fmt.Sprintf(`{"path":%q}`, csv))...)
			args := append([]string{"run", "--toolsets=data", "--allow", "load_csv", "-m", "openai:test-model"}, tt.flags...)
			r := runEnv(t, []string{"OPENAI_API_KEY=test-key", "OPENAI_BASE_URL=" + m.URL + "/v1", "TOOLWIRE_CONFIG=" + filepath.Join(dir, "none.json"), "HOME=" + dir}, "", append(args, "load it")...)
			if r.code != 0 {
				t.Fatalf("exit %d\n%s", r.code, r.stderr)
			}
			if got := m.lastToolResult(t); !strings.Contains(got, tt.want) {
				t.Errorf("the model was told %q, want %q in it", got, tt.want)
			}
		})
	}
}

// TestChatInterruptElicitation: Ctrl-C at a server's question stops the
// turn, as at the approval question; the call is kept with a result that
// says so.
func TestChatInterruptElicitation(t *testing.T) {
	m := newScriptedModel(t, callScript("everything__trigger-elicitation-request", `{}`)...)
	cfg := writeConfig(t, map[string]string{"everything": everythingJSON(t)})
	tty, scr, _ := chatWithServers(t, m, cfg)
	scr.waitFor(t, "toolwire chat with openai:test-model")
	tty.WriteString("ask me\r")
	scr.waitFor(t, "Answer? [y]es, [n]o (decline), [c]ancel: ")
	tty.WriteString("\x03")
	scr.waitFor(t, "Interrupted: the conversation so far is kept.")
	tty.WriteString("forget it\r")
	scr.waitFor(t, "All finished.")
	tty.WriteString("/exit\r")
	msgs := m.messages(1)
	if len(msgs) != 4 || !strings.Contains(fmt.Sprint(msgs[2]["content"]), "interrupted") || msgs[3]["content"] != "forget it" {
		t.Errorf("the request after the interruption should have the call, its result saying it was interrupted, and the new question: %v", msgs)
	}
}
