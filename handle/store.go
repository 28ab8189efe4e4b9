package handle

import (
	"container/list"
	"context"
	"fmt"
	"sync"
	"time"
)

// Entry is a value kept behind a handle.
type Entry struct {
	// ID is the handle.
	ID string
	// Owner is the caller the value belongs to (tool.Caller.ID); only
	// that caller resolves or releases it.
	Owner string
	// Value is the value. A store that keeps values out of process
	// (Redis) stores its JSON encoding and returns a json.RawMessage;
	// Resolve decodes it.
	Value any
	// Size is what the value costs the store's memory bound, in bytes.
	Size int64
}

// Store keeps entries behind handles. Get and Release answer ErrExpired
// (wrapped) for an entry that is not there for the owner — expired,
// evicted, released, never stored, or another owner's — and
// ErrUnavailable (wrapped) when the store cannot be reached. A store may
// tell the first three apart for the owner (Memory does); another owner's
// entry must read exactly as one never stored.
type Store interface {
	// Put stores e, first dropping the least recently used entries
	// the memory bound needs to make room; a value larger than the
	// whole bound is ErrTooLarge and nothing is stored.
	Put(ctx context.Context, e Entry) error
	// Get returns owner's entry id and marks it used now, restarting
	// its lifetime.
	Get(ctx context.Context, owner, id string) (Entry, error)
	// Release drops owner's entry id.
	Release(ctx context.Context, owner, id string) error
	// EntryTTL is how long an entry lives after its last use.
	EntryTTL() time.Duration
}

// DefaultTTL is the lifetime of an entry after its last use when a store
// sets none.
const DefaultTTL = 30 * time.Minute

// Memory is a Store in process memory. Its zero value is ready to use,
// with DefaultTTL and no memory bound. It is safe for concurrent use.
type Memory struct {
	// TTL is how long an entry lives after its last use; zero means
	// DefaultTTL.
	TTL time.Duration
	// MaxBytes bounds the sum of the entries' sizes; zero means no bound.
	MaxBytes int64
	// Now tells the time; nil means time.Now. Tests set it to move time.
	Now func() time.Time
	// OnDrop, when set, is called with each entry the store drops:
	// expired, evicted, released. It runs after the store's lock is
	// released, so it may take its time (drop a DuckDB table).
	OnDrop func(Entry)

	mu    sync.Mutex
	byID  map[string]*list.Element // of *memEntry
	lru   list.List                // front: most recently used
	bytes int64
	// gone remembers the last maxGone entries dropped (ids in goneRing,
	// oldest at goneNext once full), so that their owner is told why.
	gone     map[string]tombstone
	goneRing []string
	goneNext int
}

// maxGone bounds the dropped entries a Memory remembers: about 100 bytes
// each. A handle dropped longer ago reads as unknown.
const maxGone = 4096

// tombstone is what a Memory remembers of an entry it dropped.
type tombstone struct {
	owner string
	why   dropReason
}

// dropReason says why a Memory dropped an entry.
type dropReason int

const (
	droppedExpired  dropReason = iota + 1 // unused for its lifetime
	droppedEvicted                        // for room under the memory bound
	droppedReleased                       // by its owner
)

// goneError is a Memory's answer for an entry it remembers dropping: its
// owner learns why (see Resolve).
type goneError struct {
	id  string
	why dropReason
	ttl time.Duration
}

func (e *goneError) Error() string { return e.id + ": " + ErrExpired.Error() }

// Unwrap returns ErrExpired.
func (e *goneError) Unwrap() error { return ErrExpired }

type memEntry struct {
	Entry
	used time.Time
}

// EntryTTL returns how long an entry lives after its last use: TTL, or
// DefaultTTL.
func (m *Memory) EntryTTL() time.Duration {
	if m.TTL > 0 {
		return m.TTL
	}
	return DefaultTTL
}

func (m *Memory) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

