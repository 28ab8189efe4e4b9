// Package testas is the published side of an authorization server, for
// tests of token verification: it signs access tokens with RSA keys it
// generates, and serves on 127.0.0.1 its metadata (RFC 8414), its key set
// and an introspection endpoint (RFC 7662) that answers what the test
// registered. It stands in for a real server's keys so that tests can
// craft every bad token; the end-to-end tests use a real server (Ory
// Hydra).
package testas

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// Server is a test authorization server. Its methods are safe for
// concurrent use.
type Server struct {
	// URL is its issuer identifier (http://127.0.0.1:PORT).
	URL string
	// Audience is the "aud" of the tokens Token signs unless the claims
	// say otherwise.
	Audience string

	mu         sync.Mutex
	key        *rsa.PrivateKey
	kid        string
	published  []jose.JSONWebKey
	keysStatus int           // 0: serve the keys; else answer this status
	keysDelay  time.Duration // wait this long before answering the keys
	fetches    int
	answers    map[string]map[string]any // introspection answers by token
	introspect int                       // introspection requests
	nextKid    int
}

// New starts a server for tokens with audience aud, with one key; it
// stops when the test ends.
func New(t testing.TB, aud string) *Server {
	t.Helper()
	s := &Server{Audience: aud, answers: map[string]map[string]any{}}
	s.rotate(t, false)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]any{
			"issuer":                 s.URL,
			"jwks_uri":               s.URL + "/jwks",
			"introspection_endpoint": s.URL + "/introspect",
			"token_endpoint":         s.URL + "/token",
			"authorization_endpoint": s.URL + "/authorize",
		})
	})
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.fetches++
		status, delay, keys := s.keysStatus, s.keysDelay, s.published
		s.mu.Unlock()
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
		if status != 0 {
			http.Error(w, "keys unavailable", status)
			return
		}
		writeJSON(w, jose.JSONWebKeySet{Keys: keys})
	})
	mux.HandleFunc("POST /introspect", func(w http.ResponseWriter, r *http.Request) {
		if id, secret, ok := r.BasicAuth(); !ok || id != IntrospectionClientID || secret != IntrospectionClientSecret {
			http.Error(w, "client authentication failed", http.StatusUnauthorized)
			return
		}
		s.mu.Lock()
		s.introspect++
		answer, ok := s.answers[r.PostFormValue("token")]
		s.mu.Unlock()
		if !ok {
			answer = map[string]any{"active": false}
		}
		writeJSON(w, answer)
	})
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	s.URL = ts.URL
	return s
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// IntrospectionClient is the client id and secret the introspection
// endpoint accepts.
const (
	IntrospectionClientID     = "rs"
	IntrospectionClientSecret = "rs-secret"
)

// rotate makes a new signing key; keep says whether the old one stays
// published.
func (s *Server) rotate(t testing.TB, keep bool) {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextKid++
	s.key, s.kid = k, fmt.Sprintf("k%d", s.nextKid)
	pub := jose.JSONWebKey{Key: &k.PublicKey, KeyID: s.kid, Algorithm: "RS256", Use: "sig"}
	if keep {
		s.published = append(s.published, pub)
	} else {
		s.published = []jose.JSONWebKey{pub}
	}
}

// Rotate replaces the signing key: the key set publishes the new one
// only, and Token signs with it.
func (s *Server) Rotate(t testing.TB) { s.rotate(t, false) }

// Key returns the current signing key and its id.
func (s *Server) Key() (*rsa.PrivateKey, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.key, s.kid
}

// Publish replaces the published key set with keys (raw JWKs).
func (s *Server) Publish(keys ...jose.JSONWebKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.published = keys
}

// FailKeys makes the key set answer status (0 serves it again) after
// delay.
func (s *Server) FailKeys(status int, delay time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keysStatus, s.keysDelay = status, delay
}

// KeyFetches counts the requests for the key set.
func (s *Server) KeyFetches() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fetches
}

// Introspections counts the introspection requests.
func (s *Server) Introspections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.introspect
}

// Claims returns the claims of a valid token for sub: iss, aud, sub,
// client_id, scope, iat, exp (in an hour), with extra added or replaced
// (a nil value removes the claim).
func (s *Server) Claims(sub string, extra map[string]any) map[string]any {
	now := time.Now()
	c := map[string]any{
		"iss":       s.URL,
		"aud":       s.Audience,
		"sub":       sub,
		"client_id": "test-client",
		"scope":     "mcp",
		"iat":       now.Unix(),
		"exp":       now.Add(time.Hour).Unix(),
		"jti":       rand.Text(),
	}
	maps.Copy(c, extra)
	maps.DeleteFunc(c, func(_ string, v any) bool { return v == nil })
	return c
}

// Sign signs claims with the current key (RS256, its kid in the header,
// typ at+jwt).
func (s *Server) Sign(t testing.TB, claims map[string]any) string {
	t.Helper()
	k, kid := s.Key()
	return SignWith(t, jose.SigningKey{Algorithm: jose.RS256, Key: k}, kid, claims)
}

// Token returns a valid token for sub, with extra claims as Claims.
func (s *Server) Token(t testing.TB, sub string, extra map[string]any) string {
	t.Helper()
	return s.Sign(t, s.Claims(sub, extra))
}

// SignWith signs claims with key, naming kid in the header.
func SignWith(t testing.TB, key jose.SigningKey, kid string, claims map[string]any) string {
	t.Helper()
	opts := (&jose.SignerOptions{}).WithType("at+jwt")
	if kid != "" {
		opts = opts.WithHeader("kid", kid)
	}
	signer, err := jose.NewSigner(key, opts)
	if err != nil {
		t.Fatal(err)
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	jws, err := signer.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	out, err := jws.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Answer registers the introspection answer for token.
func (s *Server) Answer(token string, answer map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.answers[token] = answer
}
