package redisstore_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/toolwire/toolwire/handle"
	"github.com/toolwire/toolwire/handle/redisstore"
	"github.com/toolwire/toolwire/internal/testredis"
	"github.com/toolwire/toolwire/tool"
)

type table struct {
	Name string `json:"name"`
	Rows int    `json:"rows"`
}

func (*table) HandleKind() handle.Kind {
	return handle.Kind{Prefix: "tbl", Noun: "table", Again: "load the file again"}
}

func as(id string) context.Context {
	return tool.WithCaller(context.Background(), tool.Caller{ID: id})
}

func newStore(t *testing.T, addr string, ttl time.Duration) *redisstore.Store {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: 2 * time.Second})
	t.Cleanup(func() { c.Close() })
	return &redisstore.Store{Client: c, TTL: ttl}
}

// TestReplicas: two stores on one Redis (two replicas) resolve each
// other's handles, for the owner only; release and bad handles as in
// memory.
func TestReplicas(t *testing.T) {
	srv := testredis.Start(t)
	s1 := newStore(t, srv.Addr, time.Hour)
	s2 := newStore(t, srv.Addr, time.Hour)
	a, b := as("token:a"), as("token:b")
	h, err := handle.Put(a, s1, &table{Name: "sales", Rows: 50000}, 1234)
	if err != nil {
		t.Fatal(err)
	}
	v, err := handle.Resolve[*table](a, s2, h.ID)
	if err != nil || v.Name != "sales" || v.Rows != 50000 {
		t.Fatalf("resolved on the other replica: %+v, %v", v, err)
	}
	for _, c := range []struct {
		ctx    context.Context
		id     string
		reason error
	}{
		{b, h.ID, handle.ErrExpired},
		{as(""), h.ID, handle.ErrExpired},
		{a, handle.NewID((*table)(nil).HandleKind()), handle.ErrExpired},
		{a, "tbl_x", handle.ErrMalformed},
		{a, "fil" + h.ID[3:], handle.ErrWrongKind},
	} {
		if _, err := handle.Resolve[*table](c.ctx, s2, c.id); !errors.Is(err, c.reason) {
			t.Errorf("Resolve(%s): %v, want %v", c.id, err, c.reason)
		}
		if err := handle.Release[*table](c.ctx, s2, c.id); !errors.Is(err, c.reason) {
			t.Errorf("Release(%s): %v, want %v", c.id, err, c.reason)
		}
	}
	if err := handle.Release[*table](a, s2, h.ID); err != nil {
		t.Fatalf("release by its owner: %v", err)
	}
	if _, err := handle.Resolve[*table](a, s1, h.ID); !errors.Is(err, handle.ErrExpired) || err.Error() != "handle "+h.ID+" is unknown to this server: it may belong to another session or user, the server may have restarted since it was made, or it expired; if you still need the table, load the file again" {
		t.Fatalf("a released handle: %v", err)
	}
}

// TestTTL: Redis expires an entry its lifetime after its last use, and
// each resolution renews it.
func TestTTL(t *testing.T) {
	srv := testredis.Start(t)
	s := newStore(t, srv.Addr, time.Hour)
	ctx := as("token:a")
	h, err := handle.Put(ctx, s, &table{Name: "t"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	key := "toolwire:handle:" + h.ID
	must := func(d time.Duration, err error) time.Duration {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	if ttl := must(s.Client.PTTL(ctx, key).Result()); ttl <= 0 || ttl > time.Hour {
		t.Fatalf("PTTL after put: %v", ttl)
	}
	// Shorten it in Redis, then a resolution renews it to the full TTL.
	if err := s.Client.PExpire(ctx, key, time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := handle.Resolve[*table](ctx, s, h.ID); err != nil {
		t.Fatal(err)
	}
	if ttl := must(s.Client.PTTL(ctx, key).Result()); ttl <= time.Minute {
		t.Fatalf("PTTL after a resolution: %v, want it renewed", ttl)
	}
	// Expired in Redis: the model gets the expired error.
	if err := s.Client.Del(ctx, key).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := handle.Resolve[*table](ctx, s, h.ID); !errors.Is(err, handle.ErrExpired) {
		t.Fatalf("after expiry: %v", err)
	}
	if d := handle.TTLNote((*table)(nil).HandleKind(), s); d != "Tables expire after 1 hour unused." {
		t.Fatalf("lifetime text %q", d)
	}
}

// TestRedisGoesAway: while Redis is down, calls fail with a clear error
// that is not an expiry; when it returns, the same handles resolve again.
func TestRedisGoesAway(t *testing.T) {
	srv := testredis.Start(t)
	s := newStore(t, srv.Addr, time.Hour)
	ctx := as("token:a")
	h, err := handle.Put(ctx, s, &table{Name: "kept"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	_, err = handle.Resolve[*table](ctx, s, h.ID)
	if !errors.Is(err, handle.ErrUnavailable) || errors.Is(err, handle.ErrExpired) || !strings.Contains(err.Error(), "handle store unavailable: redis:") ||
		!strings.Contains(err.Error(), "try again shortly") {
		t.Fatalf("resolve with Redis down: %v", err)
	}
	if _, err := handle.Put(ctx, s, &table{Name: "new"}, 1); !errors.Is(err, handle.ErrUnavailable) {
		t.Fatalf("put with Redis down: %v", err)
	}
	if err := handle.Release[*table](ctx, s, h.ID); !errors.Is(err, handle.ErrUnavailable) {
		t.Fatalf("release with Redis down: %v", err)
	}
	srv.Restart()
	v, err := handle.Resolve[*table](ctx, s, h.ID)
	if err != nil || v.Name != "kept" {
		t.Fatalf("after Redis returned: %+v, %v", v, err)
	}
}

// BenchmarkResolve is one resolution against a local Redis: one round
// trip.
func BenchmarkResolve(b *testing.B) {
	srv := testredis.Start(b)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer c.Close()
	s := &redisstore.Store{Client: c}
	ctx := as("token:bench")
	h, err := handle.Put(ctx, s, &table{Name: "t", Rows: 1}, 1)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := handle.Resolve[*table](ctx, s, h.ID); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRoundTrip is one PING to the same Redis: the round trip a
// resolution should not exceed by much.
func BenchmarkRoundTrip(b *testing.B) {
	srv := testredis.Start(b)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer c.Close()
	ctx := context.Background()
	for b.Loop() {
		if err := c.Ping(ctx).Err(); err != nil {
			b.Fatal(err)
		}
	}
}
