package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/toolwire/toolwire/agent"
	"github.com/toolwire/toolwire/model"
	"github.com/toolwire/toolwire/model/provider"
	"github.com/toolwire/toolwire/spill"
	"github.com/toolwire/toolwire/tool"
	"github.com/toolwire/toolwire/toolsets"
	"github.com/toolwire/toolwire/workflow"
)

// agentOptions are the flags of the commands that run an agent.
type agentOptions struct {
	tools    toolsOptions
	model    string
	baseURL  string
	apiKey   string
	yes      bool
	allow    []string
	maxTurns int
	system   string
	search   searchOptions
	// steps, when set, sees the model's requests (run's summary and
	// error event).
	steps    *runSteps
	sampling bool // --allow-sampling: servers may have the model complete their messages without asking
}

func (o *agentOptions) flags(cmd *cobra.Command) {
	o.tools.flags(cmd)
	f := cmd.Flags()
	f.StringVarP(&o.model, "model", "m", "", "the model, as provider:model (default $TOOLWIRE_MODEL): "+providerNames())
	f.StringVar(&o.baseURL, "base-url", "", "the API's base URL, instead of the provider's variable (e.g. $OPENAI_BASE_URL)")
	f.StringVar(&o.apiKey, "api-key", "", "the API key, instead of the provider's variable (e.g. $OPENAI_API_KEY)")
	f.BoolVarP(&o.yes, "yes", "y", false, "let the model run tools that may change things without asking (run: also accept a server's form with its defaults)")
	f.BoolVar(&o.sampling, "allow-sampling", false, "let the configured servers have the model complete their messages (MCP sampling; at most 4096 tokens, no tools) without asking")
	f.StringSliceVar(&o.allow, "allow", nil, "tools that may change things to run without asking (repeatable; a server's \"allow\" in the config does the same)")
	f.IntVar(&o.maxTurns, "max-turns", agent.DefaultMaxTurns, "most model requests in one run")
	f.StringVar(&o.system, "system", "", "the system prompt")
	o.search.flags(cmd)
}

func providerNames() string {
	var names []string
	for _, p := range provider.Providers() {
		names = append(names, p.Name)
	}
	return strings.Join(names, ", ")
}

// toolsOptions are the flags that choose the tools: the built-in
// toolsets, and the configured servers.
type toolsOptions struct {
	host     hostOptions
	toolsets []string
	// withData makes the data toolset one of the defaults.
	withData bool
	// allowDirs are the directories beside the working directory that
	// the data toolset may use and the servers are given as roots.
	allowDirs []string
	// asker answers the servers' elicitation and sampling requests; nil
	// declares neither.
	asker serverAsker
}

func (o *toolsOptions) flags(cmd *cobra.Command) {
	o.host.flags(cmd)
	defaults, usage := defaultToolsets(), "built-in toolsets to use, beside the configured MCP servers ("+strings.Join(toolsets.Names(), ", ")+"; data, tables on DuckDB over the working directory's files, when named)"
	if o.withData {
		defaults, usage = append(defaults, "data"), "built-in toolsets to use, beside the configured MCP servers ("+strings.Join(toolsets.Names(), ", ")+"; data: tables on DuckDB over the working directory's files)"
	}
	cmd.Flags().StringSliceVar(&o.toolsets, "toolsets", defaults, usage)
	cmd.Flags().StringSliceVar(&o.allowDirs, "allow-dir", nil, "a directory beside the working directory whose files the data toolset may read and write, also given to the servers as a root (repeatable)")
}

// toolSession is a registry of the built-in toolsets and the configured
// servers' tools, kept in step with the servers.
type toolSession struct {
	tools   *tool.Registry
	host    *session // nil without configured servers
	toolset openedToolsets
	ctx     context.Context
	stop    context.CancelFunc
}

func (r *toolSession) close() {
	r.stop()
	if r.host != nil {
		r.host.close()
	}
	_ = r.toolset.Close()
}

