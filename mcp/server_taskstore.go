package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/toolwire/toolwire/jsonrpc"
)

// Errors of a TaskStore, told apart with errors.Is.
var (
	// ErrTaskNotFound: no task under the id for this owner: it expired,
	// never existed, or belongs to another caller (which reads exactly as
	// if it never existed).
	ErrTaskNotFound = errors.New("task not found")
	// ErrTooManyTasks: the store holds as many tasks as its bound allows.
	ErrTooManyTasks = errors.New("too many tasks")
	// ErrTaskStoreUnavailable: the store cannot be reached now.
	ErrTaskStoreUnavailable = errors.New("task store unavailable")
)

// DefaultMaxTasks bounds the tasks a MemoryTaskStore keeps at once, live
// or finished and not yet expired.
const DefaultMaxTasks = 10_000

// DefaultMaxTaskBytes bounds the results a MemoryTaskStore keeps, in
// bytes of JSON.
const DefaultMaxTaskBytes = 256 << 20

// TaskRecord is what a TaskStore keeps of a task.
type TaskRecord struct {
	// Owner is the caller that created the task (tool.Caller.ID); only
	// that caller reads, answers or cancels it.
	Owner string
	// Task is the task's state, as tasks/get returns it.
	Task Task
	// Lease is when the server running the task is presumed gone unless
	// it renews it (zero once the task is terminal).
	Lease time.Time
	// CancelRequested is set once the owner asked to cancel the task.
	CancelRequested bool
}

// TaskStore keeps the tasks of the Tasks extension, so that any server
// sharing it answers for a task another created. Get, Respond and Cancel
// answer ErrTaskNotFound (wrapped) for a task that is not there for the
// owner, whatever the reason, and ErrTaskStoreUnavailable (wrapped) when
// the store cannot be reached.
//
// The server running a task writes its state (Create, Save) and reads
// what others wrote for it (TakeResponses, Get for CancelRequested);
// the servers answering tasks/update and tasks/cancel write those
// (Respond, Cancel).
type TaskStore interface {
	// Create stores a new task that lives for ttl; ErrTooManyTasks
	// (wrapped) past the store's bound.
	Create(ctx context.Context, rec *TaskRecord, ttl time.Duration) error
	// Get returns owner's task id.
	Get(ctx context.Context, owner, id string) (*TaskRecord, error)
	// Save writes a task's state and lease, keeping its owner, expiry and
	// CancelRequested. A terminal state is never replaced.
	Save(ctx context.Context, rec *TaskRecord) error
	// Respond adds answers to the input requests of owner's task id.
	Respond(ctx context.Context, owner, id string, responses map[string]json.RawMessage) error
	// TakeResponses returns the answers added since the last call, and
	// removes them.
	TakeResponses(ctx context.Context, id string) (map[string]json.RawMessage, error)
	// Cancel records that owner asked to cancel task id.
	Cancel(ctx context.Context, owner, id string) error
}

// MemoryTaskStore is a TaskStore in process memory, for a single server.
// Its zero value is ready to use, bounded at DefaultMaxTasks. It is safe
// for concurrent use.
type MemoryTaskStore struct {
	// MaxTasks bounds the tasks kept at once (default DefaultMaxTasks);
	// expired tasks make room.
	MaxTasks int
	// MaxBytes bounds the sum of the results kept, in bytes of JSON
	// (default DefaultMaxTaskBytes): the oldest ended tasks make room,
	// and a result larger than the whole bound fails its task.
	MaxBytes int64
	// Now tells the time; nil means time.Now. Tests set it to move time.
	Now func() time.Time

	mu    sync.Mutex
	tasks map[string]*memTask
	bytes int64 // of the results kept
}

type memTask struct {
	rec       TaskRecord
	expires   time.Time
	responses map[string]json.RawMessage
}

func (m *MemoryTaskStore) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

func (m *MemoryTaskStore) maxBytes() int64 {
	if m.MaxBytes > 0 {
		return m.MaxBytes
	}
	return DefaultMaxTaskBytes
}

// removeLocked drops a task; m.mu is held.
func (m *MemoryTaskStore) removeLocked(id string) {
	if t, ok := m.tasks[id]; ok {
		m.bytes -= int64(len(t.rec.Task.Result))
		delete(m.tasks, id)
	}
}

func (m *MemoryTaskStore) max() int {
	if m.MaxTasks > 0 {
		return m.MaxTasks
	}
	return DefaultMaxTasks
}

