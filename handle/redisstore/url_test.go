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
)

// TestNewAddress: New takes host:port or a redis:// or rediss:// URL as
// redis.ParseURL reads it; a bad one is an error that names the problem
// and never contains the password.
func TestNewAddress(t *testing.T) {
	for _, c := range []struct {
		addr string
		want func(*redis.Options) bool
		err  string
	}{
		{addr: "127.0.0.1:6379", want: func(o *redis.Options) bool {
			return o.Addr == "127.0.0.1:6379" && o.Password == "" && o.TLSConfig == nil
		}},
		{addr: "redis://:s3cret@10.0.0.1:6380/2", want: func(o *redis.Options) bool {
			return o.Addr == "10.0.0.1:6380" && o.Password == "s3cret" && o.DB == 2 && o.TLSConfig == nil
		}},
		{addr: "rediss://app:s3cret@cache.example:6390", want: func(o *redis.Options) bool {
			return o.Addr == "cache.example:6390" && o.Username == "app" && o.TLSConfig != nil && o.TLSConfig.ServerName == "cache.example"
		}},
		{addr: "cache.example", err: "pass host:port or a URL"},
		{addr: "http://app:s3cret@cache.example:6379", err: `the scheme "http" is not redis:// nor rediss://`},
		{addr: "unix://app:s3cret@/run/redis.sock", err: `the scheme "unix" is not redis:// nor rediss://`},
		{addr: "redis://app:s3cret@cache.example:6379/zero", err: "invalid database number"},
		{addr: "redis://app:s3cret@cache.example:6379?pool=3", err: "unexpected option: pool"},
		{addr: "redis://app:s3cret@cache example:6379", err: "invalid character"},
	} {
		s, err := redisstore.New(c.addr, time.Hour)
		switch {
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) || strings.Contains(err.Error(), "s3cret") {
				t.Errorf("New(%q): %v; want an error with %q, without the password", c.addr, err, c.err)
			}
		case err != nil:
			t.Errorf("New(%q): %v", c.addr, err)
		default:
			if o := s.Client.(*redis.Client).Options(); !c.want(o) {
				t.Errorf("New(%q): options %+v", c.addr, o)
			}
			s.Client.Close()
		}
	}
}

// TestPassword: a server that requires a password answers a store with
// the right one, and refuses the wrong one or none with an error that
// says to fix the credentials, without the password.
func TestPassword(t *testing.T) {
	srv := testredis.StartWith(t, testredis.Options{Password: "right-pw"})
	ctx := as("token:a")
	for _, c := range []struct {
		url string
		ok  bool
	}{
		{"redis://:right-pw@" + srv.Addr, true},
		{"redis://default:right-pw@" + srv.Addr + "/0", true},
		{"redis://:wrong-pw@" + srv.Addr, false},
		{"redis://" + srv.Addr, false},
		{srv.Addr, false},
	} {
		s, err := redisstore.New(c.url, time.Hour)
		if err != nil {
			t.Fatalf("New(%q): %v", c.url, err)
		}
		defer s.Client.Close()
		err = s.Ping(context.Background())
		if c.ok {
			if err != nil {
				t.Errorf("Ping with %s: %v", c.url, err)
				continue
			}
			h, err := handle.Put(ctx, s, &table{Name: "t"}, 1)
			if err == nil {
				_, err = handle.Resolve[*table](ctx, s, h.ID)
			}
			if err != nil {
				t.Errorf("with %s: %v", c.url, err)
			}
			continue
		}
		if !errors.Is(err, handle.ErrUnavailable) || !strings.Contains(err.Error(), "redis refused the credentials") ||
			!strings.Contains(err.Error(), "pass the right user and password") || strings.Contains(err.Error(), "wrong-pw") {
			t.Errorf("Ping with %s: %v; want the credentials refused", c.url, err)
		}
	}
}
