package handle_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolwire/toolwire/handle"
	"github.com/toolwire/toolwire/tool"
)

// table is a value kept behind tbl_ handles in these tests.
type table struct {
	Name string `json:"name"`
	Rows int    `json:"rows"`
}

func (*table) HandleKind() handle.Kind {
	return handle.Kind{Prefix: "tbl", Noun: "table", Again: "load the file again"}
}

// file is a second kind, for wrong-kind handles.
type file struct{ Path string }

func (*file) HandleKind() handle.Kind { return handle.Kind{Prefix: "fil", Noun: "file"} }

// clock is a settable time for a store.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func as(id string) context.Context {
	return tool.WithCaller(context.Background(), tool.Caller{ID: id})
}

func TestNewParse(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		h := handle.NewID((*table)(nil).HandleKind())
		if seen[h] {
			t.Fatalf("handle %s minted twice", h)
		}
		seen[h] = true
		if len(h) != len("tbl_")+22 || !strings.HasPrefix(h, "tbl_") {
			t.Fatalf("handle %q: want tbl_ and 22 characters", h)
		}
		p, err := handle.Parse(h)
		if err != nil || p != "tbl" {
			t.Fatalf("Parse(%q) = %q, %v", h, p, err)
		}
	}
}

// TestBadHandles resolves every kind of bad handle: each is an error the
// model can act on, and a foreign handle reads exactly like an unknown one.
func TestBadHandles(t *testing.T) {
	clk := &clock{t: time.Unix(1e9, 0)}
	s := &handle.Memory{TTL: time.Minute, Now: clk.Now}
	a := as("token:a")
	mine, err := handle.Put(a, s, &table{Name: "t1"}, 10)
	if err != nil {
		t.Fatal(err)
	}
	released, _ := handle.Put(a, s, &table{Name: "t2"}, 10)
	if err := handle.Release[*table](a, s, released.ID); err != nil {
		t.Fatal(err)
	}
	stale, _ := handle.Put(a, s, &table{Name: "t3"}, 10)
	clk.Add(30 * time.Second)
	if _, err := handle.Resolve[*table](a, s, mine.ID); err != nil { // keeps mine alive
		t.Fatal(err)
	}
	clk.Add(31 * time.Second) // stale is now unused for 61 s
	fileH, _ := handle.Put(a, s, &file{Path: "x"}, 1)
	unknown := handle.NewID((*table)(nil).HandleKind())

	cases := []struct {
		name, caller, id string
		reason           error
		want             string
	}{
		{"empty", "token:a", "", handle.ErrMalformed, `"" is not a table handle: a table handle is tbl_ followed by 22`},
		{"no prefix", "token:a", "Qx0aaaaaaaaaaaaaaaaaaA", handle.ErrMalformed, "is not a table handle"},
		{"short", "token:a", "tbl_abc", handle.ErrMalformed, `"tbl_abc" is not a table handle`},
		{"long", "token:a", mine.ID + "A", handle.ErrMalformed, "is not a table handle"},
		{"bad character", "token:a", "tbl_" + strings.Repeat("a", 20) + "+A", handle.ErrMalformed, "is not a table handle"},
		{"upper-case prefix", "token:a", "TBL" + mine.ID[3:], handle.ErrMalformed, "is not a table handle"},
		{"non-canonical end", "token:a", mine.ID[:len(mine.ID)-1] + "B", handle.ErrMalformed, "is not a table handle"},
		{"a whole table", "token:a", `{"rows":[[1,2]]}`, handle.ErrMalformed, "pass the handle a tool returned, unchanged"},
		{"wrong kind", "token:a", fileH.ID, handle.ErrWrongKind, fileH.ID + " is a fil_ handle, not a table handle; pass a table handle (tbl_…)"},
		{"unknown", "token:a", unknown, handle.ErrExpired, "handle " + unknown + unknownHere},
		{"expired", "token:a", stale.ID, handle.ErrExpired, "handle " + stale.ID + " expired: it was unused for 1 minute; load the file again"},
		{"released", "token:a", released.ID, handle.ErrExpired, "handle " + released.ID + " was released; load the file again"},
		// Another caller's handle, live or dropped, reads as one never
		// made: nobody learns of another's handles.
		{"other caller", "token:b", mine.ID, handle.ErrExpired, "handle " + mine.ID + unknownHere},
		{"anonymous caller", "", mine.ID, handle.ErrExpired, "handle " + mine.ID + unknownHere},
		{"other caller's expired", "token:b", stale.ID, handle.ErrExpired, "handle " + stale.ID + unknownHere},
		{"other caller's released", "token:b", released.ID, handle.ErrExpired, "handle " + released.ID + unknownHere},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := as(c.caller)
			for _, op := range []string{"resolve", "release"} {
				var err error
				if op == "resolve" {
					_, err = handle.Resolve[*table](ctx, s, c.id)
				} else {
					err = handle.Release[*table](ctx, s, c.id)
				}
				if !errors.Is(err, c.reason) {
					t.Fatalf("%s: error %v, want %v", op, err, c.reason)
				}
				if !strings.Contains(err.Error(), c.want) {
					t.Fatalf("%s: error %q, want it to contain %q", op, err, c.want)
				}
				var he *handle.Error
				if !errors.As(err, &he) || errors.Is(err, tool.ErrFatal) {
					t.Fatalf("%s: %v is not a *handle.Error a model can act on", op, err)
				}
			}
		})
	}
	// B's attempts left A's table in place.
	if v, err := handle.Resolve[*table](a, s, mine.ID); err != nil || v.Name != "t1" {
		t.Fatalf("A's table after B's attempts: %v, %v", v, err)
	}
}

