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
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
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
	// TTL is how long an entry lives after its last use; zero means
	// handle.DefaultTTL.
	TTL time.Duration
}

// New returns a store on the Redis server at addr: "host:port", or a
// URL as redis.ParseURL reads it, with a password, a database and TLS:
// redis://[user:password@]host:port[/db] or rediss://… (TLS; the server's
// certificate is checked against the system's roots, which
// SSL_CERT_FILE and SSL_CERT_DIR replace on Linux and the BSDs). Its
// errors never contain the password.
func New(addr string, ttl time.Duration) (*Store, error) {
	opts, err := options(addr)
	if err != nil {
		return nil, err
	}
	return &Store{Client: redis.NewClient(opts), TTL: ttl}, nil
}

// options reads the address of a Redis server: host:port, or a URL.
func options(addr string) (*redis.Options, error) {
	scheme, _, isURL := strings.Cut(addr, "://")
	if !isURL {
		if _, _, err := net.SplitHostPort(addr); err != nil {
			return nil, fmt.Errorf("redis address %q: %v: pass host:port or a URL, redis://[user:password@]host:port[/db] or rediss://… for TLS", addr, err)
		}
		return &redis.Options{Addr: addr}, nil
	}
	if scheme != "redis" && scheme != "rediss" {
		return nil, fmt.Errorf("redis URL: the scheme %q is not redis:// nor rediss:// (TLS): pass redis://[user:password@]host:port[/db] or rediss://…", scheme)
	}
	u, err := url.Parse(addr)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // without the URL, which holds the password
		}
		return nil, fmt.Errorf("redis URL: %v: pass %s://[user:password@]host:port[/db]", err, scheme)
	}
	opts, err := redis.ParseURL(addr)
	if err != nil {
		return nil, fmt.Errorf("redis URL %s: %v", u.Redacted(), err)
	}
	return opts, nil
}

// EntryTTL returns how long an entry lives after its last use: TTL, or
// handle.DefaultTTL.
func (s *Store) EntryTTL() time.Duration {
	if s.TTL > 0 {
		return s.TTL
	}
	return handle.DefaultTTL
}

func (s *Store) key(id string) string {
	if s.Prefix == "" {
		return "toolwire:handle:" + id
	}
	return s.Prefix + id
}

// unavailable wraps an error of the Redis client, saying what to do.
func unavailable(err error) error {
	msg := err.Error()
	var unknownCA x509.UnknownAuthorityError
	var hostname x509.HostnameError
	switch {
	case strings.HasPrefix(msg, "WRONGPASS") || strings.HasPrefix(msg, "NOAUTH") || strings.Contains(msg, "invalid password"):
		return fmt.Errorf("%w: redis refused the credentials (%v): pass the right user and password in the URL, redis://user:password@host:port", handle.ErrUnavailable, err)
	case errors.As(err, &unknownCA) || errors.As(err, &hostname):
		return fmt.Errorf("%w: redis: the server's TLS certificate is not trusted (%v): trust its CA (SSL_CERT_FILE=ca.pem) or name the host its certificate names", handle.ErrUnavailable, err)
	}
	return fmt.Errorf("%w: redis: %v; try again shortly", handle.ErrUnavailable, err)
}

// Ping checks that the server answers, with the credentials and
// certificate given.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.Client.Ping(ctx).Err(); err != nil {
		return unavailable(err)
	}
	return nil
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
		p.PExpire(ctx, k, s.EntryTTL())
		return nil
	})
	if err != nil {
		return unavailable(err)
	}
	return nil
}

// get returns the value and size of a key that belongs to the owner
// ("" for a field missing), renewing its lifetime, and nothing for a key
// that does not, or is not a hash: one command, so one round trip, and
// another owner's key is left as it was.
var get = redis.NewScript(`if redis.call('TYPE', KEYS[1]).ok ~= 'hash' then return false end
local v = redis.call('HMGET', KEYS[1], 'owner', 'value', 'size')
if v[1] ~= ARGV[1] then return false end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return {v[2] or '', v[3] or ''}`)

// Get returns owner's entry id, its value a json.RawMessage, and renews
// its lifetime.
func (s *Store) Get(ctx context.Context, owner, id string) (handle.Entry, error) {
	vals, err := get.Run(ctx, s.Client, []string{s.key(id)}, owner, s.EntryTTL().Milliseconds()).StringSlice()
	if errors.Is(err, redis.Nil) {
		return handle.Entry{}, fmt.Errorf("%s: %w", id, handle.ErrExpired)
	}
	if err != nil {
		return handle.Entry{}, unavailable(err)
	}
	if len(vals) != 2 {
		return handle.Entry{}, fmt.Errorf("redisstore: %s: unexpected reply %q", id, vals)
	}
	// The entry is input like any other: whoever reaches Redis may have
	// written it.
	size, err := strconv.ParseInt(vals[1], 10, 64)
	if err != nil || size < 0 {
		return handle.Entry{}, fmt.Errorf("redisstore: %s: %w: its size %q is not a number of bytes", id, handle.ErrCorrupt, clip(vals[1]))
	}
	if !json.Valid([]byte(vals[0])) {
		return handle.Entry{}, fmt.Errorf("redisstore: %s: %w: its value is not JSON", id, handle.ErrCorrupt)
	}
	return handle.Entry{ID: id, Owner: owner, Value: json.RawMessage(vals[0]), Size: size}, nil
}

// clip shortens a stored string for an error message.
func clip(s string) string {
	if len(s) > 40 {
		return s[:37] + "..."
	}
	return s
}

// release deletes a key when it belongs to the owner, atomically.
var release = redis.NewScript(`if redis.call('TYPE', KEYS[1]).ok == 'hash' and redis.call('HGET', KEYS[1], 'owner') == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`)

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
