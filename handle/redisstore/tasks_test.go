package redisstore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/toolwire/toolwire/handle/redisstore"
	"github.com/toolwire/toolwire/internal/testredis"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/tool"
)

func newTasks(t *testing.T, addr string) (*redisstore.Tasks, *redis.Client) {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: time.Second, ReadTimeout: time.Second})
	t.Cleanup(func() { c.Close() })
	return &redisstore.Tasks{Client: c}, c
}

// replica serves a server with the tools given on its own HTTP endpoint,
// its tasks in store.
func replica(t *testing.T, store mcp.TaskStore, tools ...tool.Tool) string {
	t.Helper()
	srv := &mcp.Server{Info: mcp.Implementation{Name: "replica", Version: "1"},
		Tasks: mcp.TaskOptions{Store: store, Lease: 600 * time.Millisecond}}
	if err := srv.AddTools(tools...); err != nil {
		t.Fatal(err)
	}
	h := &mcp.HTTPHandler{Server: srv}
	hs := httptest.NewServer(h)
	t.Cleanup(func() { h.Close(); hs.Close() })
	return hs.URL
}

// call posts a modern request declaring the Tasks extension, as the
// caller whose credentials are auth, and returns its result or error.
func call(t *testing.T, url, auth, method, name string, params map[string]any) (json.RawMessage, *struct {
	Code    int
	Message string
}) {
	t.Helper()
	params["_meta"] = map[string]any{mcp.MetaProtocolVersion: mcp.LatestVersion,
		mcp.MetaClientCapabilities: map[string]any{"elicitation": map[string]any{}, "extensions": map[string]any{mcp.ExtensionTasks: map[string]any{}}}}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(mcp.HeaderProtocolVersion, mcp.LatestVersion)
	req.Header.Set(mcp.HeaderMethod, method)
	req.Header.Set(mcp.HeaderName, name)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if i := bytes.LastIndex(b, []byte("data: ")); strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") && i >= 0 {
		b = b[i+len("data: "):]
	}
	var m struct {
		Result json.RawMessage
		Error  *struct {
			Code    int
			Message string
		}
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %s", method, b)
	}
	return m.Result, m.Error
}

func getTask(t *testing.T, url, auth, id string) (*mcp.Task, error) {
	t.Helper()
	res, e := call(t, url, auth, mcp.MethodTasksGet, id, map[string]any{"taskId": id})
	if e != nil {
		return nil, fmt.Errorf("%d %s", e.Code, e.Message)
	}
	var task mcp.Task
	if err := json.Unmarshal(res, &task); err != nil {
		t.Fatal(err)
	}
	return &task, nil
}

