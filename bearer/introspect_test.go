package bearer_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/bearer"
	"github.com/toolwire/toolwire/internal/testas"
)

// newIntrospection returns a test authorization server and an
// introspection verifier of its tokens, whose endpoint comes from the
// server's metadata.
func newIntrospection(t *testing.T, cfg bearer.IntrospectionConfig) (*testas.Server, *bearer.Introspection) {
	t.Helper()
	as := testas.New(t, audience)
	cfg.Issuer, cfg.Audience = as.URL, audience
	if cfg.ClientID == "" {
		cfg.ClientID, cfg.ClientSecret = testas.IntrospectionClientID, testas.IntrospectionClientSecret
	}
	v, err := bearer.NewIntrospection(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return as, v
}

// TestIntrospection checks each kind of introspection answer: only an
// active token for this audience, issuer and a subject, not past its
// expiry or before its not-before, is accepted.
func TestIntrospection(t *testing.T) {
	as, v := newIntrospection(t, bearer.IntrospectionConfig{})
	now := time.Now()
	good := func(extra map[string]any) map[string]any {
		a := map[string]any{"active": true, "sub": "alice", "client_id": "c", "scope": "mcp data:read", "aud": []string{audience}, "iss": as.URL, "exp": now.Add(time.Hour).Unix()}
		for k, v := range extra {
			if v == nil {
				delete(a, k)
			} else {
				a[k] = v
			}
		}
		return a
	}
	for _, tt := range []struct {
		name   string
		answer map[string]any // nil: none registered (the server says inactive)
		want   string
	}{
		{"active", good(nil), ""},
		{"audience as a string, no issuer, username", good(map[string]any{"aud": audience, "iss": nil, "sub": nil, "username": "alice"}), ""},
		{"unknown", nil, "not active"},
		{"inactive", good(map[string]any{"active": false}), "not active"},
		{"another audience", good(map[string]any{"aud": "https://other.example.com"}), "another audience"},
		{"no audience", good(map[string]any{"aud": nil}), "another audience"},
		{"another issuer", good(map[string]any{"iss": "https://evil.example.com"}), "another issuer"},
		{"no subject", good(map[string]any{"sub": nil}), "names no subject"},
		{"expired", good(map[string]any{"exp": now.Add(-time.Minute).Unix()}), "expired at"},
		{"not yet valid", good(map[string]any{"nbf": now.Add(time.Hour).Unix()}), "not valid before"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			token := "opaque-" + strings.ReplaceAll(tt.name, " ", "-")
			if tt.answer != nil {
				as.Answer(token, tt.answer)
			}
			info, err := v.Verify(context.Background(), token)
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if info.Subject != "alice" || info.Issuer != as.URL || !slices.Contains(info.Audience, audience) {
					t.Errorf("info %+v", info)
				}
				return
			}
			if !errors.Is(err, bearer.ErrInvalidToken) || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), token) {
				t.Errorf("error %v: want ErrInvalidToken saying %q, without the token", err, tt.want)
			}
		})
	}
}

// TestIntrospectionCache: an answer is trusted for the TTL, and never
// past the token's expiry; a token too long is refused unasked.
func TestIntrospectionCache(t *testing.T) {
	as, v := newIntrospection(t, bearer.IntrospectionConfig{TTL: time.Hour})
	as.Answer("t1", map[string]any{"active": true, "sub": "alice", "aud": audience, "exp": time.Now().Add(time.Hour).Unix()})
	soon := time.Now().Add(time.Second).Unix()
	as.Answer("t2", map[string]any{"active": true, "sub": "alice", "aud": audience, "exp": soon})
	for range 3 {
		if _, err := v.Verify(context.Background(), "t1"); err != nil {
			t.Fatal(err)
		}
	}
	if n := as.Introspections(); n != 1 {
		t.Errorf("%d introspections for one token verified 3 times, want 1", n)
	}
	if _, err := v.Verify(context.Background(), "t2"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Until(time.Unix(soon, 0)) + 50*time.Millisecond)
	if _, err := v.Verify(context.Background(), "t2"); !errors.Is(err, bearer.ErrInvalidToken) {
		t.Errorf("expired token, remembered: %v", err)
	}
	before := as.Introspections()
	if _, err := v.Verify(context.Background(), strings.Repeat("a", bearer.MaxTokenSize+1)); !errors.Is(err, bearer.ErrInvalidToken) || as.Introspections() != before {
		t.Errorf("huge token: %v, after %d introspections", err, as.Introspections()-before)
	}
}

// TestIntrospectionUnavailable: wrong client credentials, or a server
// down, make tokens uncheckable (503), not invalid.
func TestIntrospectionUnavailable(t *testing.T) {
	_, v := newIntrospection(t, bearer.IntrospectionConfig{ClientID: "rs", ClientSecret: "wrong"})
	if _, err := v.Verify(context.Background(), "t"); !errors.Is(err, bearer.ErrUnavailable) || !strings.Contains(err.Error(), "check this server's client id and secret") {
		t.Errorf("wrong credentials: %v", err)
	}
	down, err := bearer.NewIntrospection(context.Background(), bearer.IntrospectionConfig{Issuer: "http://127.0.0.1:1", Audience: audience, Endpoint: "http://127.0.0.1:1/introspect"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := down.Verify(context.Background(), "t"); !errors.Is(err, bearer.ErrUnavailable) || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("server down: %v", err)
	}
}
