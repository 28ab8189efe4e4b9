package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/tool"
)

// Polling of tasks: at the server's pollIntervalMs (this when it gives
// none), never faster than taskPollMin, backing off by half again while
// nothing changes, up to taskPollMax.
const (
	taskPollDefault = time.Second
	taskPollMin     = 50 * time.Millisecond
	taskPollMax     = 10 * time.Second
)

// awaitTask follows the task a tools/call was answered with (the Tasks
// extension) to its result: it polls tasks/get, reports the task's
// statusMessage as the call's progress (tool.Progress), answers its input
// requests with the client's handlers through tasks/update, and cancels
// the task (tasks/cancel) when ctx ends first.
func (s *ClientSession) awaitTask(ctx context.Context, created json.RawMessage) (*CallToolResult, error) {
	var t Task
	if err := json.Unmarshal(created, &t); err != nil || t.TaskID == "" {
		return nil, fmt.Errorf("tools/call: the server answered with a malformed task: %s", clip(created))
	}
	if f := s.client.TaskStarted; f != nil {
		f(t.TaskID)
	}
	return s.followTask(ctx, &t)
}

// AwaitTask follows a task of the Tasks extension that a tools/call of
// this client, or of an earlier run of the program, was answered with (see
// Client.TaskStarted) to its result, as CallTool does: a program that
// kept the task's id resumes it after a restart. The server answers for
// the caller that created the task only.
func (s *ClientSession) AwaitTask(ctx context.Context, taskID string) (*CallToolResult, error) {
	if !s.modern {
		return s.legacyResult(ctx, taskID, 0)
	}
	var t Task
	if err := s.Call(ctx, MethodTasksGet, &TaskParams{TaskID: taskID}, &t); err != nil {
		return nil, fmt.Errorf("task %s: %w", taskID, err)
	}
	return s.followTask(ctx, &t)
}

// followTask follows task t to its result.
func (s *ClientSession) followTask(ctx context.Context, first *Task) (*CallToolResult, error) {
	t := *first
	id := t.TaskID
	answered := map[string]bool{}
	lastMessage, lastStatus := "", ""
	interval := pollInterval(t.PollIntervalMs, 0)
	if t.Terminal() {
		// A CreateTaskResult carries no result: tasks/get has it.
		if err := s.Call(ctx, MethodTasksGet, &TaskParams{TaskID: id}, &t); err != nil {
			return nil, s.taskError(ctx, id, err)
		}
	}
	for {
		if t.Status != lastStatus || t.StatusMessage != lastMessage {
			lastStatus, lastMessage = t.Status, t.StatusMessage
			interval = pollInterval(t.PollIntervalMs, 0)
			msg := t.StatusMessage
			if msg == "" {
				msg = t.Status
			}
			_ = tool.Progress(ctx, 0, 0, msg)
		}
		switch t.Status {
		case TaskCompleted:
			var res CallToolResult
			if err := readCallToolResult(t.Result, &res); err != nil || len(t.Result) == 0 {
				return nil, fmt.Errorf("tools/call: task %s completed with a malformed result: %s", id, clip(t.Result))
			}
			return &res, nil
		case TaskFailed:
			if t.Error == nil {
				return nil, fmt.Errorf("tools/call: task %s failed: %s", id, t.StatusMessage)
			}
			return nil, t.Error
		case TaskCancelled:
			return nil, fmt.Errorf("tools/call: the server cancelled task %s: %s", id, t.StatusMessage)
		case TaskInputRequired:
			pending := map[string]InputRequest{}
			for k, r := range t.InputRequests {
				if !answered[k] {
					pending[k] = r
				}
			}
			if len(pending) > 0 {
				answers, err := s.answerInputs(ctx, pending)
				if err != nil {
					s.cancelTask(id)
					return nil, fmt.Errorf("tools/call: task %s: %w", id, err)
				}
				if err := s.Call(ctx, MethodTasksUpdate, &TaskParams{TaskID: id, Params: Params{InputResponses: answers}}, nil); err != nil {
					return nil, s.taskError(ctx, id, err)
				}
				for k := range pending {
					answered[k] = true
				}
				interval = 0 // look again at once
			}
		}
		select {
		case <-time.After(interval):
		case <-ctx.Done():
			s.cancelTask(id)
			return nil, fmt.Errorf("tools/call: task %s: %w (cancelled on the server)", id, context.Cause(ctx))
		}
		var next Task
		if err := s.Call(ctx, MethodTasksGet, &TaskParams{TaskID: id}, &next); err != nil {
			return nil, s.taskError(ctx, id, err)
		}
		if next.Status == lastStatus && next.StatusMessage == lastMessage {
			interval = pollInterval(next.PollIntervalMs, interval)
		}
		t = next
	}
}

// pollInterval is the wait before the next poll: the server's interval
// (ms, 0 for none) at first, then half again the last wait, bounded.
func pollInterval(serverMs int64, last time.Duration) time.Duration {
	base := taskPollDefault
	if serverMs > 0 {
		base = time.Duration(serverMs) * time.Millisecond
	}
	d := max(base, last+last/2, taskPollMin)
	if d > taskPollMax && base <= taskPollMax {
		d = taskPollMax
	}
	return d
}

