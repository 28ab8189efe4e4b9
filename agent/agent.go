// Package agent runs the function-calling loop: the conversation and the
// tools' schemas go to a model; each tool call it asks for runs through a
// tool.Registry (so in-process tools and MCP servers' tools behave alike,
// and the registry's middleware sees every call); the results go back
// paired with their calls; and so on until the model answers without
// calls.
//
// Errors are data for the model: invalid arguments, unknown tools, a
// tool's error or panic, a timeout each become a tool result that says
// what was wrong, so the model can repair its call. A tool that keeps
// failing, a fatal error (tool.ErrFatal), the context ending or the
// model's own failure end the run.
package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/toolwire/toolwire/model"
	"github.com/toolwire/toolwire/telemetry"
	"github.com/toolwire/toolwire/tool"
)

// Defaults of an Agent's bounds.
const (
	DefaultMaxTurns    = 25
	DefaultMaxFailures = 3
	DefaultParallel    = 8
)

// Agent runs conversations with a model and tools. Set its fields, then
// call Run; an Agent may run several conversations at once.
type Agent struct {
	Model model.Model
	// Name names the agent in telemetry (gen_ai.agent.name, and the span
	// "invoke_agent {Name}"); it may be empty.
	Name string
	// Telemetry says where the run's invoke_agent span goes (see
	// telemetry.Config; the zero value uses otel's global provider). The
	// model's chat spans and the registry's execute_tool spans are theirs:
	// see model.Instrument and tool.Registry.SetTelemetry.
	Telemetry telemetry.Config
	// Tools are the tools the model may call. Nil means none.
	Tools *tool.Registry
	// System is the system prompt.
	System string
	// MaxTurns bounds the model requests of one Run (default
	// DefaultMaxTurns).
	MaxTurns int
	// MaxFailures bounds the failed calls of one tool in a row (default
	// DefaultMaxFailures): one more ends the run, as a model that cannot
	// repair its call would go on forever.
	MaxFailures int
	// Parallel bounds the calls of one turn that run at once (default
	// DefaultParallel). Calls run at once only when their tools say they
	// may (read-only or idempotent, and not Exclusive).
	Parallel int
	// Final names tools whose successful result is the answer: the run
	// ends with it, without asking the model again.
	Final []string
	// Elicit, when set, asks the user for input a tool asks for
	// (tool.Elicit) during call: interactive use. With the registry's
	// AskMissing, it is also asked for required arguments the model left
	// out, and the call is made again with them. Without it, tool.Elicit
	// fails with errors.ErrUnsupported, and the model gets the arguments
	// error and may repair the call itself.
	Elicit func(ctx context.Context, call model.ToolCall, e *tool.Elicitation) (*tool.ElicitResult, error)
	// Sample, when set, answers a tool that asks for a completion
	// (tool.Sample) during call; without it, tool.Sample fails with
	// errors.ErrUnsupported.
	Sample func(ctx context.Context, call model.ToolCall, s *tool.Sampling) (*tool.SamplingResult, error)
	// MaxTokens bounds each answer (0: the adapter's default).
	MaxTokens int
	// NoStream asks the model for each answer whole rather than streamed
	// (the default): less work per request, but nothing to show before
	// the answer is complete. The answer's reasoning and text still reach
	// OnEvent, as one EventReasoning and one EventText each.
	NoStream bool
	// ToolSearch says when and how the model searches the tools rather
	// than being sent them all (by default: beyond 40 tools or 32 KiB of
	// schemas).
	ToolSearch ToolSearch
	// OnEvent receives the run's events as they happen, on the goroutine
	// that produced them (tool events of a turn may come from several at
	// once), the progress (tool.Progress) and log messages (tool.Log) of
	// the tools it calls included. It must not block for long.
	OnEvent func(Event)
}

// Exclusive is the key of a tool's Info.Meta that, set to true, keeps the
// agent from running the tool at the same time as any other call.
const Exclusive = "toolwire/exclusive"

// Result is what a run produced.
type Result struct {
	// Answer is the model's final text (or a Final tool's result).
	Answer string
	// Messages is the conversation, the history given to Run included:
	// pass it to the next Run to go on.
	Messages []model.Message
	// Usage adds up the usage of every model request; Turns has each.
	Usage model.Usage
	Turns []model.Usage
	// ToolCalls counts the calls made.
	ToolCalls int
}