func awaitTask(t *testing.T, url, id string, within time.Duration, ok func(*mcp.Task) bool) *mcp.Task {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		task, err := getTask(t, url, "", id)
		if err == nil && ok(task) {
			return task
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s: %+v, %v (not as wanted within %v)", id, task, err, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func startTaskOn(t *testing.T, url, name string) string {
	t.Helper()
	res, e := call(t, url, "", mcp.MethodToolsCall, name, map[string]any{"name": name})
	var task mcp.Task
	if e != nil || json.Unmarshal(res, &task) != nil || task.ResultType != mcp.ResultTask {
		t.Fatalf("tools/call %s: %s %+v", name, res, e)
	}
	return task.TaskID
}

func askTool() tool.Tool {
	return tool.NewFunc(tool.Info{Name: "ask", Execution: &tool.Execution{TaskSupport: tool.TaskRequired}},
		func(ctx context.Context, _ json.RawMessage) (*tool.Result, error) {
			mcp.StartTask(ctx)
			res, err := tool.Elicit(ctx, &tool.Elicitation{Message: "name?", Schema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`)})
			if err != nil {
				return nil, err
			}
			return tool.Text(fmt.Sprint("hello ", res.Content["name"])), nil
		})
}

func blockTool(release <-chan struct{}) tool.Tool {
	return tool.NewFunc(tool.Info{Name: "block", Execution: &tool.Execution{TaskSupport: tool.TaskRequired}},
		func(ctx context.Context, _ json.RawMessage) (*tool.Result, error) {
			mcp.StartTask(ctx)
			select {
			case <-release:
				return tool.Text("released"), nil
			case <-ctx.Done():
				return nil, context.Cause(ctx)
			}
		})
}

// A task one replica runs is read, answered and finished through
// another, for its owner only.
func TestTasksAcrossReplicas(t *testing.T) {
	rs := testredis.Start(t)
	sa, _ := newTasks(t, rs.Addr)
	sb, _ := newTasks(t, rs.Addr)
	a := replica(t, sa, askTool())
	b := replica(t, sb, askTool())
	id := startTaskOn(t, a, "ask")
	task := awaitTask(t, b, id, 5*time.Second, func(t *mcp.Task) bool { return t.Status == mcp.TaskInputRequired })
	if _, ok := task.InputRequests["elicitation-1"]; !ok {
		t.Fatalf("input requests %+v", task.InputRequests)
	}
	if _, err := getTask(t, b, "Bearer someone-else", id); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("another caller read the task: %v", err)
	}
	if _, e := call(t, b, "", mcp.MethodTasksUpdate, id, map[string]any{"taskId": id,
		"inputResponses": map[string]any{"elicitation-1": map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}}}}); e != nil {
		t.Fatal(e)
	}
	task = awaitTask(t, b, id, 5*time.Second, func(t *mcp.Task) bool { return t.Terminal() })
	if task.Status != mcp.TaskCompleted || !strings.Contains(string(task.Result), "hello Ada") {
		t.Errorf("task %+v", task)
	}
}

// A cancellation sent to one replica reaches the task on another.
func TestTasksCancelAcrossReplicas(t *testing.T) {
	rs := testredis.Start(t)
	sa, _ := newTasks(t, rs.Addr)
	sb, _ := newTasks(t, rs.Addr)
	never := make(chan struct{})
	a := replica(t, sa, blockTool(never))
	b := replica(t, sb, blockTool(never))
	id := startTaskOn(t, a, "block")
	if _, e := call(t, b, "", mcp.MethodTasksCancel, id, map[string]any{"taskId": id}); e != nil {
		t.Fatal(e)
	}
	awaitTask(t, b, id, 5*time.Second, func(t *mcp.Task) bool { return t.Status == mcp.TaskCancelled })
}

// A replica that stops renewing its tasks' leases (it died, or lost
// Redis) has them read as failed by the others within the lease.
func TestTasksReplicaDied(t *testing.T) {
	rs := testredis.Start(t)
	sa, ca := newTasks(t, rs.Addr)
	sb, _ := newTasks(t, rs.Addr)
	never := make(chan struct{})
	a := replica(t, sa, blockTool(never))
	b := replica(t, sb, blockTool(never))
	id := startTaskOn(t, a, "block")
	ca.Close() // a is cut off: its renewals fail from now on
	start := time.Now()
	task := awaitTask(t, b, id, 5*time.Second, func(t *mcp.Task) bool { return t.Terminal() })
	if task.Status != mcp.TaskFailed || task.Error == nil || !strings.Contains(task.StatusMessage, "stopped before it ended") {
		t.Errorf("task %+v", task)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("reported failed after %v, lease 600ms", d)
	}
}

// With Redis gone mid-task, tasks/get fails at once with an error that
// says to retry; once Redis is back the task ends, completed or failed,
// instead of hanging.
func TestTasksRedisGone(t *testing.T) {
	rs := testredis.Start(t)
	sa, _ := newTasks(t, rs.Addr)
	sb, _ := newTasks(t, rs.Addr)
	release := make(chan struct{})
	a := replica(t, sa, blockTool(release))
	b := replica(t, sb, blockTool(release))
	id := startTaskOn(t, a, "block")
	rs.Stop()
	start := time.Now()
	_, err := getTask(t, b, "", id)
	if err == nil || !strings.Contains(err.Error(), "task store failed") || !strings.Contains(err.Error(), "retry shortly") {
		t.Errorf("tasks/get with Redis down: %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("tasks/get with Redis down took %v", d)
	}
	close(release) // the task ends while Redis is down: its result is lost
	time.Sleep(100 * time.Millisecond)
	rs.Restart()
	task := awaitTask(t, b, id, 5*time.Second, func(t *mcp.Task) bool { return t.Terminal() })
	if task.Status != mcp.TaskFailed && task.Status != mcp.TaskCompleted {
		t.Errorf("task %+v", task)
	}
}

// The bound counts the tasks of every replica; expired ones make room.
// A forged entry reads as not found.
func TestTasksStoreBound(t *testing.T) {
	rs := testredis.Start(t)
	s, c := newTasks(t, rs.Addr)
	s.MaxTasks = 3
	ctx := context.Background()
	rec := func(id string) *mcp.TaskRecord {
		return &mcp.TaskRecord{Owner: "token:a", Task: mcp.Task{TaskID: id, Status: mcp.TaskWorking}}
	}
	for i := range 3 {
		if err := s.Create(ctx, rec(fmt.Sprint("task_", i)), 100*time.Millisecond); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Create(ctx, rec("task_x"), time.Minute); !errors.Is(err, mcp.ErrTooManyTasks) || !strings.Contains(err.Error(), "3 tasks are kept") {
		t.Fatalf("past the bound: %v", err)
	}
	time.Sleep(150 * time.Millisecond)
	if err := s.Create(ctx, rec("task_y"), time.Minute); err != nil {
		t.Fatalf("after expiry: %v", err)
	}
	if _, err := s.Get(ctx, "token:b", "task_y"); !errors.Is(err, mcp.ErrTaskNotFound) {
		t.Errorf("another owner: %v", err)
	}
	if err := s.Cancel(ctx, "token:b", "task_y"); !errors.Is(err, mcp.ErrTaskNotFound) {
		t.Errorf("another owner's cancel: %v", err)
	}
	c.HSet(ctx, "toolwire:task:task_y", "state", "{not json")
	if _, err := s.Get(ctx, "token:a", "task_y"); !errors.Is(err, mcp.ErrTaskNotFound) || !strings.Contains(err.Error(), "corrupt") {
		t.Errorf("forged entry: %v", err)
	}
}
