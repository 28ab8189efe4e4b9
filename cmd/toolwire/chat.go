package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/toolwire/toolwire/agent"
	"github.com/toolwire/toolwire/model"
	"github.com/toolwire/toolwire/model/provider"
	"github.com/toolwire/toolwire/tool"
	"github.com/toolwire/toolwire/workflow"
)

func newChatCmd(g *globalOptions) *cobra.Command {
	o := agentOptions{tools: toolsOptions{host: hostOptions{g: g}}}
	cmd := &cobra.Command{
		Use:   "chat",
		Short: "Talk with a model that can use your tools",
		Long: `Chat opens a conversation with a model that may call the built-in toolsets and
the tools of your configured MCP servers. The answer streams as it arrives;
each tool call shows as it runs, with its time and the size of its result;
the model's reasoning shows dimmed. A tool that may change things asks you
first (y, n, or a for always), unless --yes or --allow lets it run.

Commands: /tools lists the tools, /model shows the model or switches to
another (/model ollama:qwen3), /clear starts the conversation again, /save
FILE writes the conversation's tool calls as a workflow (toolwire workflow
run FILE replays them without a model), /exit (or Ctrl-D) leaves.

On a terminal, lines can be edited and the arrows walk the history; the
answer's markdown is rendered; Ctrl-C stops the running turn (the model's
answer and the tool calls, on their servers too) and keeps the
conversation so far, without the unfinished answer; at the prompt it
clears the line, and a second Ctrl-C on an empty line leaves. Elsewhere (a
pipe) the output is plain text; NO_COLOR leaves out the colours.

With many tools the model searches them (--tool-search; the tools already
called stay loaded). The model comes from --model or $TOOLWIRE_MODEL: see
toolwire run --help.`,
		Args: withUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := newChat(cmd, &o)
			if err != nil {
				return err
			}
			defer c.close()
			return c.loop()
		},
	}
	o.flags(cmd)
	// A conversation has no deadline of its own.
	_ = cmd.Flags().Set("timeout", "0")
	return cmd
}

// chat is an interactive conversation on a terminal, or on plain streams.
type chat struct {
	cmd   *cobra.Command
	o     *agentOptions
	r     *runSession
	agent *agent.Agent
	in    *bufio.Scanner // plain input
	term  *term.Terminal // line editing, when stdin is a terminal
	keys  *keyboard      // the terminal's keys
	raw   *term.State    // the terminal's mode before
	out   io.Writer      // where everything is shown
	color bool
	mu    sync.Mutex // guards the screen
	// asking lets one server's question at a time use the terminal
	// (ask.go).
	asking sync.Mutex
	// Tools running now, for the spinner line.
	running  map[string]runningCall
	waiting  time.Time // since when the model is asked, until it answers
	stopSpin chan struct{}
	midLine  bool
	thinking bool      // the model's reasoning is being shown
	md       *markdown // renders the answer, on a terminal
	// approving is how long the user took to approve each tool's call
	// that runs, by tool: not the tool's time.
	approving map[string]time.Duration
	always    map[string]bool // tools the user allowed for the session
	history   []model.Message
	rec       *workflow.Recorder // the session's tool calls, for /save
	stopWatch func()             // stops following the terminal's size
	stderr    io.Writer          // the servers' stderr before the terminal went raw
}

type runningCall struct {
	name, args string
	start      time.Time
}

