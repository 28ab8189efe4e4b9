package redisstore_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/handle"
	"github.com/toolwire/toolwire/internal/testredis"
)

// TestForgedEntry: an entry whoever reaches Redis wrote is input like any
// other: a value that is not JSON, a size that is not a number of bytes,
// a key that is not a hash, a hash missing its fields read as a corrupt
// (or, without the owner, absent) handle, never as a value or as Redis
// being down.
func TestForgedEntry(t *testing.T) {
	srv := testredis.Start(t)
	s := newStore(t, srv.Addr, time.Hour)
	ctx := as("token:a")
	for _, c := range []struct {
		name   string
		forge  func(key string) error
		reason error
	}{
		{"value not JSON", func(k string) error { return s.Client.HSet(ctx, k, "value", `{"name":`).Err() }, handle.ErrCorrupt},
		{"size not a number", func(k string) error { return s.Client.HSet(ctx, k, "size", "12kB").Err() }, handle.ErrCorrupt},
		{"size negative", func(k string) error { return s.Client.HSet(ctx, k, "size", "-1").Err() }, handle.ErrCorrupt},
		{"no value", func(k string) error { return s.Client.HDel(ctx, k, "value").Err() }, handle.ErrCorrupt},
		{"no size", func(k string) error { return s.Client.HDel(ctx, k, "size").Err() }, handle.ErrCorrupt},
		{"no owner", func(k string) error { return s.Client.HDel(ctx, k, "owner").Err() }, handle.ErrExpired},
		{"another owner", func(k string) error { return s.Client.HSet(ctx, k, "owner", "token:b").Err() }, handle.ErrExpired},
		{"not a hash", func(k string) error {
			if err := s.Client.Del(ctx, k).Err(); err != nil {
				return err
			}
			return s.Client.Set(ctx, k, "token:a", 0).Err()
		}, handle.ErrExpired},
	} {
		t.Run(c.name, func(t *testing.T) {
			h, err := handle.Put(ctx, s, &table{Name: "sales", Rows: 5}, 100)
			if err != nil {
				t.Fatal(err)
			}
			key := "toolwire:handle:" + h.ID
			if err := c.forge(key); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Get(ctx, "token:a", h.ID); !errors.Is(err, c.reason) {
				t.Fatalf("Get of a forged entry: %v; want %v", err, c.reason)
			}
			v, err := handle.Resolve[*table](ctx, s, h.ID)
			if !errors.Is(err, c.reason) || errors.Is(err, handle.ErrUnavailable) {
				t.Fatalf("resolved a forged entry: %+v, %v; want %v", v, err, c.reason)
			}
			if errors.Is(err, handle.ErrCorrupt) && !strings.Contains(err.Error(), "load the file again") {
				t.Errorf("the error does not say what to do: %v", err)
			}
			if err := handle.Release[*table](ctx, s, h.ID); err != nil && !errors.Is(err, handle.ErrExpired) {
				t.Errorf("releasing a forged entry: %v", err)
			}
		})
	}
}