// Create stores a new task.
func (m *MemoryTaskStore) Create(_ context.Context, rec *TaskRecord, ttl time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.tasks == nil {
		m.tasks = map[string]*memTask{}
	}
	now := m.now()
	if len(m.tasks) >= m.max() {
		for id, t := range m.tasks {
			if !now.Before(t.expires) {
				m.removeLocked(id)
			}
		}
		if n := len(m.tasks); n >= m.max() {
			return fmt.Errorf("%w: %d tasks are kept, the store's bound", ErrTooManyTasks, n)
		}
	}
	m.tasks[rec.Task.TaskID] = &memTask{rec: cloneRecord(rec), expires: now.Add(ttl)}
	return nil
}

// lookup returns owner's live task id; m.mu is held.
func (m *MemoryTaskStore) lookup(owner, id string) (*memTask, error) {
	t, ok := m.tasks[id]
	if ok && !m.now().Before(t.expires) {
		m.removeLocked(id)
		ok = false
	}
	if !ok || t.rec.Owner != owner {
		return nil, fmt.Errorf("%w: %s", ErrTaskNotFound, id)
	}
	return t, nil
}

// Get returns owner's task id.
func (m *MemoryTaskStore) Get(_ context.Context, owner, id string) (*TaskRecord, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, err := m.lookup(owner, id)
	if err != nil {
		return nil, err
	}
	rec := cloneRecord(&t.rec)
	return &rec, nil
}

// Save writes a task's state and lease.
func (m *MemoryTaskStore) Save(_ context.Context, rec *TaskRecord) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, err := m.lookup(rec.Owner, rec.Task.TaskID)
	if err != nil {
		return err
	}
	if t.rec.Task.Terminal() {
		return nil
	}
	c := cloneRecord(rec)
	size := int64(len(c.Task.Result))
	if size > m.maxBytes() {
		c.Task.Status, c.Task.Result = TaskFailed, nil
		c.Task.StatusMessage = fmt.Sprintf("the result (%d bytes) is larger than the task store keeps (%d bytes, MemoryTaskStore.MaxBytes); ask for less", size, m.maxBytes())
		c.Task.Error = jsonrpc.NewError(jsonrpc.CodeInternalError, "%s", c.Task.StatusMessage)
		size = 0
	}
	m.bytes -= int64(len(t.rec.Task.Result))
	for m.bytes+size > m.maxBytes() {
		if !m.evictOldestLocked(rec.Task.TaskID) {
			break
		}
	}
	t.rec.Task, t.rec.Lease = c.Task, c.Lease
	m.bytes += size
	return nil
}

// evictOldestLocked drops the ended task with a result created first,
// other than keep; it reports whether there was one. m.mu is held.
func (m *MemoryTaskStore) evictOldestLocked(keep string) bool {
	oldest := ""
	var at time.Time
	for id, t := range m.tasks {
		if id != keep && len(t.rec.Task.Result) > 0 && (oldest == "" || t.rec.Task.CreatedAt.Before(at)) {
			oldest, at = id, t.rec.Task.CreatedAt
		}
	}
	if oldest == "" {
		return false
	}
	m.removeLocked(oldest)
	return true
}

// Respond adds answers to owner's task id.
func (m *MemoryTaskStore) Respond(_ context.Context, owner, id string, responses map[string]json.RawMessage) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, err := m.lookup(owner, id)
	if err != nil {
		return err
	}
	if t.responses == nil {
		t.responses = map[string]json.RawMessage{}
	}
	maps.Copy(t.responses, responses)
	return nil
}

// TakeResponses returns and removes the answers added to task id.
func (m *MemoryTaskStore) TakeResponses(_ context.Context, id string) (map[string]json.RawMessage, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.tasks[id]
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrTaskNotFound, id)
	}
	r := t.responses
	t.responses = nil
	return r, nil
}

// Cancel records that owner asked to cancel task id.
func (m *MemoryTaskStore) Cancel(_ context.Context, owner, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, err := m.lookup(owner, id)
	if err != nil {
		return err
	}
	t.rec.CancelRequested = true
	return nil
}

// Len returns the number of tasks kept, expired ones included until the
// store notices them.
func (m *MemoryTaskStore) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.tasks)
}

// cloneRecord copies a record so that the store and its callers share
// no maps.
func cloneRecord(rec *TaskRecord) TaskRecord {
	c := *rec
	c.Task.InputRequests = maps.Clone(rec.Task.InputRequests)
	return c
}
