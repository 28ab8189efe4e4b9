package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/toolwire/toolwire/mcp"
)

// Tasks is an mcp.TaskStore in Redis, so that every replica of a server
// answers for the tasks of the Tasks extension that any of them runs:
// give each replica's mcp.Server the same Tasks (TaskOptions.Store). It
// uses the client of a Store (Store.Tasks).
//
// A task is a hash (owner, state as JSON, status, lease, cancellation)
// under Prefix+id that expires after the task's TTL, its pending answers
// a hash beside it, and a sorted set of the tasks kept bounds their
// number. Every command that reads or writes a task checks its owner in
// the same script: another caller's task reads as not there.
type Tasks struct {
	// Client is the Redis client; Tasks does not close it.
	Client redis.UniversalClient
	// Prefix starts every key; empty means "toolwire:task:".
	Prefix string
	// MaxTasks bounds the tasks kept at once, over every replica
	// (default mcp.DefaultMaxTasks).
	MaxTasks int
}

// Tasks returns a task store on the store's Redis client.
func (s *Store) Tasks() *Tasks { return &Tasks{Client: s.Client} }

func (t *Tasks) prefix() string {
	if t.Prefix == "" {
		return "toolwire:task:"
	}
	return t.Prefix
}

func (t *Tasks) max() int {
	if t.MaxTasks > 0 {
		return t.MaxTasks
	}
	return mcp.DefaultMaxTasks
}

// keys are a task's hash, its answers and the set of tasks kept.
func (t *Tasks) keys(id string) []string {
	p := t.prefix()
	return []string{p + id, p + id + ":answers", p + "kept"}
}

func taskUnavailable(err error) error {
	return fmt.Errorf("%w: %w", mcp.ErrTaskStoreUnavailable, unavailable(err))
}

func notFound(id string) error { return fmt.Errorf("%w: %s", mcp.ErrTaskNotFound, id) }

// createTask drops the expired tasks from the set kept, refuses past the
// bound, and stores the task: KEYS task, answers, kept; ARGV owner, state,
// status, lease, ttl (ms), now (ms), bound, id.
var createTask = redis.NewScript(`redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', ARGV[6])
local n = redis.call('ZCARD', KEYS[3])
if n >= tonumber(ARGV[7]) then return n end
redis.call('DEL', KEYS[1], KEYS[2])
redis.call('HSET', KEYS[1], 'owner', ARGV[1], 'state', ARGV[2], 'status', ARGV[3], 'lease', ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
redis.call('ZADD', KEYS[3], tonumber(ARGV[6]) + tonumber(ARGV[5]), ARGV[8])
return -1`)

// Create stores a new task.
func (t *Tasks) Create(ctx context.Context, rec *mcp.TaskRecord, ttl time.Duration) error {
	state, err := json.Marshal(&rec.Task)
	if err != nil {
		return fmt.Errorf("redisstore: encoding task %s: %w", rec.Task.TaskID, err)
	}
	n, err := createTask.Run(ctx, t.Client, t.keys(rec.Task.TaskID), rec.Owner, state, rec.Task.Status, leaseMs(rec.Lease),
		ttl.Milliseconds(), time.Now().UnixMilli(), t.max(), rec.Task.TaskID).Int()
	if err != nil {
		return taskUnavailable(err)
	}
	if n >= 0 {
		return fmt.Errorf("%w: %d tasks are kept in Redis, the bound (MaxTasks)", mcp.ErrTooManyTasks, n)
	}
	return nil
}