func newChat(cmd *cobra.Command, o *agentOptions) (*chat, error) {
	c := &chat{cmd: cmd, o: o, out: cmd.OutOrStdout(), running: map[string]runningCall{}, approving: map[string]time.Duration{}, always: map[string]bool{}, rec: &workflow.Recorder{}, stopWatch: func() {}}
	if o.tools.host.timeout <= 0 {
		o.tools.host.timeout = 365 * 24 * time.Hour
	}
	o.tools.asker = c // servers' questions go to the user (ask.go),
	c.asking.Lock()   // once the chat is set up
	defer c.asking.Unlock()
	r, err := o.open(cmd, c.approve)
	if err != nil {
		return nil, err
	}
	c.r = r
	stdin, isFile := cmd.InOrStdin().(*os.File)
	if isFile && isTerminal(stdin) && isTerminal(cmd.OutOrStdout()) {
		state, err := term.MakeRaw(int(stdin.Fd()))
		if err == nil {
			c.raw = state
			c.keys = newKeyboard(stdin)
			c.term = term.NewTerminal(struct {
				io.Reader
				io.Writer
			}{c.keys, cmd.OutOrStdout()}, "> ")
			c.out = c.term
			// What goes to stderr (a message of /save, a warning, with -v
			// the servers' stderr) goes through the editor too, which ends
			// lines with CR LF.
			cmd.SetErr(c.term)
			if r.host != nil {
				c.stderr = r.host.stderr.set(aside{c})
			}
			c.color = os.Getenv("NO_COLOR") == ""
			c.md = newMarkdown(80, c.color)
			c.followSize(cmd.OutOrStdout().(*os.File))
		}
	}
	if c.term == nil {
		c.in = bufio.NewScanner(cmd.InOrStdin())
		c.in.Buffer(make([]byte, 64<<10), 1<<20)
	}
	r.tools.Use(c.rec.Middleware())
	c.agent = &agent.Agent{Name: "toolwire", Model: r.model, Tools: r.tools, System: o.system, MaxTurns: o.maxTurns, OnEvent: c.event, Elicit: c.elicit, ToolSearch: r.search}
	if tel := o.tools.host.g.tel; tel != nil {
		c.agent.Telemetry = *tel
	}
	// A call that leaves out a required argument asks the user for it.
	r.tools.AskMissing(true)
	return c, nil
}

// followSize sizes the editor and the answer's lines to the terminal, and
// follows its changes.
func (c *chat) followSize(out *os.File) {
	resize := func() {
		w, h, err := term.GetSize(int(out.Fd()))
		if err != nil || w <= 0 {
			return
		}
		_ = c.term.SetSize(w, h)
		c.mu.Lock()
		c.md.setWidth(w)
		c.mu.Unlock()
	}
	resize()
	changed, stop := onResize()
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case <-changed:
				resize()
			}
		}
	}()
	c.stopWatch = func() { stop(); close(done) }
}

func (c *chat) close() {
	c.stopWatch()
	c.stopSpinner()
	if c.raw != nil {
		if c.r.host != nil {
			c.r.host.stderr.set(c.stderr)
		}
		_ = term.Restore(int(c.cmd.InOrStdin().(*os.File).Fd()), c.raw)
	}
	c.r.close()
}

// readLine reads a line of input with the prompt; io.EOF at the end,
// and at once when the command's context ends (SIGINT, SIGTERM), which a
// read of the input would not notice.
func (c *chat) readLine(prompt string) (string, error) {
	type read struct {
		line string
		err  error
	}
	got := make(chan read, 1)
	go func() {
		line, err := c.read(prompt)
		got <- read{line, err}
	}()
	select {
	case r := <-got:
		return r.line, r.err
	case <-c.cmd.Context().Done():
		return "", io.EOF // the read goes on until the process exits
	}
}

// read reads a line of input with the prompt; io.EOF at the end.
func (c *chat) read(prompt string) (string, error) {
	c.mu.Lock()
	c.endLine() // the prompt starts a line
	c.mu.Unlock()
	if c.term != nil {
		c.term.SetPrompt(prompt)
		line, err := c.keys.readLine(c.term)
		c.term.SetPrompt("> ")
		return line, err
	}
	fmt.Fprint(c.out, prompt)
	if !c.in.Scan() {
		if err := c.in.Err(); err != nil {
			return "", err
		}
		return "", io.EOF
	}
	return c.in.Text(), nil
}

