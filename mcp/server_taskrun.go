package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"strconv"
	"sync"
	"time"

	"github.com/toolwire/toolwire/internal/ctxkey"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/tool"
)

type taskRunKey struct{}

// taskRun is one tools/call of a tool that supports tasks, from a client
// that can take one: it runs as a plain request until it becomes a task
// (after TaskOptions.After, or at StartTask), then on its own, with its
// state in the task store.
type taskRun struct {
	srv     *Server
	req     *request
	name    string
	support string
	owner   string
	ctx     context.Context
	cancel  context.CancelCauseFunc

	started chan struct{} // closed once a task
	done    chan struct{} // closed once the tool returned

	mu        sync.Mutex
	promoted  bool
	finished  bool
	mrtr      bool // asked a multi round-trip question: stays a request
	asking    int  // questions of the request phase in flight
	cancelled bool // the client asked to cancel
	createErr error
	res       *tool.Result
	err       error
	rec       TaskRecord
	asked     map[string]InputRequest
	answers   map[string]json.RawMessage
	seq       int
	changed   chan struct{} // closed and replaced when answers arrive
	expiry    *time.Timer
}

// runCtx is a task run's context: the request's values without its
// cancellation, the run as the calls' tool.Client.
type runCtx struct {
	context.Context
	run *taskRun
}

func (c runCtx) Value(key any) any {
	switch key {
	case taskRunKey{}, ctxkey.Client{}:
		return c.run
	}
	return c.Context.Value(key)
}

func runFrom(ctx context.Context) *taskRun {
	r, _ := ctx.Value(taskRunKey{}).(*taskRun)
	return r
}

// callToolTask serves a tools/call of a tool that supports tasks.
func (s *Server) callToolTask(ctx context.Context, req *request, p *CallToolParams, support string) (any, error) {
	if !req.declaresTasks() {
		if support == tool.TaskRequired {
			return nil, missingTasksExtension("the tool " + strconv.Quote(p.Name))
		}
		res, err := s.tools.Call(ctx, p.Name, p.Arguments)
		out, err := s.toolOutcome(ctx, p.Name, res, err, &req.responseParts().toolResult)
		if err != nil {
			return nil, err
		}
		return out, nil
	}
	s.taskStore()
	run := &taskRun{srv: s, req: req, name: p.Name, support: support, owner: callerID(req),
		started: make(chan struct{}), done: make(chan struct{}), changed: make(chan struct{})}
	rctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	run.ctx, run.cancel = runCtx{rctx, run}, cancel
	go func() {
		res, err := s.tools.Call(run.ctx, p.Name, p.Arguments)
		run.finish(res, err)
	}()
	timer := time.NewTimer(orDefault(s.Tasks.After, DefaultTaskAfter))
	defer timer.Stop()
	tick := timer.C
	for {
		select {
		case <-run.started:
			return run.created(), nil
		case <-run.done:
			if run.isPromoted() { // became a task, then returned at once
				return run.created(), nil
			}
			if support == tool.TaskRequired && !errors.Is(run.err, ErrInputRequired) {
				ok := run.promote(ctx)
				cancel(nil)
				if !ok {
					return nil, run.creationError()
				}
				return run.created(), nil
			}
			out, err := s.toolOutcome(run.ctx, p.Name, run.res, run.err, &req.responseParts().toolResult)
			cancel(nil)
			if err != nil {
				return nil, err
			}
			return out, nil
		case <-tick:
			tick = nil
			if !run.promote(ctx) && run.waitsForQuestion() {
				timer.Reset(orDefault(s.Tasks.After, DefaultTaskAfter))
				tick = timer.C
			}
		case <-ctx.Done():
			cancel(context.Cause(ctx))
			<-run.done
			return nil, context.Cause(ctx)
		}
	}
}

func (r *taskRun) isPromoted() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.promoted
}

// waitsForQuestion reports whether the request phase waits on a question
// to the client (legacy era): the call may become a task once answered.
func (r *taskRun) waitsForQuestion() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.asking > 0 && !r.mrtr
}

// created is the CreateTaskResult of a task.
func (r *taskRun) created() *Task {
	r.mu.Lock()
	t := r.rec.Task
	r.mu.Unlock()
	t.ResultType = ResultTask
	t.Result, t.Error, t.InputRequests = nil, nil, nil
	return &t
}

// promote makes the call a task, durably, unless it asked a multi
// round-trip question or waits on one; it reports whether the call is a
// task.
func (r *taskRun) promote(ctx context.Context) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.promoted {
		return true
	}
	if r.mrtr || r.asking > 0 {
		return false
	}
	s := r.srv
	now := time.Now().UTC()
	ttl := orDefault(s.Tasks.TTL, DefaultTaskTTL)
	ttlMs := ttl.Milliseconds()
	r.rec = TaskRecord{Owner: r.owner, Task: Task{TaskID: newTaskID(), Status: TaskWorking, CreatedAt: now, LastUpdatedAt: now,
		TTLMs: &ttlMs, PollIntervalMs: orDefault(s.Tasks.PollInterval, DefaultTaskPollInterval).Milliseconds()},
		Lease: now.Add(orDefault(s.Tasks.Lease, DefaultTaskLease))}
	if r.finished {
		r.settleLocked()
	}
	if err := s.taskStore().Create(context.WithoutCancel(ctx), &r.rec, ttl); err != nil {
		s.logger().Warn("mcp: the call goes on without a task: creating it failed", "tool", r.name, "err", err)
		r.createErr = err
		return false
	}
	r.promoted = true
	close(r.started)
	if r.finished {
		return true
	}
	s.taskrt.mu.Lock()
	s.taskrt.runs[r.rec.Task.TaskID] = r
	s.taskrt.mu.Unlock()
	r.expiry = time.AfterFunc(ttl, func() { r.cancel(errTaskExpired) })
	go r.supervise()
	return true
}