// open fills a registry with the built-in toolsets and, when there is a
// configuration, the configured servers' tools.
func (o *toolsOptions) open(cmd *cobra.Command) (*toolSession, error) {
	reg := &tool.Registry{}
	if tel := o.host.g.tel; tel != nil {
		reg.SetTelemetry(*tel)
	}
	r := &toolSession{tools: reg, stop: func() {}}
	if err := knownToolsets(o.toolsets); err != nil {
		return nil, &usageError{cmd: cmd, err: err}
	}
	// No process memory bound for data (--max-memory): it would be this
	// process's RLIMIT_DATA, which the MCP servers it starts inherit.
	dirs, err := workDirs(o.allowDirs)
	if err != nil {
		return nil, &usageError{cmd: cmd, err: err}
	}
	opened, err := openToolsets(cmd.Context(), o.toolsets, dataOptions{maxMemory: -1, dirs: dirs}.toolsetOptions)
	if err != nil {
		return nil, err
	}
	r.toolset = opened
	if err := reg.Add(opened.tools()...); err != nil {
		r.close()
		return nil, err
	}
	r.ctx, r.stop = context.WithTimeout(cmd.Context(), o.host.timeout)
	if _, err := o.host.loadConfig(io.Discard); err == nil || o.host.config != "" {
		s, err := o.host.open(cmd)
		if err != nil {
			r.close()
			return nil, err
		}
		r.host = s
		answerServers(&s.Client, rootsOf(dirs), o.asker)
		// The servers' tools stay in the registry while the command goes
		// on, following their changes.
		if err := s.Sync(r.ctx, reg); err != nil && !o.host.g.quiet {
			fmt.Fprintln(cmd.ErrOrStderr(), "toolwire: warning: some servers are not available:", err)
		}
		s.progress.close()
	}
	return r, nil
}

// runSession is what a run needs: the model and the tools.
type runSession struct {
	*toolSession
	model  model.Model
	search agent.ToolSearch
}

// open opens the model (first, so a missing key is said at once) and the
// tools. Tools that may change things run when --yes, --allow or a
// server's "allow" says so, else when approve says yes; with approve nil
// they are refused.
func (o *agentOptions) open(cmd *cobra.Command, approve func(context.Context, *tool.Call) (bool, error)) (*runSession, error) {
	spec := o.model
	if spec == "" {
		spec = os.Getenv("TOOLWIRE_MODEL")
	}
	if spec == "" {
		return nil, &usageError{cmd: cmd, err: fmt.Errorf("no model: pass --model provider:model or set TOOLWIRE_MODEL, e.g. openai:gpt-4.1, anthropic:claude-sonnet-4-5, ollama:qwen3")}
	}
	search, err := o.search.config(cmd)
	if err != nil {
		return nil, err
	}
	popts := provider.Options{APIKey: o.apiKey, BaseURL: o.baseURL, Telemetry: o.tools.host.g.tel}
	if o.steps != nil {
		popts.Client = &http.Client{Transport: o.steps}
	}
	m, err := provider.Open(spec, popts)
	if err != nil {
		return nil, err
	}
	if o.tools.asker == nil { // nobody to ask: the flags say
		a := &runAsker{yes: o.yes, sampling: o.sampling, model: m, modelName: spec}
		if !o.tools.host.g.quiet {
			a.stderr = cmd.ErrOrStderr()
		}
		o.tools.asker = a
	}
	ts, err := o.tools.open(cmd)
	if err != nil {
		return nil, err
	}
	// Results over the budget are kept behind handles (res_…), which the
	// model reads back or passes to any tool; outermost, so approval and
	// recording see the call as the tool gets it.
	results := &spill.Results{}
	if ts.host != nil {
		cfg := ts.host.Config
		results.BudgetFor = func(c *tool.Call) int64 { return cfg.ResultBudget(c.Tool) }
	}
	if err := results.Install(ts.tools); err != nil {
		ts.close()
		return nil, err
	}
	policy := agent.Policy{Allow: o.allow, Approve: approve}
	if ts.host != nil {
		for _, sc := range ts.host.Config.Servers {
			policy.Allow = append(policy.Allow, sc.Allowed()...)
			policy.Confirm = append(policy.Confirm, sc.Confirmed()...)
		}
	}
	if o.yes {
		policy.Approve = func(context.Context, *tool.Call) (bool, error) { return true, nil }
	}
	ts.tools.Use(agent.Approval(policy))
	return &runSession{toolSession: ts, model: m, search: search}, nil
}