func (c *chat) style(code, s string) string {
	if !c.color {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

func (c *chat) loop() error {
	fmt.Fprintf(c.out, "toolwire chat with %s and %s: /tools, /model, /clear, /save, /exit\n", c.modelName(), plural(c.r.tools.Len(), "tool"))
	quitting := false // after a Ctrl-C on an empty line
	for {
		line, err := c.readLine("> ")
		if errors.Is(err, io.EOF) {
			fmt.Fprintln(c.out)
			return nil
		}
		if errors.Is(err, errInterrupted) {
			// Ctrl-C clears the line; twice on an empty line, it quits.
			if strings.TrimSpace(line) != "" {
				quitting = false
				continue
			}
			if quitting {
				return nil
			}
			quitting = true
			fmt.Fprintln(c.out, c.style("2", "(Ctrl-C again, Ctrl-D or /exit leaves)"))
			continue
		}
		if err != nil {
			return err
		}
		quitting = false
		line = strings.TrimSpace(line)
		switch {
		case line == "":
			continue
		case strings.HasPrefix(line, "/"):
			if done := c.command(line); done {
				return nil
			}
			continue
		}
		c.turn(line)
	}
}

func (c *chat) modelName() string {
	if c.o.model != "" {
		return c.o.model
	}
	return os.Getenv("TOOLWIRE_MODEL")
}

// command runs a slash command; it reports whether the chat ends.
func (c *chat) command(line string) bool {
	name, arg, _ := strings.Cut(line, " ")
	arg = strings.TrimSpace(arg)
	switch name {
	case "/exit", "/quit":
		return true
	case "/clear":
		c.history = nil
		c.rec.Reset()
		fmt.Fprintln(c.out, "The conversation starts again.")
	case "/save":
		if arg == "" {
			fmt.Fprintln(c.out, "/save FILE writes the tool calls so far as a workflow (toolwire workflow run FILE replays it)")
			return false
		}
		if err := saveRecording(c.cmd, c.rec, arg); err != nil {
			fmt.Fprintln(c.out, "toolwire:", err)
		}
	case "/tools":
		tools := c.r.tools.Tools()
		sort.Slice(tools, func(i, j int) bool { return tools[i].Info().Name < tools[j].Info().Name })
		width := 0
		for _, t := range tools {
			width = max(width, len(t.Info().Name))
		}
		for _, t := range tools {
			info := t.Info()
			desc, _, _ := strings.Cut(info.Description, "\n")
			// Padded before it is styled: the escapes take no column.
			fmt.Fprintf(c.out, "  %s  %s\n", c.style("1", fmt.Sprintf("%-*s", width, info.Name)), shorten(desc, 80))
		}
	case "/model":
		if arg == "" {
			fmt.Fprintln(c.out, "model:", c.modelName())
			return false
		}
		m, err := provider.Open(arg, provider.Options{APIKey: c.o.apiKey, BaseURL: c.o.baseURL, Telemetry: c.o.tools.host.g.tel})
		if err != nil {
			fmt.Fprintln(c.out, "toolwire:", err)
			return false
		}
		c.o.model, c.agent.Model = arg, m
		fmt.Fprintln(c.out, "model:", arg)
	case "/help":
		fmt.Fprintln(c.out, "/tools lists the tools, /model [provider:model] shows or switches the model, /clear forgets the conversation, /save FILE writes its tool calls as a workflow, /exit leaves")
	default:
		msg := fmt.Sprintf("unknown command %s", name)
		if s := tool.Suggest(name, []string{"/tools", "/model", "/clear", "/save", "/exit", "/help"}); len(s) > 0 {
			msg += fmt.Sprintf(" (did you mean %s?)", strings.Join(s, " or "))
		}
		fmt.Fprintln(c.out, msg+"; /help lists them")
	}
	return false
}

// turn sends the user's message and shows the answer as it comes.
//
// A Ctrl-C cancels the turn: the conversation keeps the user's message
// and the steps that completed (each tool call with its result, the
// cancelled calls' results saying so), not the unfinished answer.
func (c *chat) turn(text string) {
	ctx, cancel := context.WithCancelCause(c.cmd.Context())
	defer cancel(nil)
	if c.keys != nil {
		c.keys.setTurn(cancel)
		defer c.keys.setTurn(nil)
	}
	ctx = model.OnRetry(ctx, c.retrying)
	c.rec.Task += text + "\n" // values typed here become the workflow's inputs
	history := append(c.history, model.Message{Role: model.RoleUser, Text: text})
	c.mu.Lock()
	c.waitModel()
	c.mu.Unlock()
	res, err := c.agent.Run(ctx, history)
	c.mu.Lock()
	c.waiting, c.thinking = time.Time{}, false
	c.stopSpinnerLocked()
	c.clearStatus()
	c.flushAnswer() // what came of an answer cut short too
	c.endLine()
	c.mu.Unlock()
	if res != nil {
		c.history = res.Messages
		u := res.Usage
		if !c.o.tools.host.g.quiet {
			fmt.Fprintln(c.out, c.style("2", fmt.Sprintf("(%s; tokens %d in, %d out)", plural(res.ToolCalls, "tool call"), u.InputTokens, u.OutputTokens)))
		}
	}
	switch {
	case errors.Is(context.Cause(ctx), errInterrupted):
		fmt.Fprintln(c.out, c.style("33", "Interrupted: the conversation so far is kept."))
	case err != nil:
		fmt.Fprintln(c.out, c.style("31", "toolwire: "+err.Error()))
	}
}

// retrying says that the model's request is tried again.
func (c *chat) retrying(r model.Retry) {
	why := "a failed connection"
	var ae *model.APIError
	if errors.As(r.Err, &ae) && ae.Status != 0 {
		why = fmt.Sprint(ae.Status)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.clearStatus()
	c.endLine()
	fmt.Fprintln(c.out, c.style("33", fmt.Sprintf("retrying after %s from %s (attempt %d/%d)…", why, r.Provider, r.Attempt, r.Attempts)))
	if c.stopSpin != nil {
		c.drawStatus(0)
	}
}

// waitModel shows that the model is asked, on a terminal; c.mu is held.
func (c *chat) waitModel() {
	c.waiting = time.Now()
	if c.term != nil {
		c.startSpinner()
	}
}

// answered ends the wait for the model; c.mu is held.
func (c *chat) answered() {
	if c.waiting.IsZero() {
		return
	}
	c.waiting = time.Time{}
	c.clearStatus()
	if len(c.running) == 0 {
		c.stopSpinnerLocked()
	}
}

// flushAnswer shows the rest of the answer's markdown; c.mu is held.
func (c *chat) flushAnswer() {
	if c.md == nil {
		return
	}
	if out := c.md.flush(); out != "" {
		c.endLine()
		fmt.Fprint(c.out, out)
	}
}

// endLine ends a line the answer left open; c.mu is held.
func (c *chat) endLine() {
	if c.midLine {
		fmt.Fprintln(c.out)
		c.midLine = false
	}
}

// event shows what the agent does.
func (c *chat) event(e agent.Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch e.Type {
	case agent.EventText:
		if c.thinking {
			// The reasoning ends: the answer starts a line of its own.
			c.endLine()
			c.thinking = false
		}
		if c.md != nil {
			if out := c.md.write(e.Text); out != "" {
				c.answered()
				c.endLine()
				fmt.Fprint(c.out, out)
			}
			return
		}
		fmt.Fprint(c.out, e.Text)
		c.midLine = !strings.HasSuffix(e.Text, "\n")
	case agent.EventReasoning:
		c.answered()
		if !c.thinking {
			c.flushAnswer()
			c.endLine()
			c.thinking = true
		}
		fmt.Fprint(c.out, c.style("2", e.Text))
		c.midLine = !strings.HasSuffix(e.Text, "\n")
	case agent.EventToolStart:
		c.answered()
		c.flushAnswer()
		c.thinking = false
		c.endLine()
		c.running[e.CallID] = runningCall{name: e.Tool, args: shorten(string(e.Args), 60), start: time.Now()}
		if c.term != nil {
			c.startSpinner()
		}
	case agent.EventToolEnd:
		call := c.running[e.CallID]
		delete(c.running, e.CallID)
		c.clearStatus()
		// The time the user took to approve the call is not the tool's.
		took := (e.Duration - c.approving[e.Tool]).Round(time.Millisecond)
		delete(c.approving, e.Tool)
		mark := c.style("32", "✓")
		detail := fmt.Sprintf("%v, %d bytes", took, e.ResultSize)
		if e.IsError {
			mark, detail = c.style("31", "✗"), fmt.Sprintf("%v: %s", took, shorten(e.Err, 100))
		}
		fmt.Fprintf(c.out, "%s %s %s  %s\n", mark, e.Tool, call.args, c.style("2", detail))
		if len(c.running) == 0 {
			c.stopSpinnerLocked()
			c.waitModel() // with the results
		} else if c.term != nil {
			c.drawStatus(0)
		}
	}
}

// The spinner: one status line naming the tools that run.

func (c *chat) startSpinner() {
	if c.stopSpin != nil {
		c.drawStatus(0)
		return
	}
	stop := make(chan struct{})
	c.stopSpin = stop
	c.drawStatus(0)
	go func() {
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for frame := 1; ; frame++ {
			select {
			case <-stop:
				return
			case <-t.C:
				c.mu.Lock()
				if c.stopSpin == stop {
					c.drawStatus(frame)
				}
				c.mu.Unlock()
			}
		}
	}()
}

func (c *chat) drawStatus(frame int) {
	frames := []rune(spinner)
	var parts []string
	for _, r := range c.running {
		parts = append(parts, fmt.Sprintf("%s %s (%.1fs)", r.name, r.args, time.Since(r.start).Seconds()))
	}
	sort.Strings(parts)
	if len(parts) == 0 && !c.waiting.IsZero() {
		parts = append(parts, fmt.Sprintf("waiting for %s (%.1fs)", c.modelName(), time.Since(c.waiting).Seconds()))
	}
	fmt.Fprintf(c.out, "\r\x1b[K%c %s", frames[frame%len(frames)], strings.Join(parts, ", "))
}

// aside writes, through the line editor, what arrives while chat runs
// (with -v, the servers' stderr): on lines of its own, clearing the
// status line first, which the spinner draws again at its next tick.
type aside struct{ c *chat }

func (a aside) Write(p []byte) (int, error) {
	a.c.mu.Lock()
	defer a.c.mu.Unlock()
	if a.c.stopSpin != nil {
		a.c.clearStatus()
	}
	return a.c.term.Write(p)
}

// clearStatus clears the status line, on a terminal.
func (c *chat) clearStatus() {
	if c.term != nil {
		fmt.Fprint(c.out, "\r\x1b[K")
	}
}

func (c *chat) stopSpinnerLocked() {
	if c.stopSpin != nil {
		close(c.stopSpin)
		c.stopSpin = nil
	}
}

func (c *chat) stopSpinner() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stopSpinnerLocked()
}

// approve asks the user whether a tool that may change things may run.
func (c *chat) approve(_ context.Context, call *tool.Call) (bool, error) {
	if c.always[call.Name] {
		return true, nil
	}
	c.mu.Lock()
	c.stopSpinnerLocked()
	c.clearStatus()
	c.mu.Unlock()
	asked := time.Now()
	defer func() {
		c.mu.Lock()
		waited := time.Since(asked)
		c.approving[call.Name] += waited
		for id, r := range c.running {
			if r.name == call.Name {
				r.start = r.start.Add(waited)
				c.running[id] = r
			}
		}
		if len(c.running) > 0 && c.term != nil {
			c.startSpinner()
		}
		c.mu.Unlock()
	}()
	for {
		answer, err := c.readLine(fmt.Sprintf("Allow %s %s? [y]es, [n]o, [a]lways: ", call.Name, shorten(string(call.Args()), 80)))
		if err != nil {
			return false, err
		}
		switch strings.ToLower(strings.TrimSpace(answer)) {
		case "y", "yes":
			return true, nil
		case "n", "no", "":
			return false, nil
		case "a", "always":
			c.always[call.Name] = true
			return true, nil
		}
	}
}

// ask asks the user for required arguments the model left out.
func (c *chat) elicit(_ context.Context, call model.ToolCall, e *tool.Elicitation) (*tool.ElicitResult, error) {
	var form struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if err := json.Unmarshal(e.Schema, &form); err != nil {
		return nil, fmt.Errorf("the form %s asks for is not a JSON Schema object: %w", call.Name, err)
	}
	names := slices.Clone(form.Required) // asked first, in order
	for _, n := range slices.Sorted(maps.Keys(form.Properties)) {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	c.mu.Lock()
	c.stopSpinnerLocked()
	c.clearStatus()
	c.mu.Unlock()
	values := map[string]any{}
	for _, name := range names {
		v, err := c.readLine(fmt.Sprintf("%s needs %q: ", call.Name, name))
		if err != nil {
			return nil, err
		}
		var typed any // a number, true, a JSON object...; else the text
		if json.Unmarshal([]byte(v), &typed) != nil {
			typed = v
		}
		values[name] = typed
	}
	return &tool.ElicitResult{Action: tool.ActionAccept, Content: values}, nil
}
