package bearer_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/toolwire/toolwire/bearer"
	"github.com/toolwire/toolwire/internal/testas"
)

// BenchmarkJWTVerify: a token seen before (cached: a SHA-256 and a
// lookup), and tokens verified afresh each time (RS256 signature, claims).
func BenchmarkJWTVerify(b *testing.B) {
	as := testas.New(b, audience)
	ctx := context.Background()
	b.Run("cached", func(b *testing.B) {
		v, err := bearer.NewJWT(ctx, bearer.JWTConfig{Issuer: as.URL, Audience: audience})
		if err != nil {
			b.Fatal(err)
		}
		token := as.Token(b, "alice", nil)
		for b.Loop() {
			if _, err := v.Verify(ctx, token); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("uncached", func(b *testing.B) {
		// A cache of one, and two tokens in turn: every Verify misses.
		v, err := bearer.NewJWT(ctx, bearer.JWTConfig{Issuer: as.URL, Audience: audience, CacheSize: 1})
		if err != nil {
			b.Fatal(err)
		}
		tokens := []string{as.Token(b, "alice", nil), as.Token(b, "bob", nil)}
		i := 0
		for b.Loop() {
			if _, err := v.Verify(ctx, tokens[i%2]); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
}

// BenchmarkRequire: what the middleware adds to a request with a token
// seen before: the header, the cached verification, the scope check, the
// caller and the token in the request's context. "none" is the same
// request without the middleware.
func BenchmarkRequire(b *testing.B) {
	as := testas.New(b, audience)
	v, err := bearer.NewJWT(context.Background(), bearer.JWTConfig{Issuer: as.URL, Audience: audience})
	if err != nil {
		b.Fatal(err)
	}
	a, err := bearer.New(v, bearer.Options{Resource: audience, AuthorizationServers: []string{as.URL}, Scopes: []string{"mcp"}})
	if err != nil {
		b.Fatal(err)
	}
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	r := httptest.NewRequest("POST", "/mcp", nil)
	r.Header.Set("Authorization", "Bearer "+as.Token(b, "alice", nil))
	for _, bb := range []struct {
		name string
		h    http.Handler
	}{{"none", next}, {"require", a.Require(next)}} {
		b.Run("middleware="+bb.name, func(b *testing.B) {
			w := httptest.NewRecorder()
			for b.Loop() {
				bb.h.ServeHTTP(w, r)
			}
			if w.Code != http.StatusNoContent {
				b.Fatalf("status %d", w.Code)
			}
		})
	}
}
