package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/tool"
)

// taskTool returns a tool that may run as a task of the Tasks extension.
func taskTool(name, description, schema, support string, fn func(ctx context.Context, args json.RawMessage) (*tool.Result, error)) tool.Tool {
	t := handler(name, description, schema, fn)
	info := t.Info()
	info.Execution = &tool.Execution{TaskSupport: support}
	return tool.NewFunc(info, fn)
}

// wait waits d, or until ctx ends.
func wait(ctx context.Context, d time.Duration) error {
	sleep(ctx, d)
	return context.Cause(ctx)
}

// taskTools are the fixtures of the tasks-* scenarios (the Tasks
// extension, SEP-2663).
func taskTools() []tool.Tool {
	return []tool.Tool{
		handler("greet", "Greets someone; never a task", `{"type":"object","properties":{"name":{"type":"string"}}}`,
			func(_ context.Context, args json.RawMessage) (*tool.Result, error) {
				var a struct{ Name string }
				_ = json.Unmarshal(args, &a)
				return tool.Text(fmt.Sprintf("Hello, %s!", a.Name)), nil
			}),
		taskTool("slow_compute", "Sleeps for the seconds given, then answers; a task when it runs long",
			`{"type":"object","properties":{"seconds":{"type":"number"},"label":{"type":"string"}}}`, tool.TaskOptional,
			func(ctx context.Context, args json.RawMessage) (*tool.Result, error) {
				var a struct {
					Seconds float64
					Label   string
				}
				_ = json.Unmarshal(args, &a)
				if err := wait(ctx, time.Duration(a.Seconds*float64(time.Second))); err != nil {
					return nil, err
				}
				return tool.Text(fmt.Sprintf("computed %s after %gs", a.Label, a.Seconds)), nil
			}),
		taskTool("failing_job", "Fails with a tool error after a second; always a task", "", tool.TaskRequired,
			func(ctx context.Context, _ json.RawMessage) (*tool.Result, error) {
				if err := wait(ctx, time.Second); err != nil {
					return nil, err
				}
				return nil, errors.New("the job failed")
			}),
		taskTool("protocol_error_job", "Fails with a protocol error; always a task", "", tool.TaskRequired,
			func(context.Context, json.RawMessage) (*tool.Result, error) {
				return nil, tool.Fatal(errors.New("the job broke down"))
			}),
		taskTool("confirm_delete", "Asks to confirm deleting a file, as a task", `{"type":"object","properties":{"filename":{"type":"string"}}}`, tool.TaskOptional,
			func(ctx context.Context, args json.RawMessage) (*tool.Result, error) {
				var a struct{ Filename string }
				_ = json.Unmarshal(args, &a)
				mcp.StartTask(ctx)
				res, err := tool.Elicit(ctx, &tool.Elicitation{Message: "Delete " + a.Filename + "?",
					Schema: json.RawMessage(`{"type":"object","properties":{"confirm":{"type":"boolean"}},"required":["confirm"]}`)})
				if err != nil {
					return nil, err
				}
				if res.Action != tool.ActionAccept || res.Content["confirm"] != true {
					return tool.Text("kept " + a.Filename), nil
				}
				return tool.Text("deleted " + a.Filename), nil
			}),
		taskTool("multi_input", "Asks two questions at once, as a task", "", tool.TaskOptional,
			func(ctx context.Context, _ json.RawMessage) (*tool.Result, error) {
				mcp.StartTask(ctx)
				var wg sync.WaitGroup
				answers := make([]*tool.ElicitResult, 2)
				errs := make([]error, 2)
				for i := range answers {
					wg.Go(func() {
						answers[i], errs[i] = tool.Elicit(ctx, &tool.Elicitation{Message: fmt.Sprintf("Question %d: your name?", i+1),
							Schema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`)})
					})
				}
				wg.Wait()
				if err := errors.Join(errs...); err != nil {
					return nil, err
				}
				return tool.Text(fmt.Sprintf("got %v and %v", answers[0].Content["name"], answers[1].Content["name"])), nil
			}),
		taskTool("test_tool_with_task", "Asks a name by multi round-trip, then greets as a task", "", tool.TaskRequired,
			func(ctx context.Context, _ json.RawMessage) (*tool.Result, error) {
				res, err := mcp.Elicit(mcp.WithInputKey(ctx, "user_name"), nameQuestion())
				if err != nil {
					return nil, err
				}
				mcp.StartTask(ctx)
				if err := wait(ctx, 200*time.Millisecond); err != nil {
					return nil, err
				}
				return tool.Text(fmt.Sprintf("Hello, %v!", res.Content["name"])), nil
			}),
	}
}