// Put stores e.
func (m *Memory) Put(_ context.Context, e Entry) error {
	if m.MaxBytes > 0 && e.Size > m.MaxBytes {
		return fmt.Errorf("%w: %d bytes, bound %d bytes", ErrTooLarge, e.Size, m.MaxBytes)
	}
	now := m.now()
	m.mu.Lock()
	if m.byID == nil {
		m.byID = map[string]*list.Element{}
	}
	dropped := m.expireLocked(now, nil)
	if old, ok := m.byID[e.ID]; ok {
		dropped = append(dropped, m.removeLocked(old, 0))
	}
	for m.MaxBytes > 0 && m.bytes+e.Size > m.MaxBytes {
		dropped = append(dropped, m.removeLocked(m.lru.Back(), droppedEvicted))
	}
	m.byID[e.ID] = m.lru.PushFront(&memEntry{Entry: e, used: now})
	m.bytes += e.Size
	m.mu.Unlock()
	m.drop(dropped)
	return nil
}

// Get returns owner's entry id.
func (m *Memory) Get(_ context.Context, owner, id string) (Entry, error) {
	now := m.now()
	m.mu.Lock()
	el, ok := m.byID[id]
	if !ok || el.Value.(*memEntry).Owner != owner {
		err := m.goneLocked(owner, id)
		m.mu.Unlock()
		return Entry{}, err
	}
	me := el.Value.(*memEntry)
	if now.Sub(me.used) >= m.EntryTTL() {
		dropped := m.expireLocked(now, nil)
		err := m.goneLocked(owner, id)
		m.mu.Unlock()
		m.drop(dropped)
		return Entry{}, err
	}
	me.used = now
	m.lru.MoveToFront(el)
	e := me.Entry
	m.mu.Unlock()
	return e, nil
}

// Release drops owner's entry id.
func (m *Memory) Release(_ context.Context, owner, id string) error {
	now := m.now()
	m.mu.Lock()
	el, ok := m.byID[id]
	if !ok || el.Value.(*memEntry).Owner != owner || now.Sub(el.Value.(*memEntry).used) >= m.EntryTTL() {
		dropped := m.expireLocked(now, nil)
		err := m.goneLocked(owner, id)
		m.mu.Unlock()
		m.drop(dropped)
		return err
	}
	dropped := []Entry{m.removeLocked(el, droppedReleased)}
	m.mu.Unlock()
	m.drop(dropped)
	return nil
}

// Len returns the number of entries held, expired ones included until
// the store notices them.
func (m *Memory) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.byID)
}

// expireLocked removes the entries unused for TTL, which sit at the back.
func (m *Memory) expireLocked(now time.Time, dropped []Entry) []Entry {
	ttl := m.EntryTTL()
	for el := m.lru.Back(); el != nil && now.Sub(el.Value.(*memEntry).used) >= ttl; el = m.lru.Back() {
		dropped = append(dropped, m.removeLocked(el, droppedExpired))
	}
	return dropped
}

// removeLocked removes an entry, remembering why when why is set.
func (m *Memory) removeLocked(el *list.Element, why dropReason) Entry {
	me := m.lru.Remove(el).(*memEntry)
	delete(m.byID, me.ID)
	m.bytes -= me.Size
	if why != 0 {
		m.rememberLocked(me.ID, tombstone{owner: me.Owner, why: why})
	}
	return me.Entry
}

// rememberLocked keeps a dropped entry's tombstone, forgetting the oldest
// past maxGone.
func (m *Memory) rememberLocked(id string, t tombstone) {
	if m.gone == nil {
		m.gone = map[string]tombstone{}
	}
	if len(m.goneRing) < maxGone {
		m.goneRing = append(m.goneRing, id)
	} else {
		delete(m.gone, m.goneRing[m.goneNext])
		m.goneRing[m.goneNext] = id
		m.goneNext = (m.goneNext + 1) % maxGone
	}
	m.gone[id] = t
}

// goneLocked is the error for id, which owner has no entry of: why it was
// dropped when the store remembers dropping owner's entry, else the
// error of a handle never stored (for another owner's entry too).
func (m *Memory) goneLocked(owner, id string) error {
	if t, ok := m.gone[id]; ok && t.owner == owner {
		return &goneError{id: id, why: t.why, ttl: m.EntryTTL()}
	}
	return fmt.Errorf("%s: %w", id, ErrExpired)
}

func (m *Memory) drop(entries []Entry) {
	if m.OnDrop == nil {
		return
	}
	for _, e := range entries {
		m.OnDrop(e)
	}
}