func newRunCmd(g *globalOptions) *cobra.Command {
	o := agentOptions{tools: toolsOptions{host: hostOptions{g: g}}}
	var asJSON bool
	var record string
	cmd := &cobra.Command{
		Use:   "run [flags] TASK|-",
		Short: "Give a model a task, with tools, and print its answer",
		Long: `Run gives a model a task and the tools it may call: the built-in toolsets and
the tools of your configured MCP servers. The model calls tools until it can
answer; the answer streams to stdout as it arrives, while each tool call and
the token usage go to stderr; with --quiet, stdout gets the final answer
alone. With --json, stdout gets the run's events as JSON lines instead
(text, reasoning, tool_start, tool_end, usage, answer), and a failed run
ends with an event of type "error" (message; step: setup, model, tool or
record; turn; tool). The task "-" is read from stdin.

With many tools (beyond 40, or 32 KiB of schemas: --tool-search and its
thresholds), the model is sent a search tool and the tools it finds rather
than every tool's schema.

Run asks nobody: tools that may change things (by their annotations) are
refused unless --yes or --allow lets them run. A server that asks for input
(MCP elicitation) is refused too; with --yes, a form whose required fields
all have defaults is accepted with them, another declined. A server that
asks the model for a completion (MCP sampling) gets one only with
--allow-sampling. The servers are given the working directory and each
--allow-dir as roots. The exit status is 1 when the run fails, 130 when
Ctrl-C stops it.

The model comes from --model or $TOOLWIRE_MODEL, as provider:model; its key
and base URL from the variables its vendor's own SDK reads:
  openai:gpt-4.1                OPENAI_API_KEY, OPENAI_BASE_URL (ends in /v1)
  anthropic:claude-sonnet-4-5   ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL
  gemini:gemini-2.5-pro         GEMINI_API_KEY, GEMINI_BASE_URL
  ollama:qwen3                  OLLAMA_HOST (default http://127.0.0.1:11434)
  deepseek:deepseek-chat        DEEPSEEK_API_KEY
  qwen:qwen-max                 DASHSCOPE_API_KEY
  openai-compat:NAME            OPENAI_COMPAT_BASE_URL (any OpenAI-compatible server)`,
		Example: `  toolwire run -m openai:gpt-4.1 "How many days from 2024-02-03 to 2026-11-24?"
  toolwire run -m ollama:qwen3 --json "What time is it in Tokyo?" | jq .
  cat task.txt | toolwire run -q -m openai:gpt-4.1 - > answer.txt`,
		Args: withUsage(func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return fmt.Errorf("run takes the task as one argument (quote it, or give - to read it from stdin), got %d", len(args))
			}
			return nil
		}),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
			steps := &runSteps{next: http.DefaultTransport}
			o.steps = steps
			if asJSON {
				defer func() {
					if err != nil {
						writeErrorEvent(stdout, steps.errorEvent(err))
					}
				}()
			}
			task, err := readTask(args[0], cmd.InOrStdin())
			if err != nil {
				return err
			}
			r, err := o.open(cmd, nil) // nobody to ask
			if err != nil {
				return err
			}
			defer r.close()
			rec := &workflow.Recorder{Task: task}
			if record != "" {
				r.tools.Use(rec.Middleware())
			}
			a := &agent.Agent{Name: "toolwire", Model: r.model, Tools: r.tools, System: o.system, MaxTurns: o.maxTurns, ToolSearch: r.search}
			if g.tel != nil {
				a.Telemetry = *g.tel
			}
			var printer *runPrinter
			if asJSON {
				enc := json.NewEncoder(stdout)
				var mu sync.Mutex
				a.OnEvent = func(e agent.Event) {
					steps.event(e)
					mu.Lock()
					defer mu.Unlock()
					_ = enc.Encode(e)
				}
			} else {
				printer = &runPrinter{out: stdout, err: stderr, quiet: g.quiet, steps: steps}
				a.OnEvent = func(e agent.Event) {
					steps.event(e)
					printer.event(e)
				}
			}
			res, err := a.Run(r.ctx, []model.Message{{Role: model.RoleUser, Text: task}})
			if printer != nil {
				printer.finish(res)
			}
			if err == nil && record != "" {
				steps.recording()
				err = saveRecording(cmd, rec, record)
			}
			return err
		},
	}
	o.flags(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the run's events as JSON lines on stdout")
	cmd.Flags().StringVar(&record, "record", "", "write the run's tool calls as a workflow to this file, to replay with toolwire workflow run")
	return cmd
}