// Run sends history (ending with the user's message) to the model and
// loops until the model answers without tool calls. The Result holds the
// conversation so far even when an error ends the run.
func (a *Agent) Run(ctx context.Context, history []model.Message) (res *Result, err error) {
	ctx, span := a.startRun(ctx)
	defer func() { endRun(span, res, err) }()
	res = &Result{Messages: slices.Clone(history)}
	failures := map[string]int{}
	maxTurns := orDefault(a.MaxTurns, DefaultMaxTurns)
	search := a.newSearchRun(history)
	if search != nil {
		ctx = context.WithValue(ctx, searchKey{}, search)
	}
	for turn := 0; ; turn++ {
		if turn >= maxTurns {
			return res, fmt.Errorf("agent: stopped after %d model requests without a final answer (raise MaxTurns, --max-turns, if the task needs more)", maxTurns)
		}
		req := &model.Request{System: a.System, Messages: res.Messages, Tools: a.offered(search), MaxTokens: a.MaxTokens}
		resp, err := a.generate(ctx, req)
		if err != nil {
			return res, fmt.Errorf("agent: turn %d: %w", turn+1, err)
		}
		res.Turns = append(res.Turns, resp.Usage)
		res.Usage = res.Usage.Add(resp.Usage)
		a.emit(Event{Type: EventUsage, Turn: turn + 1, Usage: resp.Usage})
		res.Messages = append(res.Messages, resp.Message)
		if len(resp.Message.ToolCalls) == 0 {
			res.Answer = resp.Message.Text
			if resp.StopReason == model.StopLength {
				return res, fmt.Errorf("agent: the answer was cut off by the token limit (raise MaxTokens)")
			}
			a.emit(Event{Type: EventAnswer, Text: res.Answer})
			return res, nil
		}
		results, final, err := a.runCalls(ctx, resp.Message.ToolCalls, failures)
		res.ToolCalls += len(resp.Message.ToolCalls)
		res.Messages = append(res.Messages, model.Message{Role: model.RoleTool, ToolResults: results})
		if err != nil {
			return res, err
		}
		if final != nil {
			res.Answer = final.Text
			a.emit(Event{Type: EventAnswer, Text: res.Answer})
			return res, nil
		}
	}
}

func orDefault(v, d int) int {
	if v > 0 {
		return v
	}
	return d
}

func (a *Agent) emit(e Event) {
	if a.OnEvent != nil {
		a.OnEvent(e)
	}
}

// generate asks the model for the next answer, streamed unless NoStream
// says otherwise.
func (a *Agent) generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	if !a.NoStream {
		return a.Model.Generate(ctx, req, a.onDelta)
	}
	resp, err := a.Model.Generate(ctx, req, nil)
	if err != nil || a.OnEvent == nil {
		return resp, err
	}
	var reasoning strings.Builder
	for _, r := range resp.Message.Reasoning {
		reasoning.WriteString(r.Text)
	}
	for _, d := range []model.Delta{{Kind: model.DeltaReasoning, Text: reasoning.String()}, {Kind: model.DeltaText, Text: resp.Message.Text}} {
		if d.Text != "" {
			a.onDelta(d)
		}
	}
	return resp, nil
}

func (a *Agent) onDelta(d model.Delta) {
	if a.OnEvent == nil {
		return
	}
	t := EventText
	if d.Kind == model.DeltaReasoning {
		t = EventReasoning
	}
	a.OnEvent(Event{Type: t, Text: d.Text})
}

// toolSpecs describes the registry's tools to the model, as their Info
// says: injected parameters are not in the input schema.
func (a *Agent) toolSpecs() []model.ToolSpec {
	if a.Tools == nil {
		return nil
	}
	tools := a.Tools.Tools()
	specs := make([]model.ToolSpec, len(tools))
	for i, t := range tools {
		info := t.Info()
		specs[i] = model.ToolSpec{Name: info.Name, Description: info.Description, Parameters: info.InputSchema}
	}
	return specs
}

// parallelSafe reports whether a tool may run at the same time as others.
func (a *Agent) parallelSafe(name string) bool {
	if a.Tools == nil {
		return false
	}
	t, ok := a.Tools.Lookup(name)
	if !ok {
		return true // an error result, made at once
	}
	info := t.Info()
	if ex, _ := info.Meta[Exclusive].(bool); ex {
		return false
	}
	an := info.Annotations
	return an != nil && (isTrue(an.ReadOnlyHint) || isTrue(an.IdempotentHint))
}

func isTrue(b *bool) bool { return b != nil && *b }