func TestTTL(t *testing.T) {
	clk := &clock{t: time.Unix(1e9, 0)}
	var dropped []string
	s := &handle.Memory{TTL: 10 * time.Minute, Now: clk.Now, OnDrop: func(e handle.Entry) { dropped = append(dropped, e.Value.(*table).Name) }}
	ctx := as("session:1")
	h, _ := handle.Put(ctx, s, &table{Name: "a"}, 1)
	for range 5 { // each use restarts the lifetime
		clk.Add(9 * time.Minute)
		if _, err := handle.Resolve[*table](ctx, s, h.ID); err != nil {
			t.Fatalf("used within its lifetime: %v", err)
		}
	}
	clk.Add(10 * time.Minute)
	if _, err := handle.Resolve[*table](ctx, s, h.ID); !errors.Is(err, handle.ErrExpired) {
		t.Fatalf("after its lifetime: %v, want ErrExpired", err)
	}
	if strings.Join(dropped, ",") != "a" || s.Len() != 0 {
		t.Fatalf("dropped %v, %d left; want [a], 0", dropped, s.Len())
	}
}

func TestMemoryBoundEvictsLeastRecentlyUsed(t *testing.T) {
	var dropped []string
	s := &handle.Memory{MaxBytes: 300, OnDrop: func(e handle.Entry) { dropped = append(dropped, e.Value.(*table).Name) }}
	ctx := as("session:1")
	a, _ := handle.Put(ctx, s, &table{Name: "a"}, 100)
	b, _ := handle.Put(ctx, s, &table{Name: "b"}, 100)
	c, _ := handle.Put(ctx, s, &table{Name: "c"}, 100)
	if _, err := handle.Resolve[*table](ctx, s, a.ID); err != nil { // a is now the most recent
		t.Fatal(err)
	}
	if _, err := handle.Put(ctx, s, &table{Name: "d"}, 150); err != nil { // needs b and c gone
		t.Fatal(err)
	}
	if strings.Join(dropped, ",") != "b,c" {
		t.Fatalf("evicted %v, want [b c]", dropped)
	}
	for _, id := range []string{b.ID, c.ID} {
		_, err := handle.Resolve[*table](ctx, s, id)
		if !errors.Is(err, handle.ErrExpired) || err.Error() != "handle "+id+" was dropped to make room for newer ones (the server's memory bound); load the file again" {
			t.Fatalf("evicted handle: %v, want the evicted error", err)
		}
	}
	if _, err := handle.Resolve[*table](ctx, s, a.ID); err != nil {
		t.Fatalf("the recently used table was evicted: %v", err)
	}
	// Larger than the whole bound: refused, nothing evicted or stored.
	_, err := handle.Put(ctx, s, &table{Name: "huge"}, 301)
	if !errors.Is(err, handle.ErrTooLarge) || !strings.Contains(err.Error(), "the table is too large to keep") {
		t.Fatalf("oversized value: %v", err)
	}
	if s.Len() != 2 || len(dropped) != 2 {
		t.Fatalf("after the refused put: %d entries, dropped %v", s.Len(), dropped)
	}
}

func TestResolveRawJSON(t *testing.T) {
	// A store that keeps values out of process returns their encoding.
	s := &handle.Memory{}
	ctx := as("x")
	id := handle.NewID((*table)(nil).HandleKind())
	if err := s.Put(ctx, handle.Entry{ID: id, Owner: "x", Value: json.RawMessage(`{"name":"t","rows":3}`)}); err != nil {
		t.Fatal(err)
	}
	v, err := handle.Resolve[*table](ctx, s, id)
	if err != nil || v.Name != "t" || v.Rows != 3 {
		t.Fatalf("Resolve = %+v, %v", v, err)
	}
}