// taskError is the error of a failed tasks/* request; the task is
// cancelled when ctx ended.
func (s *ClientSession) taskError(ctx context.Context, id string, err error) error {
	if ctx.Err() != nil {
		s.cancelTask(id)
		return fmt.Errorf("tools/call: task %s: %w (cancelled on the server)", id, context.Cause(ctx))
	}
	return fmt.Errorf("tools/call: following task %s: %w", id, err)
}

// cancelTask asks the server to cancel a task, on a context of its own.
func (s *ClientSession) cancelTask(id string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Call(ctx, MethodTasksCancel, &TaskParams{TaskID: id}, nil); err != nil {
		s.client.logger().Debug("mcp: cancelling a task", "task", id, "err", err)
	}
}

// clip shortens a result for an error message.
func clip(b []byte) string {
	if len(b) > 200 {
		return string(b[:197]) + "..."
	}
	return string(b)
}

// 2025-11-25's tasks: the client asks for one with a task member in
// tools/call, and gets the result with tasks/result.

// legacyTaskParams are tools/call params that ask for a task.
type legacyTaskParams struct {
	CallToolParams
	Task struct{} `json:"task"`
}

// legacyTask is a task as a 2025-11-25 server describes it.
type legacyTask struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage"`
	PollInterval  int64  `json:"pollInterval"`
}

// legacyTaskTool reports whether a legacy server runs the tool only as a
// 2025-11-25 task (execution.taskSupport "required", with task support
// for tools/call declared).
func (s *ClientSession) legacyTaskTool(ctx context.Context, name string) bool {
	if len(s.caps.Tasks) == 0 || !taskCalls(s.caps.Tasks) {
		return false
	}
	s.mu.Lock()
	info, ok := s.toolCache[name]
	listed := s.toolCache != nil
	s.mu.Unlock()
	if !listed {
		if _, err := s.ListTools(ctx); err != nil {
			return false
		}
		s.mu.Lock()
		info, ok = s.toolCache[name]
		s.mu.Unlock()
	}
	return ok && info.Execution != nil && info.Execution.TaskSupport == tool.TaskRequired
}

// taskCalls reports whether a legacy server's tasks capability declares
// task support for tools/call. A function of its own, so that a session
// whose server declares no tasks does not allocate the capability's
// struct on each call.
func taskCalls(tasks json.RawMessage) bool {
	var caps struct {
		Requests struct {
			Tools struct {
				Call *struct{} `json:"call"`
			} `json:"tools"`
		} `json:"requests"`
	}
	return json.Unmarshal(tasks, &caps) == nil && caps.Requests.Tools.Call != nil
}

// callLegacyTask calls a tool as a 2025-11-25 task: it reports the
// task's statusMessage as progress while tasks/result waits for the
// result (the server sends its questions meanwhile, which the client's
// handlers answer), and cancels the task when ctx ends first.
func (s *ClientSession) callLegacyTask(ctx context.Context, p *CallToolParams) (*CallToolResult, error) {
	var created struct {
		Task legacyTask `json:"task"`
	}
	if err := s.Call(ctx, MethodToolsCall, &legacyTaskParams{CallToolParams: *p}, &created); err != nil {
		return nil, err
	}
	id := created.Task.TaskID
	if id == "" {
		return nil, fmt.Errorf("tools/call %s: the server answered a task request without a task", p.Name)
	}
	if f := s.client.TaskStarted; f != nil {
		f(id)
	}
	return s.legacyResult(ctx, id, created.Task.PollInterval)
}

// legacyResult waits for the result of a 2025-11-25 task, showing its
// statusMessage as progress.
func (s *ClientSession) legacyResult(ctx context.Context, id string, pollMs int64) (*CallToolResult, error) {
	pollCtx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		last := ""
		interval := pollInterval(pollMs, 0)
		for {
			select {
			case <-time.After(interval):
			case <-pollCtx.Done():
				return
			}
			var t legacyTask
			if err := s.Call(pollCtx, MethodTasksGet, &TaskParams{TaskID: id}, &t); err != nil {
				return
			}
			if t.StatusMessage != last && t.StatusMessage != "" {
				last = t.StatusMessage
				_ = tool.Progress(ctx, 0, 0, last)
			}
		}
	}()
	var res CallToolResult
	resultCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	if _, ok := ctx.Deadline(); !ok {
		// tasks/result waits for the task: not the per-request timeout.
		var c context.CancelFunc
		resultCtx, c = context.WithDeadline(resultCtx, time.Now().Add(24*time.Hour))
		defer c()
	}
	err := s.Call(resultCtx, MethodTasksResult, &TaskParams{TaskID: id}, &res)
	if err != nil {
		if ctx.Err() != nil {
			s.cancelTask(id)
			return nil, fmt.Errorf("task %s: %w (cancelled on the server)", id, context.Cause(ctx))
		}
		var rpcErr *jsonrpc.Error
		if errors.As(err, &rpcErr) {
			return nil, err
		}
		return nil, fmt.Errorf("waiting for task %s: %w", id, err)
	}
	return &res, nil
}
