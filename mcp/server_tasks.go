package mcp

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/toolwire/toolwire/internal/jsonvalue"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/tool"
)

// ExtensionTasks identifies the Tasks extension (SEP-2663): a tools/call
// may be answered with a task, which the client polls with tasks/get,
// answers with tasks/update and cancels with tasks/cancel.
const ExtensionTasks = "io.modelcontextprotocol/tasks"

// Methods, notification and result type of the Tasks extension.
const (
	MethodTasksGet    = "tasks/get"
	MethodTasksUpdate = "tasks/update"
	MethodTasksCancel = "tasks/cancel"
	// MethodTasksResult is 2025-11-25's, which the Tasks extension
	// removed: a client calls it of legacy servers only.
	MethodTasksResult = "tasks/result"
	NotificationTasks = "notifications/tasks"
	// ResultTask is the resultType of a CreateTaskResult.
	ResultTask = "task"
)

// The statuses of a task.
const (
	TaskWorking       = "working"
	TaskInputRequired = "input_required"
	TaskCompleted     = "completed"
	TaskFailed        = "failed"
	TaskCancelled     = "cancelled"
)

// Defaults of TaskOptions.
const (
	DefaultTaskAfter        = time.Second
	DefaultTaskTTL          = time.Hour
	DefaultTaskPollInterval = time.Second
	DefaultTaskLease        = 15 * time.Second
)

// Task is a task of the Tasks extension as tasks/get returns it (the
// extension's DetailedTask), and, with ResultType "task" and no Result,
// Error or InputRequests, the CreateTaskResult a tools/call answers with.
type Task struct {
	ResultBase
	TaskID        string    `json:"taskId"`
	Status        string    `json:"status"`
	StatusMessage string    `json:"statusMessage,omitempty"`
	CreatedAt     time.Time `json:"createdAt"`
	LastUpdatedAt time.Time `json:"lastUpdatedAt"`
	// TTLMs is how long the task is kept from its creation; nil means
	// without limit.
	TTLMs          *int64 `json:"ttlMs"`
	PollIntervalMs int64  `json:"pollIntervalMs,omitempty"`
	// InputRequests are the questions the task waits on
	// (input_required).
	InputRequests map[string]InputRequest `json:"inputRequests,omitempty"`
	// Result is the result of the request (completed): for tools/call, a
	// CallToolResult.
	Result json.RawMessage `json:"result,omitempty"`
	// Error is the protocol error the request ended with (failed).
	Error *jsonrpc.Error `json:"error,omitempty"`
}

// Terminal reports whether the task has ended.
func (t *Task) Terminal() bool {
	return t.Status == TaskCompleted || t.Status == TaskFailed || t.Status == TaskCancelled
}

// TaskParams are the params of tasks/get and tasks/cancel; tasks/update
// adds its answers in the embedded Params' InputResponses.
type TaskParams struct {
	Params
	TaskID string `json:"taskId"`
}

// TaskOptions configure the tasks a Server runs.
type TaskOptions struct {
	// Store keeps the tasks; nil means a MemoryTaskStore. Servers behind
	// a load balancer share one (handle/redisstore has one in Redis).
	Store TaskStore
	// After is how long a call of a tool whose TaskSupport is optional
	// runs before it becomes a task (default DefaultTaskAfter). A tool
	// may become one at once with StartTask.
	After time.Duration
	// TTL is how long a task and its result are kept from its creation
	// (default DefaultTaskTTL); a task still running then is cancelled.
	TTL time.Duration
	// PollInterval is what clients are told to poll at (default
	// DefaultTaskPollInterval).
	PollInterval time.Duration
	// Lease is how long a task is reported working without word from the
	// server running it (default DefaultTaskLease): past it, the task
	// reads as failed, so a client of a server that died learns so
	// within Lease. The running server renews it every Lease/3.
	Lease time.Duration
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// taskRuntime is what a Server keeps of its tasks: the store and the
// tasks running in this process.
type taskRuntime struct {
	once  sync.Once
	store TaskStore
	mu    sync.Mutex
	runs  map[string]*taskRun
}

func (s *Server) taskStore() TaskStore {
	s.taskrt.once.Do(func() {
		s.taskrt.store = s.Tasks.Store
		if s.taskrt.store == nil {
			s.taskrt.store = &MemoryTaskStore{}
		}
		s.taskrt.runs = map[string]*taskRun{}
	})
	return s.taskrt.store
}

func (s *Server) localRun(id string) *taskRun {
	s.taskStore()
	s.taskrt.mu.Lock()
	defer s.taskrt.mu.Unlock()
	return s.taskrt.runs[id]
}

// hasTaskTools reports whether a tool of the server may run as a task:
// the server then declares the extension.
func (s *Server) hasTaskTools() bool {
	for _, t := range s.tools.Tools() {
		if taskSupport(t) != "" {
			return true
		}
	}
	return false
}

// taskSupport is a tool's TaskSupport, "" for none.
func taskSupport(t tool.Tool) string {
	if e := t.Info().Execution; e != nil && (e.TaskSupport == tool.TaskOptional || e.TaskSupport == tool.TaskRequired) {
		return e.TaskSupport
	}
	return ""
}

// declaresTasks reports whether the client declared the extension on
// this request: a 2026-07-28 request, whose _meta carries its
// capabilities (a legacy session's, from initialize, do not count).
func (r *request) declaresTasks() bool {
	if !r.modern || r.caps == nil {
		return false
	}
	_, ok := r.caps.Extensions[ExtensionTasks]
	return ok
}

// missingTasksExtension is the error for a client that did not declare
// the extension.
func missingTasksExtension(what string) *jsonrpc.Error {
	return jsonrpc.NewError(CodeMissingRequiredClientCapability,
		"Missing required client capability: %s needs the %s extension; declare it in params._meta[%q].extensions", what, ExtensionTasks, MetaClientCapabilities).
		WithData(map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{ExtensionTasks: map[string]any{}}}})
}

