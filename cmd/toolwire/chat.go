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
run FILE replays them without a model), /exit (or Ctrl-D) leaves. On a terminal, lines can be edited and the arrows walk
the history; elsewhere (a pipe, NO_COLOR) the output is plain.

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
	raw   *term.State    // the terminal's mode before
	out   io.Writer      // where everything is shown
	color bool
	mu    sync.Mutex // guards the screen
	// asking lets one server's question at a time use the terminal
	// (ask.go).
	asking sync.Mutex
	// Tools running now, for the spinner line.
	running  map[string]runningCall
	stopSpin chan struct{}
	midLine  bool
	always   map[string]bool // tools the user allowed for the session
	history  []model.Message
	rec      *workflow.Recorder // the session's tool calls, for /save
}

type runningCall struct {
	name, args string
	start      time.Time
}

func newChat(cmd *cobra.Command, o *agentOptions) (*chat, error) {
	c := &chat{cmd: cmd, o: o, out: cmd.OutOrStdout(), running: map[string]runningCall{}, always: map[string]bool{}, rec: &workflow.Recorder{}}
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
			c.term = term.NewTerminal(struct {
				io.Reader
				io.Writer
			}{stdin, cmd.OutOrStdout()}, "> ")
			c.out = c.term
			c.color = os.Getenv("NO_COLOR") == ""
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

func (c *chat) close() {
	c.stopSpinner()
	if c.raw != nil {
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
	if c.term != nil {
		c.term.SetPrompt(prompt)
		line, err := c.term.ReadLine()
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
	fmt.Fprintf(c.out, "toolwire chat with %s and %d tools: /tools, /model, /clear, /save, /exit\n", c.modelName(), c.r.tools.Len())
	for {
		line, err := c.readLine("> ")
		if errors.Is(err, io.EOF) {
			fmt.Fprintln(c.out)
			return nil
		}
		if err != nil {
			return err
		}
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
		for _, t := range tools {
			info := t.Info()
			desc, _, _ := strings.Cut(info.Description, "\n")
			fmt.Fprintf(c.out, "  %s  %s\n", c.style("1", info.Name), shorten(desc, 80))
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
func (c *chat) turn(text string) {
	ctx := c.cmd.Context()
	c.rec.Task += text + "\n" // values typed here become the workflow's inputs
	history := append(c.history, model.Message{Role: model.RoleUser, Text: text})
	res, err := c.agent.Run(ctx, history)
	c.mu.Lock()
	c.endLine()
	c.mu.Unlock()
	if res != nil {
		c.history = res.Messages
		u := res.Usage
		if !c.o.tools.host.g.quiet {
			fmt.Fprintln(c.out, c.style("2", fmt.Sprintf("(%d tool calls; tokens %d in, %d out)", res.ToolCalls, u.InputTokens, u.OutputTokens)))
		}
	}
	if err != nil {
		fmt.Fprintln(c.out, c.style("31", "toolwire: "+err.Error()))
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
		fmt.Fprint(c.out, e.Text)
		c.midLine = !strings.HasSuffix(e.Text, "\n")
	case agent.EventReasoning:
		fmt.Fprint(c.out, c.style("2", e.Text))
		c.midLine = !strings.HasSuffix(e.Text, "\n")
	case agent.EventToolStart:
		c.endLine()
		c.running[e.CallID] = runningCall{name: e.Tool, args: shorten(string(e.Args), 60), start: time.Now()}
		if c.term != nil {
			c.startSpinner()
		}
	case agent.EventToolEnd:
		call := c.running[e.CallID]
		delete(c.running, e.CallID)
		c.clearStatus()
		mark := c.style("32", "✓")
		detail := fmt.Sprintf("%v, %d bytes", e.Duration.Round(time.Millisecond), e.ResultSize)
		if e.IsError {
			mark, detail = c.style("31", "✗"), fmt.Sprintf("%v: %s", e.Duration.Round(time.Millisecond), shorten(e.Err, 100))
		}
		fmt.Fprintf(c.out, "%s %s %s  %s\n", mark, e.Tool, call.args, c.style("2", detail))
		if len(c.running) == 0 {
			c.stopSpinnerLocked()
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
	fmt.Fprintf(c.out, "\r\x1b[K%c %s", frames[frame%len(frames)], strings.Join(parts, ", "))
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
	defer func() {
		c.mu.Lock()
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