type loadIn struct {
	Name string `json:"name"`
}

type loadOut struct {
	Table handle.Of[*table] `json:"table"`
	Rows  int               `json:"rows"`
}

type countIn struct {
	Table handle.Of[*table]            `json:"table"`
	Extra []handle.Of[*table]          `json:"extra,omitempty"`
	Named map[string]handle.Of[*table] `json:"named,omitempty"`
}

func tools(t *testing.T, s handle.Store) *tool.Registry {
	t.Helper()
	load := tool.Must(handle.Tool(s, "load", "Loads a table.", func(ctx context.Context, in loadIn) (loadOut, error) {
		h, err := handle.Put(ctx, s, &table{Name: in.Name, Rows: 7}, 1)
		return loadOut{Table: h, Rows: 7}, err
	}))
	count := tool.Must(handle.Tool(s, "count", "Counts rows.", func(_ context.Context, in countIn) (string, error) {
		n := in.Table.Value().Rows
		for _, e := range in.Extra {
			n += e.Value().Rows
		}
		for _, e := range in.Named {
			n += e.Value().Rows
		}
		return in.Table.Value().Name + ":" + strings.Repeat("x", n), nil
	}))
	var r tool.Registry
	if err := r.Add(load, count); err != nil {
		t.Fatal(err)
	}
	return &r
}

// TestTool runs handle tools through a registry, as an agent and the MCP
// server do: the model sees strings, the tool gets values.
func TestTool(t *testing.T) {
	s := &handle.Memory{TTL: 2 * time.Hour, MaxBytes: 1 << 20}
	r := tools(t, s)
	load, _ := r.Lookup("load")
	if d := load.Info().Description; d != "Loads a table. Tables expire after 2 hours unused, or sooner when the server needs the room (least recently used first)." {
		t.Errorf("description %q", d)
	}
	count, _ := r.Lookup("count")
	if d := count.Info().Description; d != "Counts rows." {
		t.Errorf("a tool that creates no handles got %q", d)
	}
	if is := string(count.Info().InputSchema); !strings.Contains(is, `"table":{"description":"A table handle (tbl_…) returned by another tool","type":"string"}`) {
		t.Errorf("input schema %s", is)
	}
	a := as("token:a")
	res, err := r.Call(a, "load", json.RawMessage(`{"name":"sales"}`))
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Table string `json:"table"`
	}
	if err := json.Unmarshal(res.StructuredContent.(json.RawMessage), &out); err != nil {
		t.Fatal(err)
	}
	args := json.RawMessage(`{"table":"` + out.Table + `","extra":["` + out.Table + `"],"named":{"t":"` + out.Table + `"}}`)
	res, err = r.Call(a, "count", args)
	if err != nil || res.ForModel().Text != "sales:"+strings.Repeat("x", 21) {
		t.Fatalf("count: %+v, %v", res, err)
	}
	// Another caller, and a bad handle inside a list: tool errors.
	if _, err := r.Call(as("token:b"), "count", args); !errors.Is(err, handle.ErrExpired) || errors.Is(err, tool.ErrFatal) {
		t.Fatalf("B's call: %v", err)
	}
	bad := json.RawMessage(`{"table":"` + out.Table + `","extra":["tbl_nope"]}`)
	if _, err := r.Call(a, "count", bad); !errors.Is(err, handle.ErrMalformed) {
		t.Fatalf("bad handle in a list: %v", err)
	}
	if _, err := r.Call(a, "count", json.RawMessage(`{"table":42}`)); err == nil || errors.Is(err, tool.ErrFatal) {
		t.Fatalf("a number for a handle: %v", err)
	}
}

func TestConcurrent(t *testing.T) {
	s := &handle.Memory{MaxBytes: 50}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := as(string(rune('a' + g)))
			for i := range 200 {
				h, err := handle.Put(ctx, s, &table{Rows: i}, 1)
				if err != nil {
					t.Error(err)
					return
				}
				if _, err := handle.Resolve[*table](ctx, s, h.ID); err != nil && !errors.Is(err, handle.ErrExpired) {
					t.Error(err)
				}
				if i%3 == 0 {
					_ = handle.Release[*table](ctx, s, h.ID)
				}
			}
		}()
	}
	wg.Wait()
	if s.Len() > 50 {
		t.Fatalf("%d entries over a bound of 50", s.Len())
	}
}

// unknownHere ends the message for a handle a store has no value of for
// the caller and no record of dropping for it.
const unknownHere = " is unknown to this server: it may belong to another session or user, the server may have restarted since it was made, or it expired; if you still need the table, load the file again"