func leaseMs(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// getTask returns a task's state, lease and cancellation when it is a
// hash of the owner's.
var getTask = redis.NewScript(`if redis.call('TYPE', KEYS[1]).ok ~= 'hash' then return false end
local v = redis.call('HMGET', KEYS[1], 'owner', 'state', 'lease', 'cancel')
if v[1] ~= ARGV[1] then return false end
return {v[2] or '', v[3] or '', v[4] or ''}`)

// Get returns owner's task id.
func (t *Tasks) Get(ctx context.Context, owner, id string) (*mcp.TaskRecord, error) {
	vals, err := getTask.Run(ctx, t.Client, t.keys(id)[:1], owner).StringSlice()
	if errors.Is(err, redis.Nil) {
		return nil, notFound(id)
	}
	if err != nil {
		return nil, taskUnavailable(err)
	}
	// What Redis holds is input: whoever reaches it may have written it.
	rec := &mcp.TaskRecord{Owner: owner, CancelRequested: vals[2] == "1"}
	lease, lerr := strconv.ParseInt(vals[1], 10, 64)
	if err := json.Unmarshal([]byte(vals[0]), &rec.Task); err != nil || lerr != nil || rec.Task.TaskID != id || lease < 0 {
		return nil, fmt.Errorf("%w: %s: the stored task is corrupt", mcp.ErrTaskNotFound, id)
	}
	if lease > 0 {
		rec.Lease = time.UnixMilli(lease)
	}
	return rec, nil
}

// saveTask writes a task's state and lease unless it ended: KEYS task;
// ARGV owner, state, status, lease.
var saveTask = redis.NewScript(`if redis.call('TYPE', KEYS[1]).ok ~= 'hash' or redis.call('HGET', KEYS[1], 'owner') ~= ARGV[1] then return 0 end
local s = redis.call('HGET', KEYS[1], 'status')
if s == 'completed' or s == 'failed' or s == 'cancelled' then return 1 end
redis.call('HSET', KEYS[1], 'state', ARGV[2], 'status', ARGV[3], 'lease', ARGV[4])
return 1`)

// Save writes a task's state and lease.
func (t *Tasks) Save(ctx context.Context, rec *mcp.TaskRecord) error {
	state, err := json.Marshal(&rec.Task)
	if err != nil {
		return fmt.Errorf("redisstore: encoding task %s: %w", rec.Task.TaskID, err)
	}
	n, err := saveTask.Run(ctx, t.Client, t.keys(rec.Task.TaskID)[:1], rec.Owner, state, rec.Task.Status, leaseMs(rec.Lease)).Int()
	if err != nil {
		return taskUnavailable(err)
	}
	if n == 0 {
		return notFound(rec.Task.TaskID)
	}
	return nil
}

// respond adds answers to an owner's task, expiring with it: KEYS task,
// answers; ARGV owner, then key, value pairs.
var respond = redis.NewScript(`if redis.call('TYPE', KEYS[1]).ok ~= 'hash' or redis.call('HGET', KEYS[1], 'owner') ~= ARGV[1] then return 0 end
for i = 2, #ARGV, 2 do redis.call('HSET', KEYS[2], ARGV[i], ARGV[i+1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl > 0 then redis.call('PEXPIRE', KEYS[2], ttl) end
return 1`)

// Respond adds answers to the input requests of owner's task id.
func (t *Tasks) Respond(ctx context.Context, owner, id string, responses map[string]json.RawMessage) error {
	args := []any{owner}
	for k, v := range responses {
		args = append(args, k, string(v))
	}
	n, err := respond.Run(ctx, t.Client, t.keys(id)[:2], args...).Int()
	if err != nil {
		return taskUnavailable(err)
	}
	if n == 0 {
		return notFound(id)
	}
	return nil
}

// take returns and deletes a task's answers.
var take = redis.NewScript(`local v = redis.call('HGETALL', KEYS[1])
redis.call('DEL', KEYS[1])
return v`)

// TakeResponses returns and removes the answers added to task id.
func (t *Tasks) TakeResponses(ctx context.Context, id string) (map[string]json.RawMessage, error) {
	kv, err := take.Run(ctx, t.Client, t.keys(id)[1:2]).StringSlice()
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, taskUnavailable(err)
	}
	out := map[string]json.RawMessage{}
	for i := 0; i+1 < len(kv); i += 2 {
		if json.Valid([]byte(kv[i+1])) {
			out[kv[i]] = json.RawMessage(kv[i+1])
		}
	}
	return out, nil
}

// cancelTask marks an owner's task cancelled.
var cancelTask = redis.NewScript(`if redis.call('TYPE', KEYS[1]).ok ~= 'hash' or redis.call('HGET', KEYS[1], 'owner') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'cancel', '1')
return 1`)

// Cancel records that owner asked to cancel task id.
func (t *Tasks) Cancel(ctx context.Context, owner, id string) error {
	n, err := cancelTask.Run(ctx, t.Client, t.keys(id)[:1], owner).Int()
	if err != nil {
		return taskUnavailable(err)
	}
	if n == 0 {
		return notFound(id)
	}
	return nil
}

var _ mcp.TaskStore = (*Tasks)(nil)
