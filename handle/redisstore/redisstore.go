// Package redisstore is a handle.Store in Redis, so that several replicas
// of a stateless MCP server (behind any load balancer) resolve each
// other's handles. It is a Go module of its own: programs that keep
// handles in memory never download a Redis client.
//
// Each entry is a Redis hash (owner, value as JSON, size) under
// Prefix+handle that expires after the store's TTL; resolving it renews
// the expiry in the same command (a script: one round trip). Values must encode as JSON: Resolve
// decodes them into the handle's type. Redis's own memory policy bounds
// memory (maxmemory with volatile-lru drops the least recently used
// handles, which then read as expired).
package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/toolwire/toolwire/handle"
)

// Store is a handle.Store in Redis.
type Store struct {
	// Client is the Redis client; the store does not close it.
	Client redis.UniversalClient
	// Prefix starts every key; empty means "toolwire:handle:".
	Prefix string
	// Lifetime is how long an entry lives after its last use; zero means
	// handle.DefaultTTL.
	Lifetime time.Duration
}

// New returns a store on the Redis server at addr ("host:port").
func New(addr string, ttl time.Duration) *Store {
	return &Store{Client: redis.NewClient(&redis.Options{Addr: addr}), Lifetime: ttl}
}

// TTL returns the lifetime of an entry after its last use.
func (s *Store) TTL() time.Duration {
	if s.Lifetime > 0 {
		return s.Lifetime
	}
	return handle.DefaultTTL
}

func (s *Store) key(id string) string {
	if s.Prefix == "" {
		return "toolwire:handle:" + id
	}
	return s.Prefix + id
}

// unavailable wraps an error of the Redis client.
func unavailable(err error) error {
	return fmt.Errorf("%w: redis: %v; try again shortly", handle.ErrUnavailable, err)
}

// Put stores e, encoding its value as JSON.
func (s *Store) Put(ctx context.Context, e handle.Entry) error {
	v, err := json.Marshal(e.Value)
	if err != nil {
		return fmt.Errorf("redisstore: the value of %s does not encode as JSON: %w", e.ID, err)
	}
	k := s.key(e.ID)
	_, err = s.Client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, k, "owner", e.Owner, "value", v, "size", e.Size)
		p.PExpire(ctx, k, s.TTL())
		return nil
	})
	if err != nil {
		return unavailable(err)
	}
	return nil
}

// get returns the value and size of a key that belongs to the owner,
// renewing its lifetime, and nothing for a key that does not: one
// command, so one round trip, and another owner's key is left as it was.
var get = redis.NewScript(`local v = redis.call('HMGET', KEYS[1], 'owner', 'value', 'size')
if v[1] ~= ARGV[1] then return false end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return {v[2], v[3]}`)

// Get returns owner's entry id, its value a json.RawMessage, and renews
// its lifetime.
func (s *Store) Get(ctx context.Context, owner, id string) (handle.Entry, error) {
	vals, err := get.Run(ctx, s.Client, []string{s.key(id)}, owner, s.TTL().Milliseconds()).StringSlice()
	if errors.Is(err, redis.Nil) {
		return handle.Entry{}, fmt.Errorf("%s: %w", id, handle.ErrExpired)
	}
	if err != nil {
		return handle.Entry{}, unavailable(err)
	}
	if len(vals) != 2 {
		return handle.Entry{}, fmt.Errorf("redisstore: %s: unexpected reply %q", id, vals)
	}
	size, _ := strconv.ParseInt(vals[1], 10, 64)
	return handle.Entry{ID: id, Owner: owner, Value: json.RawMessage(vals[0]), Size: size}, nil
}

// release deletes a key when it belongs to the owner, atomically.
var release = redis.NewScript(`if redis.call('HGET', KEYS[1], 'owner') == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`)

// Release drops owner's entry id.
func (s *Store) Release(ctx context.Context, owner, id string) error {
	n, err := release.Run(ctx, s.Client, []string{s.key(id)}, owner).Int()
	if err != nil && !errors.Is(err, redis.Nil) {
		return unavailable(err)
	}
	if n == 0 {
		return fmt.Errorf("%s: %w", id, handle.ErrExpired)
	}
	return nil
}