// Task ids are "task_" and 22 characters of unpadded URL-safe base64
// carrying 128 random bits.
const (
	taskIDPrefix = "task_"
	taskIDLen    = len(taskIDPrefix) + 22
)

func newTaskID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return taskIDPrefix + base64.RawURLEncoding.EncodeToString(b[:])
}

// validTaskID reports whether id is shaped as this server's task ids: a
// store is never asked about anything else.
func validTaskID(id string) bool {
	if len(id) != taskIDLen || !strings.HasPrefix(id, taskIDPrefix) {
		return false
	}
	b, err := base64.RawURLEncoding.DecodeString(id[len(taskIDPrefix):])
	return err == nil && len(b) == 16 && base64.RawURLEncoding.EncodeToString(b) == id[len(taskIDPrefix):]
}

// errUnknownTask is the one answer for a task id that is malformed,
// unknown, expired or another caller's.
func errUnknownTask(id string) *jsonrpc.Error {
	return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Failed to retrieve task: task %q not found (unknown, expired, or not yours); call the tool again", clipID(id))
}

func clipID(id string) string {
	if len(id) > 64 {
		return id[:61] + "..."
	}
	return id
}

// taskRequest decodes tasks/get, tasks/update or tasks/cancel and returns
// its params and the caller's record of the task.
func (s *Server) taskRequest(ctx context.Context, req *request, p *TaskParams) (*TaskRecord, error) {
	if err := decode(req, p); err != nil {
		return nil, err
	}
	if !req.declaresTasks() {
		return nil, missingTasksExtension(req.method)
	}
	if s.Caller != nil {
		c := s.Caller(ctx, req.info())
		req.caller = &c
	}
	if !validTaskID(p.TaskID) {
		return nil, errUnknownTask(p.TaskID)
	}
	rec, err := s.taskStore().Get(ctx, callerID(req), p.TaskID)
	if errors.Is(err, ErrTaskNotFound) {
		return nil, errUnknownTask(p.TaskID)
	}
	if err != nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "%s: the task store failed: %v; retry shortly", req.method, err)
	}
	s.orphaned(rec)
	return rec, nil
}

// orphaned reports a task whose server stopped renewing its lease as
// failed.
func (s *Server) orphaned(rec *TaskRecord) {
	if rec.Task.Terminal() || rec.Lease.IsZero() || time.Now().Before(rec.Lease) {
		return
	}
	rec.Task.Status = TaskFailed
	rec.Task.InputRequests = nil
	rec.Task.StatusMessage = "the server running this task stopped before it ended; call the tool again"
	rec.Task.Error = jsonrpc.NewError(jsonrpc.CodeInternalError, "%s", rec.Task.StatusMessage)
}

func (s *Server) tasksGet(ctx context.Context, req *request) (any, error) {
	var p TaskParams
	rec, err := s.taskRequest(ctx, req, &p)
	if err != nil {
		return nil, err
	}
	t := rec.Task
	t.ResultType = ResultComplete
	return &t, nil
}