// creationError is the protocol error of a call that must be a task and
// could not become one.
func (r *taskRun) creationError() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if errors.Is(r.createErr, ErrTooManyTasks) {
		return jsonrpc.NewError(jsonrpc.CodeInternalError, "server busy: %v; the tool %q runs only as a task: retry once some tasks have ended or expired", r.createErr, r.name)
	}
	return jsonrpc.NewError(jsonrpc.CodeInternalError, "the tool %q runs only as a task, and creating it failed: %v; retry shortly", r.name, r.createErr)
}

// settleLocked writes the tool's outcome into the task's state; r.mu is
// held.
func (r *taskRun) settleLocked() {
	t := &r.rec.Task
	t.LastUpdatedAt = time.Now().UTC()
	t.InputRequests = nil
	r.rec.Lease = time.Time{}
	if r.cancelled {
		t.Status, t.StatusMessage = TaskCancelled, "cancelled by the client"
		return
	}
	out, err := r.srv.toolOutcome(r.ctx, r.name, r.res, r.err, new(CallToolResult))
	if err == nil {
		b, merr := json.Marshal(out)
		if merr == nil {
			t.Status, t.Result = TaskCompleted, b
			return
		}
		err = merr
	}
	t.Status = TaskFailed
	t.Error = toRPCError(r.req, err)
	t.StatusMessage = t.Error.Message
}

// finish records what the tool returned.
func (r *taskRun) finish(res *tool.Result, err error) {
	r.mu.Lock()
	r.res, r.err, r.finished = res, err, true
	if r.promoted {
		r.expiry.Stop()
		r.settleLocked()
		r.saveLocked()
		s := r.srv
		s.taskrt.mu.Lock()
		delete(s.taskrt.runs, r.rec.Task.TaskID)
		s.taskrt.mu.Unlock()
	}
	promoted := r.promoted
	r.mu.Unlock()
	close(r.done)
	if promoted {
		r.cancel(nil) // else callToolTask does, once it read the outcome
	}
}

// saveLocked writes the task's state to the store and tells whoever
// follows it; r.mu is held.
func (r *taskRun) saveLocked() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.srv.taskStore().Save(ctx, &r.rec); err != nil {
		r.srv.logger().Warn("mcp: saving a task's state", "task", r.rec.Task.TaskID, "err", err)
	}
	t := r.rec.Task
	r.srv.taskChanged(&t)
}

// supervise renews the task's lease and reads what other servers wrote
// for it (answers, a cancellation) until the tool returns. While the task
// waits for input, which tasks/update may leave in the store through
// another server, it reads the store at the clients' polling pace too.
func (r *taskRun) supervise() {
	lease := orDefault(r.srv.Tasks.Lease, DefaultTaskLease)
	tick := time.NewTicker(lease / 3)
	defer tick.Stop()
	answers := time.NewTicker(orDefault(r.srv.Tasks.PollInterval, DefaultTaskPollInterval))
	defer answers.Stop()
	for {
		select {
		case <-r.done:
			return
		case <-tick.C:
			r.sync(true)
		case <-answers.C:
			if r.waitsForAnswers() {
				r.sync(false)
			}
		}
	}
}

// waitsForAnswers reports whether the task asked questions not answered
// yet.
func (r *taskRun) waitsForAnswers() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.asked) > 0
}

// sync reads answers and a cancellation from the store, and renews the
// lease when asked.
func (r *taskRun) sync(renew bool) {
	ctx, cancel := context.WithTimeout(r.ctx, 10*time.Second)
	defer cancel()
	st := r.srv.taskStore()
	id := r.rec.Task.TaskID
	if responses, err := st.TakeResponses(ctx, id); err == nil && len(responses) > 0 {
		r.deliver(responses)
	}
	rec, err := st.Get(ctx, r.owner, id)
	switch {
	case errors.Is(err, ErrTaskNotFound):
		r.cancel(errTaskExpired) // dropped from the store: nobody can read its result
		return
	case err == nil && rec.CancelRequested:
		r.requestCancel()
		return
	}
	if renew {
		r.mu.Lock()
		if !r.finished {
			r.rec.Lease = time.Now().Add(orDefault(r.srv.Tasks.Lease, DefaultTaskLease))
			if err := st.Save(ctx, &r.rec); err != nil {
				r.srv.logger().Warn("mcp: renewing a task's lease", "task", id, "err", err)
			}
		}
		r.mu.Unlock()
	}
}