// saveRecording writes what rec recorded as a workflow file.
func saveRecording(cmd *cobra.Command, rec *workflow.Recorder, path string) error {
	if rec.Len() == 0 {
		return fmt.Errorf("no tool call succeeded, so there is no workflow to write to %s", path)
	}
	wf := rec.Workflow(strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)))
	if err := wf.Save(path); err != nil {
		return err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "toolwire: wrote %s: %s, %s, %s (toolwire workflow run %s)\n", path, plural(len(wf.Nodes), "node"), plural(len(wf.Edges), "edge"), plural(len(wf.Inputs), "input"), path)
	return nil
}

// runPrinter shows a run as it happens: the answer on out, tool calls and
// usage on err.
type runPrinter struct {
	out, err io.Writer
	// quiet prints the final answer alone, at the end: no narration
	// before tool calls, nothing on err.
	quiet   bool
	steps   *runSteps
	mu      sync.Mutex
	midLine bool // the answer printed so far does not end a line
}

func (p *runPrinter) event(e agent.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch e.Type {
	case agent.EventText:
		if p.quiet { // the final answer alone, printed by finish
			return
		}
		fmt.Fprint(p.out, e.Text)
		p.midLine = !strings.HasSuffix(e.Text, "\n")
	case agent.EventToolStart:
		if !p.quiet {
			p.endLine()
			fmt.Fprintf(p.err, "toolwire: → %s %s\n", e.Tool, shorten(string(e.Args), 120))
		}
	case agent.EventProgress:
		// A running tool's progress: a task's status, for a tool the
		// server runs as a task.
		if !p.quiet && e.Text != "" {
			p.endLine()
			fmt.Fprintf(p.err, "toolwire: … %s: %s\n", e.Tool, shorten(e.Text, 120))
		}
	case agent.EventToolEnd:
		if p.quiet {
			return
		}
		if e.IsError {
			fmt.Fprintf(p.err, "toolwire: ✗ %s failed after %v: %s\n", e.Tool, e.Duration.Round(time.Millisecond), shorten(e.Err, 200))
		} else {
			fmt.Fprintf(p.err, "toolwire: ✓ %s in %v, %d bytes to the model\n", e.Tool, e.Duration.Round(time.Millisecond), e.ResultSize)
		}
	}
}

// endLine ends the answer's line before a line of stderr.
func (p *runPrinter) endLine() {
	if p.midLine {
		fmt.Fprintln(p.out)
		p.midLine = false
	}
}

// finish ends the answer and reports the usage.
func (p *runPrinter) finish(res *agent.Result) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.endLine()
	if res == nil {
		return
	}
	if p.quiet {
		if res.Answer != "" {
			fmt.Fprint(p.out, res.Answer)
			if !strings.HasSuffix(res.Answer, "\n") {
				fmt.Fprintln(p.out)
			}
		}
		return
	}
	u := res.Usage
	fmt.Fprintf(p.err, "toolwire: %s, %s; tokens: %d in (%d cached), %d out (%d reasoning)\n",
		p.steps.requests(), plural(res.ToolCalls, "tool call"), u.InputTokens, u.CachedTokens, u.OutputTokens, u.ReasoningTokens)
}

// shorten cuts s to n bytes at most, on one line.
func shorten(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}