func (s *Server) tasksUpdate(ctx context.Context, req *request) (any, error) {
	var p TaskParams
	rec, err := s.taskRequest(ctx, req, &p)
	if err != nil {
		return nil, err
	}
	responses, err := inputResponses(req.params)
	if err != nil {
		return nil, err
	}
	if len(responses) > 0 && !rec.Task.Terminal() {
		if run := s.localRun(p.TaskID); run != nil {
			run.deliver(responses)
		} else if err := s.taskStore().Respond(ctx, rec.Owner, p.TaskID, responses); err != nil {
			return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "tasks/update: the task store failed: %v; retry shortly", err)
		}
	}
	return &EmptyResult{ResultBase: ResultBase{ResultType: ResultComplete}}, nil
}

// inputResponses reads the inputResponses of tasks/update: an object
// whose keys each appear once.
func inputResponses(params json.RawMessage) (map[string]json.RawMessage, error) {
	var raw json.RawMessage
	if _, err := jsonvalue.Object(params, 0, func(key string, start, end int) {
		if key == "inputResponses" {
			raw = params[start:end]
		}
	}); err != nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params for tasks/update: %v", err)
	}
	if len(raw) == 0 || raw[0] != '{' {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params for tasks/update: inputResponses must be an object mapping the keys of the task's inputRequests to their results")
	}
	out := map[string]json.RawMessage{}
	var dup string
	if _, err := jsonvalue.Object(raw, 0, func(key string, start, end int) {
		if _, ok := out[key]; ok && dup == "" {
			dup = key
		}
		out[key] = raw[start:end:end]
	}); err != nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params for tasks/update: inputResponses: %v", err)
	}
	if dup != "" {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params for tasks/update: inputResponses has the key %q twice; send each answer once", clipID(dup))
	}
	return out, nil
}

func (s *Server) tasksCancel(ctx context.Context, req *request) (any, error) {
	var p TaskParams
	rec, err := s.taskRequest(ctx, req, &p)
	if err != nil {
		return nil, err
	}
	if !rec.Task.Terminal() {
		if err := s.taskStore().Cancel(ctx, rec.Owner, p.TaskID); err != nil && !errors.Is(err, ErrTaskNotFound) {
			return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "tasks/cancel: the task store failed: %v; retry shortly", err)
		}
		if run := s.localRun(p.TaskID); run != nil {
			run.requestCancel()
		}
	}
	return &EmptyResult{ResultBase: ResultBase{ResultType: ResultComplete}}, nil
}

// taskChanged tells the subscriptions/listen streams that follow a task
// of its new state.
func (s *Server) taskChanged(t *Task) {
	for _, c := range s.connections() {
		c.mu.Lock()
		ls := c.listenerList()
		c.mu.Unlock()
		for _, l := range ls {
			l.taskChanged(t)
		}
	}
}

// agreedTaskIDs are the tasks of ids that the caller of req owns: those
// a subscriptions/listen follows.
func (s *Server) agreedTaskIDs(ctx context.Context, req *request, ids []string) ([]string, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	if !req.declaresTasks() {
		return nil, missingTasksExtension("subscribing to task notifications")
	}
	owner := callerID(req)
	var out []string
	for _, id := range ids {
		if !validTaskID(id) {
			continue
		}
		if _, err := s.taskStore().Get(ctx, owner, id); err == nil {
			out = append(out, id)
		}
	}
	return out, nil
}

// errTaskCancelled and errTaskExpired are the causes a task's context
// ends with.
var (
	errTaskCancelled = errors.New("task cancelled by the client")
	errTaskExpired   = errors.New("task ran past its lifetime (TaskOptions.TTL)")
)

// StartTask makes the tools/call being served continue as a task at once,
// when it may become one: the tool's TaskSupport is optional or
// required and the client declared the Tasks extension on the request.
// The client then gets the task, and the questions the tool asks from
// here on (tool.Elicit, tool.Sample, Elicit, CreateMessage) make the task
// input_required until the client answers them with tasks/update. It
// reports whether the call is now a task. Questions asked before, while
// the call is still a plain request, are multi round-trip questions,
// which the client answers by calling again: a tool asks those first,
// then calls StartTask.
func StartTask(ctx context.Context) bool {
	run, _ := ctx.Value(taskRunKey{}).(*taskRun)
	if run == nil {
		return false
	}
	return run.promote(ctx)
}

// taskChanged sends the task's state to the stream, if it follows the
// task.
func (l *listener) taskChanged(t *Task) {
	if slices.Contains(l.filter.TaskIDs, t.TaskID) {
		n := *t
		n.ResultBase = ResultBase{Meta: l.meta()}
		l.notify(NotificationTasks, &n)
	}
}