// runCalls runs the calls of one turn and returns their results in the
// model's order. Consecutive calls that may run at once do; the others
// run alone, in order. A fatal error ends the turn (results of calls not
// run say so). final is the result of a Final tool, if one succeeded.
func (a *Agent) runCalls(ctx context.Context, calls []model.ToolCall, failures map[string]int) ([]model.ToolResult, *model.ToolResult, error) {
	results := make([]model.ToolResult, len(calls))
	errs := make([]error, len(calls))
	var sem chan struct{} // made for the first calls that run at once
	for i := 0; i < len(calls); {
		j := i + 1
		if len(calls) > 1 && a.parallelSafe(calls[i].Name) {
			for j < len(calls) && a.parallelSafe(calls[j].Name) {
				j++
			}
		}
		var wg sync.WaitGroup
		if j == i+1 {
			// One call: on this goroutine, whose stack has grown already.
			results[i], errs[i] = a.runCall(ctx, calls[i])
		} else if sem == nil {
			sem = make(chan struct{}, orDefault(a.Parallel, DefaultParallel))
		}
		for k := i; k < j && j > i+1; k++ {
			sem <- struct{}{}
			wg.Add(1)
			go func() {
				defer func() { <-sem; wg.Done() }()
				results[k], errs[k] = a.runCall(ctx, calls[k])
			}()
		}
		wg.Wait()
		for k := i; k < j; k++ {
			if errs[k] != nil {
				for m := j; m < len(calls); m++ {
					results[m] = model.ToolResult{CallID: calls[m].ID, Name: calls[m].Name, Text: "not run: the run stopped", IsError: true}
				}
				return results, nil, errs[k]
			}
		}
		i = j
	}
	var final *model.ToolResult
	for k, r := range results {
		name := calls[k].Name
		if r.IsError {
			failures[name]++
			if failures[name] > orDefault(a.MaxFailures, DefaultMaxFailures) {
				return results, nil, fmt.Errorf("agent: tool %s failed %d times in a row; the last time: %s", name, failures[name], r.Text)
			}
			continue
		}
		failures[name] = 0
		if final == nil && slices.Contains(a.Final, name) {
			final = &results[k]
		}
	}
	return results, final, nil
}

// runCall runs one call and makes its result. Only a fatal error is
// returned: everything else is a result the model reads.
func (a *Agent) runCall(ctx context.Context, call model.ToolCall) (model.ToolResult, error) {
	start := time.Now()
	a.emit(Event{Type: EventToolStart, CallID: call.ID, Tool: call.Name, Args: call.Arguments})
	if a.OnEvent != nil || a.Elicit != nil || a.Sample != nil {
		ctx = tool.WithClient(ctx, &callClient{a: a, call: call})
	}
	if trace.SpanFromContext(ctx).IsRecording() {
		ctx = tool.WithCallID(ctx, call.ID) // for the execute_tool span
	}
	res, refs, searched := searchRunOf(ctx).intercept(ctx, call)
	var err error
	if !searched {
		res, err = a.call(ctx, call)
	}
	if err != nil && errors.Is(err, tool.ErrFatal) {
		a.emit(Event{Type: EventToolEnd, CallID: call.ID, Tool: call.Name, Duration: time.Since(start), Err: err.Error(), IsError: true})
		return model.ToolResult{CallID: call.ID, Name: call.Name, Text: err.Error(), IsError: true}, fmt.Errorf("agent: tool %s: %w", call.Name, err)
	}
	if err != nil {
		res = tool.ErrorResult(err)
	}
	v := res.ForModel()
	out := model.ToolResult{CallID: call.ID, Name: call.Name, Text: v.Text, IsError: v.IsError, ToolRefs: refs}
	for _, att := range v.Attachments {
		if att.Type == tool.TypeImage {
			out.Images = append(out.Images, model.Image{MimeType: att.MimeType, Data: att.Data})
		}
	}
	e := Event{Type: EventToolEnd, CallID: call.ID, Tool: call.Name, Duration: time.Since(start), IsError: v.IsError, ResultSize: len(v.Text)}
	if v.IsError {
		e.Err = v.Text
	}
	a.emit(e)
	return out, nil
}

// call makes the call through the registry.
func (a *Agent) call(ctx context.Context, call model.ToolCall) (*tool.Result, error) {
	if call.Invalid != "" {
		return nil, fmt.Errorf("the call of %s was not run: %s; send the call again with its arguments as one JSON object", call.Name, call.Invalid)
	}
	if a.Tools == nil {
		return nil, &tool.UnknownToolError{Name: call.Name}
	}
	return a.Tools.Call(ctx, call.Name, call.Arguments)
}

// callClient is the tool.Client of one call: progress and log messages
// become events, questions go to the agent's Elicit and Sample.
type callClient struct {
	a    *Agent
	call model.ToolCall
}

func (c *callClient) Progress(_ context.Context, progress, total float64, message string) error {
	c.a.emit(Event{Type: EventProgress, CallID: c.call.ID, Tool: c.call.Name, Progress: progress, Total: max(total, 0), Text: message})
	return nil
}

func (c *callClient) Log(_ context.Context, level tool.LogLevel, logger string, data any) error {
	c.a.emit(Event{Type: EventLog, CallID: c.call.ID, Tool: c.call.Name, Level: level, Logger: logger, Data: data})
	return nil
}

func (c *callClient) Elicit(ctx context.Context, e *tool.Elicitation) (*tool.ElicitResult, error) {
	if c.a.Elicit == nil {
		return nil, fmt.Errorf("cannot ask the user for input: %w (the agent has no Elicit)", errors.ErrUnsupported)
	}
	return c.a.Elicit(ctx, c.call, e)
}

func (c *callClient) Sample(ctx context.Context, s *tool.Sampling) (*tool.SamplingResult, error) {
	if c.a.Sample == nil {
		return nil, fmt.Errorf("cannot ask for a completion: %w (the agent has no Sample)", errors.ErrUnsupported)
	}
	return c.a.Sample(ctx, c.call, s)
}
