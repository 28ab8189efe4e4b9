package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/tool"
)

// TestTaskAnswerThroughAnotherServer: two servers share a task store, as
// replicas behind a load balancer do. A task runs on the first and asks a
// question; the client answers it through the second (tasks/update), which
// leaves the answer in the store. The first takes it at the clients'
// polling pace (TaskOptions.PollInterval) while the task waits for input,
// not only when it renews its lease (every Lease/3, 5 s by default).
func TestTaskAnswerThroughAnotherServer(t *testing.T) {
	store := &mcp.MemoryTaskStore{}
	opts := mcp.TaskOptions{Store: store, PollInterval: 100 * time.Millisecond}
	ask := func() tool.Tool {
		return taskTool("ask", tool.TaskOptional, func(ctx context.Context) (*tool.Result, error) {
			if !mcp.StartTask(ctx) {
				return nil, errors.New("not a task")
			}
			res, err := tool.Elicit(ctx, &tool.Elicitation{Message: "name?", Schema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`)})
			if err != nil {
				return nil, err
			}
			return tool.Text(fmt.Sprint("hello ", res.Content["name"])), nil
		})
	}
	running := startHTTP(t, newTaskServer(t, opts, ask()))
	other := startHTTP(t, newTaskServer(t, opts, ask()))
	var task, got mcp.Task
	running.postModern(1, mcp.MethodToolsCall, "ask", withTasks(map[string]any{"name": "ask"})).last(t).decodeResult(t, &task)
	if task.ResultType != mcp.ResultTask {
		t.Fatalf("tools/call ask: %+v, want a task", task)
	}
	get := func() {
		got = mcp.Task{}
		other.postModern(2, mcp.MethodTasksGet, task.TaskID, withTasks(map[string]any{"taskId": task.TaskID})).last(t).decodeResult(t, &got)
	}
	eventually(t, "input_required", func() bool { get(); return got.Status == mcp.TaskInputRequired })
	answered := time.Now()
	if r := other.postModern(3, mcp.MethodTasksUpdate, task.TaskID, withTasks(map[string]any{"taskId": task.TaskID,
		"inputResponses": map[string]any{"elicitation-1": map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}}}})).last(t); r.Error != nil {
		t.Fatalf("tasks/update through the other server: %s", r)
	}
	for {
		get()
		if got.Terminal() || time.Since(answered) > 2*time.Second {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got.Status != mcp.TaskCompleted {
		t.Fatalf("task %s %v after its answer came through another server: %s (%s), want completed within 2 s", task.TaskID, time.Since(answered).Round(time.Millisecond), got.Status, got.StatusMessage)
	}
	if text := resultText(t, &got); text != "hello Ada" {
		t.Errorf("result %q, want hello Ada", text)
	}
	t.Logf("completed %v after the answer", time.Since(answered).Round(time.Millisecond))
}
