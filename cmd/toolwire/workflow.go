package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/toolwire/toolwire/workflow"
)

func newWorkflowCmd(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "workflow",
		Short: "Replay, check and draw workflows recorded from agent runs",
		Long: `A workflow is the tool calls of an agent's run, written as a DAG that runs
again without a model: one node per call with every parameter of its tool,
edges where a call used an earlier call's output (a table handle, a field of
its result), and inputs for the values the task named (a file path, a date).

Record one with toolwire run --record FILE, or /save FILE in toolwire chat.`,
		Args: withUsage(cobra.NoArgs),
	}
	cmd.AddCommand(newWorkflowRunCmd(g), newWorkflowValidateCmd(g), newWorkflowShowCmd())
	return cmd
}

// setValues reads --set NAME=VALUE pairs.
func setValues(pairs []string) (map[string]any, error) {
	out := map[string]any{}
	for _, p := range pairs {
		name, value, ok := strings.Cut(p, "=")
		if !ok || name == "" {
			return nil, fmt.Errorf("--set %q: write NAME=VALUE", p)
		}
		out[name] = value
	}
	return out, nil
}

// loadChecked reads a workflow and the --set values, opens the tools and
// checks the workflow against them.
func loadChecked(cmd *cobra.Command, o *toolsOptions, path string, sets []string) (*workflow.Workflow, map[string]any, *toolSession, error) {
	inputs, err := setValues(sets)
	if err != nil {
		return nil, nil, nil, &usageError{cmd: cmd, err: err}
	}
	wf, err := workflow.Load(path)
	if err != nil {
		return nil, nil, nil, err
	}
	ts, err := o.open(cmd)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := wf.Check(ts.tools, inputs); err != nil {
		ts.close()
		return nil, nil, nil, fmt.Errorf("%s does not fit the tools: %w", path, err)
	}
	return wf, inputs, ts, nil
}

func exactlyOneFile(cmd *cobra.Command, args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("%s takes one workflow file, got %d arguments", cmd.Name(), len(args))
	}
	return nil
}

func newWorkflowRunCmd(g *globalOptions) *cobra.Command {
	o := toolsOptions{host: hostOptions{g: g}, withData: true}
	var sets []string
	var asJSON bool
	var parallel int
	cmd := &cobra.Command{
		Use:   "run [flags] FILE",
		Short: "Run a workflow with no model",
		Long: `Run runs a workflow's nodes through the same tools an agent uses (the built-in
toolsets and the configured MCP servers), with no model: each node when the
nodes it takes outputs from are done, independent nodes at once. Every
node's arguments go through the argument pipeline (defaults, injected
parameters, validation). A failed node stops the nodes that depend on it,
and only them; the report names each failed node, its tool and the error,
and the exit status is 1.

--set NAME=VALUE gives an input another value than the recorded one. Inputs
are named NODE.PARAMETER after the parameter they feed (workflow show lists
them); an input of a workflow recorded before that naming is reached by the
NODE.PARAMETER it feeds too. --allow-dir lets the data toolset reach files
outside the working directory.`,
		Example: `  toolwire workflow run clean.json --set load_csv.path=other.csv
  toolwire workflow run clean.json --json | jq .`,
		Args: withUsage(exactlyOneFile),
		RunE: func(cmd *cobra.Command, args []string) error {
			wf, inputs, ts, err := loadChecked(cmd, &o, args[0], sets)
			if err != nil {
				return err
			}
			defer ts.close()
			stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
			r := &workflow.Runner{Tools: ts.tools, Parallel: parallel}
			var mu sync.Mutex
			if asJSON {
				enc := json.NewEncoder(stdout)
				r.OnEvent = func(e workflow.NodeEvent) {
					mu.Lock()
					defer mu.Unlock()
					_ = enc.Encode(e)
				}
			} else if !g.quiet {
				r.OnEvent = func(e workflow.NodeEvent) {
					mu.Lock()
					defer mu.Unlock()
					printNodeEvent(stderr, e)
				}
			}
			rep, err := r.Run(ts.ctx, wf, inputs)
			if err == nil && !asJSON && len(rep.Nodes) > 0 {
				fmt.Fprintln(stdout, rep.Nodes[len(rep.Nodes)-1].Output)
			}
			return err
		},
	}
	o.flags(cmd)
	f := cmd.Flags()
	f.StringArrayVar(&sets, "set", nil, "give an input a value: NAME=VALUE (repeatable)")
	f.BoolVar(&asJSON, "json", false, "print each node's events as JSON lines on stdout")
	f.IntVar(&parallel, "parallel", workflow.DefaultParallel, "most nodes to run at once")
	return cmd
}

// printNodeEvent shows a node's progress on stderr.
func printNodeEvent(w io.Writer, e workflow.NodeEvent) {
	switch e.Status {
	case workflow.StatusStarted:
		fmt.Fprintf(w, "toolwire: → %s (%s)\n", e.Node, e.Tool)
	case workflow.StatusOK:
		fmt.Fprintf(w, "toolwire: ✓ %s in %v: %s\n", e.Node, e.Duration.Round(time.Millisecond), shorten(e.Output, 100))
	case workflow.StatusFailed:
		fmt.Fprintf(w, "toolwire: ✗ %s (%s) failed: %s\n", e.Node, e.Tool, shorten(e.Error, 200))
	case workflow.StatusSkipped:
		fmt.Fprintf(w, "toolwire: - %s %s\n", e.Node, e.Error)
	}
}

func newWorkflowValidateCmd(g *globalOptions) *cobra.Command {
	o := toolsOptions{host: hostOptions{g: g}, withData: true}
	var sets []string
	cmd := &cobra.Command{
		Use:   "validate [flags] FILE",
		Short: "Check a workflow against the tools it would run with",
		Long: `Validate reads a workflow and checks it against the tools: unknown tools or
servers, parameters that no longer match a tool's schema, cycles, edges that
lead nowhere or take what their node's output does not have (by the tool's
output schema, or the recorded output), and inputs without a value. Each
problem names its node.`,
		Args: withUsage(exactlyOneFile),
		RunE: func(cmd *cobra.Command, args []string) error {
			wf, _, ts, err := loadChecked(cmd, &o, args[0], sets)
			if err != nil {
				return err
			}
			defer ts.close()
			fmt.Fprintf(cmd.OutOrStdout(), "%s: %d nodes, %d edges, %d inputs: fits the tools\n", args[0], len(wf.Nodes), len(wf.Edges), len(wf.Inputs))
			return nil
		},
	}
	o.flags(cmd)
	cmd.Flags().StringArrayVar(&sets, "set", nil, "give an input a value: NAME=VALUE (repeatable)")
	return cmd
}

func newWorkflowShowCmd() *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "show [--format mermaid|dot|text] FILE",
		Short: "Draw a workflow's DAG",
		Long: `Show draws a workflow: as text (the default), each input with its type, its
value and the parameters it feeds (NODE.PARAMETER, the name --set takes),
then the nodes in an order they can run with what feeds each parameter; or
as a Mermaid flowchart or a Graphviz graph.`,
		Args: withUsage(exactlyOneFile),
		RunE: func(cmd *cobra.Command, args []string) error {
			wf, err := workflow.Load(args[0])
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			switch format {
			case "text":
				fmt.Fprint(out, wf.Text())
			case "mermaid":
				fmt.Fprint(out, wf.Mermaid())
			case "dot":
				fmt.Fprint(out, wf.Dot())
			default:
				return &usageError{cmd: cmd, err: fmt.Errorf("unknown format %q: use mermaid, dot or text", format)}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "mermaid, dot or text")
	return cmd
}