// requestCancel cancels the task's context, unless it ended.
func (r *taskRun) requestCancel() {
	r.mu.Lock()
	if r.finished {
		r.mu.Unlock()
		return
	}
	r.cancelled = true
	r.mu.Unlock()
	r.cancel(errTaskCancelled)
}

// deliver takes the answers to questions the task asks; others (never
// asked, answered already) are ignored.
func (r *taskRun) deliver(responses map[string]json.RawMessage) {
	r.mu.Lock()
	defer r.mu.Unlock()
	took := false
	for k, v := range responses {
		if _, ok := r.asked[k]; ok {
			if r.answers == nil {
				r.answers = map[string]json.RawMessage{}
			}
			r.answers[k] = v
			delete(r.asked, k)
			took = true
		}
	}
	if !took || r.finished {
		return
	}
	close(r.changed)
	r.changed = make(chan struct{})
	r.setQuestionsLocked()
}

// setQuestionsLocked writes the questions asked into the task's state;
// r.mu is held.
func (r *taskRun) setQuestionsLocked() {
	t := &r.rec.Task
	t.InputRequests = maps.Clone(r.asked)
	if len(r.asked) > 0 {
		t.Status, t.StatusMessage = TaskInputRequired, "waiting for the client's answers"
	} else {
		t.Status, t.StatusMessage = TaskWorking, ""
	}
	t.LastUpdatedAt = time.Now().UTC()
	r.saveLocked()
}

// ask puts a question to the client: as a question of the request while
// the call is not a task, else as an input request of the task, waiting
// for the answer that tasks/update brings.
func (r *taskRun) ask(ctx context.Context, method string, params any, out any, supported func(*ClientCapabilities) bool) error {
	r.mu.Lock()
	if !r.promoted {
		r.asking++
		r.mu.Unlock()
		err := askRequest(ctx, r.req, method, params, out, supported)
		r.mu.Lock()
		r.asking--
		if errors.Is(err, ErrInputRequired) {
			r.mrtr = true
		}
		r.mu.Unlock()
		return err
	}
	defer r.mu.Unlock()
	if r.req.caps == nil || !supported(r.req.caps) {
		return missingCapability(method)
	}
	r.seq++
	key, _ := ctx.Value(inputKeyKey{}).(string)
	if key == "" {
		key = inputKeyPrefix[method] + "-" + strconv.Itoa(r.seq)
	}
	if _, ok := r.answers[key]; !ok {
		b, err := jsonrpc.Marshal(params)
		if err != nil {
			return err
		}
		if r.asked == nil {
			r.asked = map[string]InputRequest{}
		}
		r.asked[key] = InputRequest{Method: method, Params: b}
		r.setQuestionsLocked()
	}
	for {
		if raw, ok := r.answers[key]; ok {
			if len(raw) == 0 || raw[0] != '{' {
				return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params: inputResponses[%q] must be the %s result object, got %s", key, method, raw)
			}
			if err := json.Unmarshal(raw, out); err != nil {
				return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params: inputResponses[%q] is not a valid %s result: %v", key, method, err)
			}
			return nil
		}
		ch := r.changed
		r.mu.Unlock()
		select {
		case <-ch:
			r.mu.Lock()
		case <-ctx.Done():
			r.mu.Lock()
			if _, ok := r.asked[key]; ok && !r.finished {
				delete(r.asked, key)
				r.setQuestionsLocked()
			}
			return context.Cause(ctx)
		}
	}
}

// Progress reports progress: to the request before the call is a task,
// then as the task's statusMessage.
func (r *taskRun) Progress(ctx context.Context, progress, total float64, message string) error {
	r.mu.Lock()
	if !r.promoted {
		r.mu.Unlock()
		return r.req.Progress(ctx, progress, total, message)
	}
	defer r.mu.Unlock()
	if r.finished || r.rec.Task.Status != TaskWorking {
		return nil
	}
	if message == "" {
		message = strconv.FormatFloat(progress, 'f', -1, 64)
		if total > 0 {
			message += "/" + strconv.FormatFloat(total, 'f', -1, 64)
		}
	}
	r.rec.Task.StatusMessage = message
	r.rec.Task.LastUpdatedAt = time.Now().UTC()
	r.saveLocked()
	return nil
}

// Log sends a log message to the request before the call is a task; a
// task's messages go nowhere (the extension carries none).
func (r *taskRun) Log(ctx context.Context, level tool.LogLevel, logger string, data any) error {
	r.mu.Lock()
	promoted := r.promoted
	r.mu.Unlock()
	if promoted {
		return nil
	}
	return r.req.Log(ctx, level, logger, data)
}

// Elicit asks the user (see ask).
func (r *taskRun) Elicit(ctx context.Context, e *tool.Elicitation) (*tool.ElicitResult, error) {
	return r.req.Elicit(ctx, e)
}

// Sample asks the client's model (see ask).
func (r *taskRun) Sample(ctx context.Context, s *tool.Sampling) (*tool.SamplingResult, error) {
	return r.req.Sample(ctx, s)
}
