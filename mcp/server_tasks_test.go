package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/tool"
)

// tasksCaps are client capabilities that declare the Tasks extension.
func tasksCaps() map[string]any {
	return map[string]any{"elicitation": map[string]any{}, "extensions": map[string]any{mcp.ExtensionTasks: map[string]any{}}}
}

// withTasks returns modern params p that declare the Tasks extension.
func withTasks(p map[string]any) map[string]any {
	return modern(p, mcp.MetaClientCapabilities, tasksCaps())
}

// taskTool is a tool with TaskSupport support that runs fn.
func taskTool(name, support string, fn func(ctx context.Context) (*tool.Result, error)) tool.Tool {
	return tool.NewFunc(tool.Info{Name: name, Execution: &tool.Execution{TaskSupport: support}},
		func(ctx context.Context, _ json.RawMessage) (*tool.Result, error) { return fn(ctx) })
}

// waitTool blocks until release is closed or its context ends.
func waitTool(name, support string, release <-chan struct{}) tool.Tool {
	return taskTool(name, support, func(ctx context.Context) (*tool.Result, error) {
		select {
		case <-release:
			return tool.Text("done " + name), nil
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	})
}

func newTaskServer(t *testing.T, opts mcp.TaskOptions, tools ...tool.Tool) *mcp.Server {
	t.Helper()
	srv := newServer(t, tools...)
	srv.Tasks = opts
	return srv
}

// startTask calls a tool and returns the task it answers with.
func startTask(t *testing.T, c *stdioClient, name string) *mcp.Task {
	t.Helper()
	resp := c.call(mcp.MethodToolsCall, withTasks(map[string]any{"name": name}))
	var task mcp.Task
	resp.decodeResult(t, &task)
	if task.ResultType != mcp.ResultTask || task.TaskID == "" {
		t.Fatalf("tools/call %s: want a task, got %s", name, resp)
	}
	return &task
}

func getTask(t *testing.T, c *stdioClient, id string) *mcp.Task {
	t.Helper()
	resp := c.call(mcp.MethodTasksGet, withTasks(map[string]any{"taskId": id}))
	var task mcp.Task
	resp.decodeResult(t, &task)
	return &task
}

// awaitStatus polls the task until it has status (or any terminal one).
func awaitStatus(t *testing.T, c *stdioClient, id, status string) *mcp.Task {
	t.Helper()
	var task *mcp.Task
	eventually(t, "task "+id+" "+status, func() bool {
		task = getTask(t, c, id)
		return task.Status == status || task.Terminal()
	})
	if task.Status != status {
		t.Fatalf("task %s: status %q (%s), want %q", id, task.Status, task.StatusMessage, status)
	}
	return task
}

func resultText(t *testing.T, task *mcp.Task) string {
	t.Helper()
	var r mcp.CallToolResult
	if err := json.Unmarshal(task.Result, &r); err != nil || len(r.Content) == 0 {
		t.Fatalf("task result %s: %v", task.Result, err)
	}
	return r.Content[0].Text
}

func TestTaskLifecycle(t *testing.T) {
	release := make(chan struct{})
	srv := newTaskServer(t, mcp.TaskOptions{After: 10 * time.Millisecond}, waitTool("slow", tool.TaskOptional, release))
	c := startStdio(t, srv)
	task := startTask(t, c, "slow")
	if task.Status != mcp.TaskWorking || task.TTLMs == nil || *task.TTLMs != mcp.DefaultTaskTTL.Milliseconds() || task.PollIntervalMs != 1000 {
		t.Fatalf("created task: %+v", task)
	}
	if got := getTask(t, c, task.TaskID); got.Status != mcp.TaskWorking || got.ResultType != mcp.ResultComplete {
		t.Fatalf("tasks/get while working: %+v", got)
	}
	close(release)
	done := awaitStatus(t, c, task.TaskID, mcp.TaskCompleted)
	if got := resultText(t, done); got != "done slow" {
		t.Errorf("result %q", got)
	}
}

func TestTaskExtensionDeclared(t *testing.T) {
	srv := newServer(t, echoTool())
	c := startStdio(t, srv)
	var d mcp.DiscoverResult
	c.call(mcp.MethodDiscover, modern(nil)).decodeResult(t, &d)
	if _, ok := d.Capabilities.Extensions[mcp.ExtensionTasks]; ok {
		t.Errorf("a server without task tools declares the extension")
	}
	if err := srv.AddTools(taskTool("job", tool.TaskOptional, func(context.Context) (*tool.Result, error) { return tool.Text("ok"), nil })); err != nil {
		t.Fatal(err)
	}
	c.call(mcp.MethodDiscover, modern(nil)).decodeResult(t, &d)
	if _, ok := d.Capabilities.Extensions[mcp.ExtensionTasks]; !ok {
		t.Errorf("capabilities %+v lack the tasks extension", d.Capabilities)
	}
}

// A client that did not declare the extension on the request never gets a
// task: an optional tool answers with its result, a required one with
// -32021, and the tasks/* methods with -32021.
func TestTaskUndeclaredClient(t *testing.T) {
	release := make(chan struct{})
	close(release)
	srv := newTaskServer(t, mcp.TaskOptions{After: time.Nanosecond},
		taskTool("opt", tool.TaskOptional, func(ctx context.Context) (*tool.Result, error) {
			mcp.StartTask(ctx)
			time.Sleep(20 * time.Millisecond)
			return tool.Text("sync"), nil
		}),
		waitTool("req", tool.TaskRequired, release))
	c := startStdio(t, srv)
	resp := c.call(mcp.MethodToolsCall, modern(map[string]any{"name": "opt"}))
	if text, isErr := toolText(t, resp); text != "sync" || isErr {
		t.Errorf("optional tool without the extension: %s", resp)
	}
	resp = c.call(mcp.MethodToolsCall, modern(map[string]any{"name": "req"}))
	if resp.Error == nil || resp.Error.Code != mcp.CodeMissingRequiredClientCapability || !strings.Contains(string(resp.Error.Data), `"extensions":{"`+mcp.ExtensionTasks+`":{}}`) {
		t.Errorf("required tool without the extension: %s", resp)
	}
	// Declaring the extension in a legacy session's initialize is not
	// declaring it on a request.
	legacy := startStdio(t, srv)
	legacy.initialize(tasksCaps())
	if resp := legacy.call(mcp.MethodToolsCall, map[string]any{"name": "opt"}); strings.Contains(resp.raw, `"taskId"`) {
		t.Errorf("a legacy session got a task: %s", resp)
	}
	task := startTask(t, c, "req")
	for _, m := range []string{mcp.MethodTasksGet, mcp.MethodTasksUpdate, mcp.MethodTasksCancel} {
		resp := c.call(m, modern(map[string]any{"taskId": task.TaskID, "inputResponses": map[string]any{}}))
		if resp.Error == nil || resp.Error.Code != mcp.CodeMissingRequiredClientCapability {
			t.Errorf("%s without the extension: %s", m, resp)
		}
	}
}

// spyStore records the task ids a store is asked about.
type spyStore struct {
	mcp.MemoryTaskStore
	mu    sync.Mutex
	asked []string
}

func (s *spyStore) Get(ctx context.Context, owner, id string) (*mcp.TaskRecord, error) {
	s.mu.Lock()
	s.asked = append(s.asked, id)
	s.mu.Unlock()
	return s.MemoryTaskStore.Get(ctx, owner, id)
}

// Malformed, unknown, expired and another caller's task ids read alike,
// and a malformed one never reaches the store.
func TestTaskUnknownIDs(t *testing.T) {
	now := time.Now()
	var offset atomic.Int64
	store := &spyStore{MemoryTaskStore: mcp.MemoryTaskStore{Now: func() time.Time { return now.Add(time.Duration(offset.Load())) }}}
	release := make(chan struct{})
	defer close(release)
	srv := newTaskServer(t, mcp.TaskOptions{Store: store, TTL: time.Hour}, waitTool("job", tool.TaskRequired, release),
		taskTool("quick", tool.TaskRequired, func(context.Context) (*tool.Result, error) { return tool.Text("ok"), nil }))
	owner := startStdio(t, srv)
	other := startStdio(t, srv)
	expired := startTask(t, owner, "quick").TaskID
	offset.Store(int64(2 * time.Hour)) // past its TTL
	mine := startTask(t, owner, "job").TaskID
	ids := map[string]struct {
		c  *stdioClient
		id string
	}{
		"malformed":       {owner, "not-a-task"},
		"malformed long":  {owner, "task_" + strings.Repeat("A", 500)},
		"wrong alphabet":  {owner, "task_" + strings.Repeat("*", 22)},
		"non-canonical":   {owner, "task_AAAAAAAAAAAAAAAAAAAAAB"},
		"unknown":         {owner, "task_AAAAAAAAAAAAAAAAAAAAAA"},
		"expired":         {owner, expired},
		"foreign":         {other, mine},
		"empty":           {owner, ""},
		"foreign cancel":  {other, mine},
		"foreign updates": {other, mine},
	}
	for name, tc := range ids {
		t.Run(name, func(t *testing.T) {
			for _, m := range []string{mcp.MethodTasksGet, mcp.MethodTasksUpdate, mcp.MethodTasksCancel} {
				resp := tc.c.call(m, withTasks(map[string]any{"taskId": tc.id, "inputResponses": map[string]any{}}))
				want := fmt.Sprintf("Failed to retrieve task: task %q not found (unknown, expired, or not yours); call the tool again", tc.id)
				if len(tc.id) > 64 {
					want = strings.Replace(want, tc.id, tc.id[:61]+"...", 1)
				}
				if resp.Error == nil || resp.Error.Code != jsonrpc.CodeInvalidParams || resp.Error.Message != want {
					t.Errorf("%s %q: %s", m, tc.id, resp)
				}
			}
		})
	}
	// The foreign caller's cancel did not reach the task.
	if got := getTask(t, owner, mine); got.Status != mcp.TaskWorking {
		t.Errorf("after another caller's cancel: %+v", got)
	}
	store.mu.Lock()
	defer store.mu.Unlock()
	for _, id := range store.asked {
		if id != mine && id != expired && id != "task_AAAAAAAAAAAAAAAAAAAAAA" {
			t.Errorf("the store was asked about the malformed id %q", id)
		}
	}
}

func TestTaskInputRequired(t *testing.T) {
	srv := newTaskServer(t, mcp.TaskOptions{}, taskTool("ask", tool.TaskOptional, func(ctx context.Context) (*tool.Result, error) {
		if !mcp.StartTask(ctx) {
			return nil, errors.New("not a task")
		}
		var names []any
		for range 2 {
			res, err := tool.Elicit(ctx, &tool.Elicitation{Message: "name?", Schema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`)})
			if err != nil {
				return nil, err
			}
			names = append(names, res.Content["name"])
		}
		return tool.Text(fmt.Sprint("hello ", names[0], " and ", names[1])), nil
	}))
	c := startStdio(t, srv)
	task := startTask(t, c, "ask")
	got := awaitStatus(t, c, task.TaskID, mcp.TaskInputRequired)
	q, ok := got.InputRequests["elicitation-1"]
	if !ok || q.Method != mcp.MethodElicit || len(got.InputRequests) != 1 {
		t.Fatalf("inputRequests %+v", got.InputRequests)
	}
	// Unknown keys are ignored: the question stays.
	resp := c.call(mcp.MethodTasksUpdate, withTasks(map[string]any{"taskId": task.TaskID, "inputResponses": map[string]any{"nope": map[string]any{"action": "accept"}}}))
	if resp.Error != nil || !strings.Contains(resp.raw, `"resultType":"complete"`) {
		t.Fatalf("tasks/update with an unknown key: %s", resp)
	}
	if got := getTask(t, c, task.TaskID); got.Status != mcp.TaskInputRequired || len(got.InputRequests) != 1 {
		t.Fatalf("after an unknown key: %+v", got)
	}
	// Duplicate keys are refused.
	dup := fmt.Sprintf(`{"jsonrpc":"2.0","id":"dup","method":"tasks/update","params":{"_meta":%s,"taskId":%q,"inputResponses":{"elicitation-1":{"action":"decline"},"elicitation-1":{"action":"accept","content":{"name":"x"}}}}}`,
		mustJSON(t, meta(mcp.MetaClientCapabilities, tasksCaps())), task.TaskID)
	c.send(dup)
	resp, _ = c.await(`"dup"`)
	if resp.Error == nil || resp.Error.Code != jsonrpc.CodeInvalidParams || !strings.Contains(resp.Error.Message, `"elicitation-1" twice`) {
		t.Fatalf("duplicate keys: %s", resp)
	}
	// The answer to a question not asked yet is ignored too.
	answer := func(name string) map[string]any {
		return map[string]any{"action": "accept", "content": map[string]any{"name": name}}
	}
	resp = c.call(mcp.MethodTasksUpdate, withTasks(map[string]any{"taskId": task.TaskID,
		"inputResponses": map[string]any{"elicitation-1": answer("Ada"), "elicitation-2": answer("early")}}))
	if resp.Error != nil {
		t.Fatal(resp)
	}
	eventually(t, "the second question", func() bool {
		_, ok := getTask(t, c, task.TaskID).InputRequests["elicitation-2"]
		return ok
	})
	c.call(mcp.MethodTasksUpdate, withTasks(map[string]any{"taskId": task.TaskID, "inputResponses": map[string]any{"elicitation-2": answer("Grace")}}))
	if got := resultText(t, awaitStatus(t, c, task.TaskID, mcp.TaskCompleted)); got != "hello Ada and Grace" {
		t.Errorf("result %q", got)
	}
}

func TestTaskCancel(t *testing.T) {
	var ended atomic.Value
	// A long lease: the cancellation must reach the task at once, not at
	// the next renewal.
	srv := newTaskServer(t, mcp.TaskOptions{Lease: time.Minute}, taskTool("long", tool.TaskRequired, func(ctx context.Context) (*tool.Result, error) {
		mcp.StartTask(ctx)
		<-ctx.Done()
		ended.Store(context.Cause(ctx))
		return nil, context.Cause(ctx)
	}))
	c := startStdio(t, srv)
	task := startTask(t, c, "long")
	for range 2 { // the second, on a terminal task, is the same ack
		resp := c.call(mcp.MethodTasksCancel, withTasks(map[string]any{"taskId": task.TaskID}))
		if resp.Error != nil || strings.Contains(resp.raw, `"status"`) {
			t.Fatalf("tasks/cancel: %s", resp)
		}
		awaitStatus(t, c, task.TaskID, mcp.TaskCancelled)
	}
	if err, _ := ended.Load().(error); err == nil || !strings.Contains(err.Error(), "cancelled by the client") {
		t.Errorf("the tool's context ended with %v", err)
	}
}

// A cancellation racing the tool's return ends the task either way, once;
// a tool that returns as it becomes a task still answers with the task.
func TestTaskCancelRacingCompletion(t *testing.T) {
	srv := newTaskServer(t, mcp.TaskOptions{}, taskTool("quick", tool.TaskOptional, func(ctx context.Context) (*tool.Result, error) {
		mcp.StartTask(ctx)
		return tool.Text("ok"), nil
	}))
	c := startStdio(t, srv)
	for range 300 {
		task := startTask(t, c, "quick")
		c.call(mcp.MethodTasksCancel, withTasks(map[string]any{"taskId": task.TaskID}))
		var got *mcp.Task
		eventually(t, "a terminal status", func() bool { got = getTask(t, c, task.TaskID); return got.Terminal() })
		switch got.Status {
		case mcp.TaskCompleted:
			if resultText(t, got) != "ok" {
				t.Fatalf("completed without its result: %+v", got)
			}
		case mcp.TaskCancelled:
			if got.Result != nil {
				t.Fatalf("cancelled with a result: %+v", got)
			}
		default:
			t.Fatalf("status %q", got.Status)
		}
	}
}

// Tool errors complete the task with isError; protocol errors fail it.
func TestTaskOutcomes(t *testing.T) {
	srv := newTaskServer(t, mcp.TaskOptions{},
		taskTool("toolerr", tool.TaskRequired, func(context.Context) (*tool.Result, error) { return nil, errors.New("bad input") }),
		taskTool("fatal", tool.TaskRequired, func(context.Context) (*tool.Result, error) {
			return nil, tool.Fatal(errors.New("broken"))
		}))
	c := startStdio(t, srv)
	got := awaitStatus(t, c, startTask(t, c, "toolerr").TaskID, mcp.TaskCompleted)
	if !strings.Contains(string(got.Result), `"isError":true`) || got.Error != nil {
		t.Errorf("tool error: %+v", got)
	}
	got = awaitStatus(t, c, startTask(t, c, "fatal").TaskID, mcp.TaskFailed)
	if got.Error == nil || got.Error.Code != jsonrpc.CodeInternalError || got.Result != nil || !strings.Contains(got.Error.Message, "broken") {
		t.Errorf("protocol error: %+v", got)
	}
}

// The store keeps at most MaxTasks; past it a required tool's call gets
// an error that says so, and tasks nobody polls expire to make room.
func TestTaskBound(t *testing.T) {
	now := time.Now()
	var offset atomic.Int64
	store := &mcp.MemoryTaskStore{Now: func() time.Time { return now.Add(time.Duration(offset.Load())) }}
	srv := newTaskServer(t, mcp.TaskOptions{Store: store, TTL: time.Minute},
		taskTool("quick", tool.TaskRequired, func(context.Context) (*tool.Result, error) { return tool.Text("ok"), nil }))
	c := startStdio(t, srv)
	const window = 200 // within the connection's queue
	for i := 0; i < mcp.DefaultMaxTasks; i += window {
		for j := i; j < i+window; j++ {
			c.sendRequest(fmt.Sprint(100000+j), mcp.MethodToolsCall, withTasks(map[string]any{"name": "quick"}))
		}
		for range window {
			if resp := c.next(); resp.Error != nil || !strings.Contains(resp.raw, `"resultType":"task"`) {
				t.Fatalf("call: %s", resp)
			}
		}
	}
	resp := c.call(mcp.MethodToolsCall, withTasks(map[string]any{"name": "quick"}))
	if resp.Error == nil || !strings.Contains(resp.Error.Message, "too many tasks: 10000 tasks are kept") || !strings.Contains(resp.Error.Message, "retry once some tasks have ended or expired") {
		t.Fatalf("past the bound: %s", resp)
	}
	offset.Store(int64(2 * time.Minute)) // nobody polled: all expire
	startTask(t, c, "quick")
	if n := store.Len(); n != 1 {
		t.Errorf("%d tasks kept after expiry, want 1", n)
	}
}

// A task whose server stopped renewing its lease reads as failed.
func TestTaskLeaseExpired(t *testing.T) {
	store := &mcp.MemoryTaskStore{}
	srv := newTaskServer(t, mcp.TaskOptions{Store: store}, echoTool())
	// Another server created it, for the anonymous modern caller, then died.
	created := time.Now().Add(-time.Minute)
	ttl := int64(time.Hour / time.Millisecond)
	id := "task_AAAAAAAAAAAAAAAAAAAAAA"
	if err := store.Create(context.Background(), &mcp.TaskRecord{Owner: "", Lease: time.Now().Add(-time.Second),
		Task: mcp.Task{TaskID: id, Status: mcp.TaskWorking, CreatedAt: created, LastUpdatedAt: created, TTLMs: &ttl}}, time.Hour); err != nil {
		t.Fatal(err)
	}
	hc := startHTTP(t, srv)
	r := hc.postModern(1, mcp.MethodTasksGet, id, withTasks(map[string]any{"taskId": id}))
	var got mcp.Task
	r.last(t).decodeResult(t, &got)
	if got.Status != mcp.TaskFailed || got.Error == nil || !strings.Contains(got.StatusMessage, "stopped before it ended") {
		t.Errorf("orphaned task: %+v", got)
	}
}

// Over HTTP, tasks/* carry the task id in Mcp-Name.
func TestTaskMcpNameHeader(t *testing.T) {
	srv := newTaskServer(t, mcp.TaskOptions{}, echoTool())
	hc := startHTTP(t, srv)
	id := "task_AAAAAAAAAAAAAAAAAAAAAA"
	for _, m := range []string{mcp.MethodTasksGet, mcp.MethodTasksCancel} {
		r := hc.postModern(1, m, "task_BBBBBBBBBBBBBBBBBBBBBB", withTasks(map[string]any{"taskId": id}))
		if r.status != http.StatusBadRequest || r.last(t).Error == nil || r.last(t).Error.Code != mcp.CodeHeaderMismatch {
			t.Errorf("%s with a mismatched Mcp-Name: HTTP %d %s", m, r.status, r.body)
		}
		r = hc.postModern(1, m, "", withTasks(map[string]any{"taskId": id}))
		if r.status != http.StatusBadRequest {
			t.Errorf("%s without Mcp-Name: HTTP %d %s", m, r.status, r.body)
		}
	}
}

// subscriptions/listen with taskIds delivers notifications/tasks for the
// caller's own tasks only.
func TestTaskNotifications(t *testing.T) {
	release := make(chan struct{})
	srv := newTaskServer(t, mcp.TaskOptions{}, waitTool("job", tool.TaskRequired, release))
	c := startStdio(t, srv)
	other := startStdio(t, srv)
	task := startTask(t, c, "job")
	theirs := startTask(t, other, "job")
	c.sendRequest(`"listen"`, mcp.MethodSubscriptionsListen, withTasks(map[string]any{"notifications": map[string]any{"taskIds": []string{task.TaskID, theirs.TaskID}}}))
	ack := c.next()
	if ack.Method != mcp.NotificationSubscriptionsAcknowledged || !strings.Contains(ack.raw, task.TaskID) || strings.Contains(ack.raw, theirs.TaskID) {
		t.Fatalf("acknowledgement: %s", ack)
	}
	close(release)
	for {
		m := c.next()
		if m.Method != mcp.NotificationTasks {
			t.Fatalf("unexpected %s", m)
		}
		if strings.Contains(m.raw, theirs.TaskID) {
			t.Fatalf("another caller's task: %s", m)
		}
		if strings.Contains(m.raw, `"status":"completed"`) && strings.Contains(m.raw, "done job") {
			break
		}
	}
	resp := c.call(mcp.MethodSubscriptionsListen, modern(map[string]any{"notifications": map[string]any{"taskIds": []string{task.TaskID}}}))
	if resp.Error == nil || resp.Error.Code != mcp.CodeMissingRequiredClientCapability {
		t.Errorf("listen for tasks without the extension: %s", resp)
	}
}

// A task still running at its TTL is cancelled.
func TestTaskTTL(t *testing.T) {
	ended := make(chan error, 1)
	srv := newTaskServer(t, mcp.TaskOptions{TTL: 50 * time.Millisecond, Lease: time.Minute}, taskTool("long", tool.TaskRequired, func(ctx context.Context) (*tool.Result, error) {
		mcp.StartTask(ctx)
		<-ctx.Done()
		ended <- context.Cause(ctx)
		return nil, context.Cause(ctx)
	}))
	c := startStdio(t, srv)
	startTask(t, c, "long")
	select {
	case err := <-ended:
		if !strings.Contains(err.Error(), "past its lifetime") {
			t.Errorf("the tool's context ended with %v", err)
		}
	case <-time.After(waitTimeout):
		t.Fatal("the task ran on past its TTL")
	}
}

// The results a MemoryTaskStore keeps are bounded in bytes: the oldest
// ended tasks make room, and a result larger than the bound fails its
// task with an error that says so.
func TestTaskStoreBytes(t *testing.T) {
	store := &mcp.MemoryTaskStore{MaxBytes: 100}
	ctx := context.Background()
	base := time.Now()
	task := func(id string, i int) mcp.Task {
		return mcp.Task{TaskID: id, Status: mcp.TaskWorking, CreatedAt: base.Add(time.Duration(i) * time.Second)}
	}
	ids := []string{"task_a", "task_b", "task_c"}
	for i, id := range ids {
		if err := store.Create(ctx, &mcp.TaskRecord{Owner: "o", Task: task(id, i)}, time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	finish := func(i, n int) {
		tk := task(ids[i], i)
		tk.Status, tk.Result = mcp.TaskCompleted, json.RawMessage(`"`+strings.Repeat("x", n-2)+`"`)
		if err := store.Save(ctx, &mcp.TaskRecord{Owner: "o", Task: tk}); err != nil {
			t.Fatal(err)
		}
	}
	finish(0, 60)
	finish(1, 60)
	if _, err := store.Get(ctx, "o", "task_a"); !errors.Is(err, mcp.ErrTaskNotFound) {
		t.Errorf("the oldest result was kept past the bound: %v", err)
	}
	if rec, err := store.Get(ctx, "o", "task_b"); err != nil || len(rec.Task.Result) != 60 {
		t.Errorf("the newest result: %+v, %v", rec, err)
	}
	finish(2, 150)
	rec, err := store.Get(ctx, "o", "task_c")
	if err != nil || rec.Task.Status != mcp.TaskFailed || rec.Task.Result != nil || !strings.Contains(rec.Task.StatusMessage, "larger than the task store keeps") {
		t.Errorf("a result past the whole bound: %+v, %v", rec, err)
	}
	if _, err := store.Get(ctx, "o", "task_b"); err != nil {
		t.Errorf("a result too large to keep evicted another: %v", err)
	}
}
