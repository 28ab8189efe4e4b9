package bearer_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/toolwire/toolwire/bearer"
	"github.com/toolwire/toolwire/internal/testas"
)

const audience = "https://mcp.example.com/mcp"

// newJWT returns a test authorization server and a verifier of its
// tokens for audience.
func newJWT(t *testing.T, cfg bearer.JWTConfig) (*testas.Server, *bearer.JWT) {
	t.Helper()
	as := testas.New(t, audience)
	cfg.Issuer, cfg.Audience = as.URL, audience
	v, err := bearer.NewJWT(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return as, v
}

// unsigned returns a JWT with header and claims and no signature (alg
// none).
func unsigned(t *testing.T, header, claims map[string]any) string {
	t.Helper()
	enc := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return base64.RawURLEncoding.EncodeToString(b)
	}
	return enc(header) + "." + enc(claims) + "."
}

// TestJWTVerify checks the verification of every kind of token, good and
// bad: each bad one is refused as invalid (401), saying why.
func TestJWTVerify(t *testing.T) {
	as, v := newJWT(t, bearer.JWTConfig{})
	key, kid := as.Key()
	now := time.Now()
	otherKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pubDER, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	valid := as.Token(t, "alice", nil)
	parts := strings.Split(valid, ".")
	forged := as.Claims("mallory", nil)
	forgedPayload, _ := json.Marshal(forged)

	tests := []struct {
		name  string
		token string
		want  string // "" for valid; else a part of the error
	}{
		{"valid", valid, ""},
		{"audience among others", as.Token(t, "alice", map[string]any{"aud": []string{"https://other.example.com", audience}}), ""},
		{"expired within the leeway", as.Token(t, "alice", map[string]any{"exp": now.Add(-30 * time.Second).Unix()}), ""},
		{"expired", as.Token(t, "alice", map[string]any{"exp": now.Add(-2 * time.Minute).Unix()}), "expired at"},
		{"not yet valid", as.Token(t, "alice", map[string]any{"nbf": now.Add(2 * time.Minute).Unix()}), "not valid before"},
		{"issued in the future", as.Token(t, "alice", map[string]any{"iat": now.Add(time.Hour).Unix()}), "issued in the future"},
		{"another audience", as.Token(t, "alice", map[string]any{"aud": "https://other.example.com/mcp"}), "another audience"},
		{"audience prefix only", as.Token(t, "alice", map[string]any{"aud": "https://mcp.example.com"}), "another audience"},
		{"no audience", as.Token(t, "alice", map[string]any{"aud": nil}), "another audience"},
		{"another issuer", as.Token(t, "alice", map[string]any{"iss": "https://evil.example.com"}), "another issuer"},
		{"no expiry", as.Token(t, "alice", map[string]any{"exp": nil}), "no expiry"},
		{"no subject", as.Token(t, "", nil), "no subject"},
		{"tampered payload", parts[0] + "." + base64.RawURLEncoding.EncodeToString(forgedPayload) + "." + parts[2], "signature does not verify"},
		{"tampered signature", parts[0] + "." + parts[1] + "." + flip(parts[2]), "signature does not verify"},
		{"no signature", parts[0] + "." + parts[1] + ".", "signature does not verify"},
		{"signed by another key with the same kid", testas.SignWith(t, jose.SigningKey{Algorithm: jose.RS256, Key: otherKey}, kid, as.Claims("alice", nil)), "signature does not verify"},
		{"signed by an unknown key", testas.SignWith(t, jose.SigningKey{Algorithm: jose.RS256, Key: otherKey}, "unknown", as.Claims("alice", nil)), "does not publish"},
		{"alg none", unsigned(t, map[string]any{"alg": "none", "kid": kid}, as.Claims("alice", nil)), "not a JWT signed with an accepted algorithm"},
		{"alg None", unsigned(t, map[string]any{"alg": "None", "kid": kid}, as.Claims("alice", nil)), "not a JWT signed with an accepted algorithm"},
		{"HS256 with the public key", testas.SignWith(t, jose.SigningKey{Algorithm: jose.HS256, Key: pubDER}, kid, as.Claims("alice", nil)), "not a JWT signed with an accepted algorithm"},
		{"PS256 with a key published for RS256", testas.SignWith(t, jose.SigningKey{Algorithm: jose.PS256, Key: key}, kid, as.Claims("alice", nil)), "does not publish"},
		{"huge", as.Token(t, "alice", map[string]any{"pad": strings.Repeat("x", bearer.MaxTokenSize)}), "longer than 8192 bytes"},
		{"not a JWT", "abc", "not a JWT"},
		{"empty", "", "not a JWT"},
		{"JWE-shaped", "a.b.c.d.e", "not a JWT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			info, err := v.Verify(context.Background(), tt.token)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if info.Subject != "alice" || info.Issuer != as.URL || !slices.Contains(info.Audience, audience) {
					t.Errorf("info %+v", info)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted, for %q", info.Subject)
			}
			if !errors.Is(err, bearer.ErrInvalidToken) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q: want ErrInvalidToken saying %q", err, tt.want)
			}
			if len(tt.token) > 20 && strings.Contains(err.Error(), tt.token[len(tt.token)-20:]) {
				t.Errorf("the error shows the token: %v", err)
			}
		})
	}
}

// flip changes the first character of a base64url string.
func flip(s string) string {
	if s[0] == 'A' {
		return "B" + s[1:]
	}
	return "A" + s[1:]
}

// TestJWTInfo checks what a verified token says, scope as RFC 9068's
// string or as an array (scp), and the caller it makes.
func TestJWTInfo(t *testing.T) {
	as, v := newJWT(t, bearer.JWTConfig{})
	exp := time.Now().Add(time.Hour).Truncate(time.Second)
	info, err := v.Verify(context.Background(), as.Token(t, "alice", map[string]any{"scope": "mcp data:read", "exp": exp.Unix()}))
	if err != nil {
		t.Fatal(err)
	}
	if info.Issuer != as.URL || info.Subject != "alice" || info.ClientID != "test-client" ||
		!slices.Equal(info.Scopes, []string{"mcp", "data:read"}) || !info.Expiry.Equal(exp) ||
		!info.HasScopes("mcp", "data:read") || info.HasScopes("admin") {
		t.Errorf("info %+v", info)
	}
	var claims map[string]any
	if err := json.Unmarshal(info.Claims, &claims); err != nil || claims["sub"] != "alice" {
		t.Errorf("claims %s: %v", info.Claims, err)
	}
	scp, err := v.Verify(context.Background(), as.Token(t, "alice", map[string]any{"scope": nil, "scp": []string{"a", "b"}, "client_id": nil, "azp": "other-client"}))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(scp.Scopes, []string{"a", "b"}) || scp.ClientID != "other-client" {
		t.Errorf("scp token: %+v", scp)
	}
	if info.CallerID() != scp.CallerID() || !strings.HasPrefix(info.CallerID(), "user:") || len(info.CallerID()) != len("user:")+32 {
		t.Errorf("caller ids %q and %q: want one user's, the same", info.CallerID(), scp.CallerID())
	}
	bob := &bearer.Info{Issuer: as.URL, Subject: "bob"}
	other := &bearer.Info{Issuer: "https://other.example.com", Subject: "alice"}
	if bob.CallerID() == info.CallerID() || other.CallerID() == info.CallerID() {
		t.Error("two users have one caller id")
	}
}

// TestJWTRotation rotates the server's keys mid-run: a token signed with
// the new key is accepted (its unknown kid makes the verifier fetch the
// keys again), and one signed with the old key is refused from then on,
// even though it was accepted (and remembered) before.
func TestJWTRotation(t *testing.T) {
	as, v := newJWT(t, bearer.JWTConfig{RefreshInterval: time.Millisecond})
	old := as.Token(t, "alice", nil)
	if _, err := v.Verify(context.Background(), old); err != nil {
		t.Fatal(err)
	}
	as.Rotate(t)
	time.Sleep(2 * time.Millisecond)
	if _, err := v.Verify(context.Background(), as.Token(t, "alice", nil)); err != nil {
		t.Fatalf("token of the new key: %v", err)
	}
	if fetches := as.KeyFetches(); fetches != 2 {
		t.Errorf("%d fetches of the keys, want 2", fetches)
	}
	time.Sleep(2 * time.Millisecond)
	if _, err := v.Verify(context.Background(), old); !errors.Is(err, bearer.ErrInvalidToken) || !strings.Contains(err.Error(), "does not publish") {
		t.Errorf("token of the old key after the rotation: %v", err)
	}
}

// TestJWTRefreshBound: tokens signed with keys the server does not
// publish make the verifier fetch the keys at most once per
// RefreshInterval, however many arrive.
func TestJWTRefreshBound(t *testing.T) {
	as, v := newJWT(t, bearer.JWTConfig{RefreshInterval: time.Hour})
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		token := testas.SignWith(t, jose.SigningKey{Algorithm: jose.RS256, Key: other}, "forged"+string(rune('a'+i)), as.Claims("alice", nil))
		if _, err := v.Verify(context.Background(), token); !errors.Is(err, bearer.ErrInvalidToken) {
			t.Fatalf("forged token: %v", err)
		}
	}
	if fetches := as.KeyFetches(); fetches != 1 {
		t.Errorf("%d fetches of the keys for 20 forged tokens, want 1 (the first)", fetches)
	}
}

// TestJWTKeysUnavailable: when the keys cannot be fetched, a token
// signed with a key not yet held cannot be checked (ErrUnavailable, 503),
// within the client's timeout, while tokens of the keys held still are.
func TestJWTKeysUnavailable(t *testing.T) {
	for _, tt := range []struct {
		name   string
		status int
		delay  time.Duration
		want   string
	}{
		{"down", http.StatusServiceUnavailable, 0, "503 Service Unavailable"},
		{"hanging", 0, time.Hour, "Client.Timeout exceeded"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			as, v := newJWT(t, bearer.JWTConfig{RefreshInterval: time.Millisecond, HTTPClient: &http.Client{Timeout: 300 * time.Millisecond}})
			held := as.Token(t, "alice", nil)
			as.FailKeys(tt.status, tt.delay)
			as.Rotate(t)
			time.Sleep(2 * time.Millisecond)
			start := time.Now()
			_, err := v.Verify(context.Background(), as.Token(t, "alice", nil))
			if !errors.Is(err, bearer.ErrUnavailable) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v: want ErrUnavailable saying %q", err, tt.want)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("took %v", d)
			}
			if _, err := v.Verify(context.Background(), held); err != nil {
				t.Errorf("token of a key held: %v", err)
			}
		})
	}
}

// TestJWTKeySets checks which keys of a key set are used: never a
// symmetric one, one whose alg is none or HMAC, a short RSA key, or one
// for encryption; a set with no usable key is an error.
func TestJWTKeySets(t *testing.T) {
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	short, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	secret := []byte("0123456789abcdef0123456789abcdef")
	for _, tt := range []struct {
		name    string
		publish []jose.JSONWebKey
		sign    jose.SigningKey
		want    string // "" for accepted; "unusable" for a set refused whole
	}{
		{"EC key", []jose.JSONWebKey{{Key: &ecKey.PublicKey, KeyID: "k", Algorithm: "ES256"}}, jose.SigningKey{Algorithm: jose.ES256, Key: ecKey}, ""},
		{"RSA key without alg or use", []jose.JSONWebKey{{Key: &rsaKey.PublicKey, KeyID: "k"}}, jose.SigningKey{Algorithm: jose.RS256, Key: rsaKey}, ""},
		{"symmetric key", []jose.JSONWebKey{{Key: secret, KeyID: "k"}, {Key: &ecKey.PublicKey, KeyID: "e", Algorithm: "ES256"}}, jose.SigningKey{Algorithm: jose.HS256, Key: secret}, "not a JWT signed with an accepted algorithm"},
		{"key with alg none", []jose.JSONWebKey{{Key: &rsaKey.PublicKey, KeyID: "k", Algorithm: "none"}, {Key: &ecKey.PublicKey, KeyID: "e", Algorithm: "ES256"}}, jose.SigningKey{Algorithm: jose.RS256, Key: rsaKey}, "does not publish"},
		{"key for encryption", []jose.JSONWebKey{{Key: &rsaKey.PublicKey, KeyID: "k", Use: "enc"}, {Key: &ecKey.PublicKey, KeyID: "e", Algorithm: "ES256"}}, jose.SigningKey{Algorithm: jose.RS256, Key: rsaKey}, "does not publish"},
		{"short RSA key", []jose.JSONWebKey{{Key: &short.PublicKey, KeyID: "k"}, {Key: &ecKey.PublicKey, KeyID: "e", Algorithm: "ES256"}}, jose.SigningKey{Algorithm: jose.RS256, Key: short}, "does not publish"},
		{"only a key with alg none", []jose.JSONWebKey{{Key: &rsaKey.PublicKey, KeyID: "k", Algorithm: "none"}}, jose.SigningKey{}, "unusable"},
		{"only unusable keys", []jose.JSONWebKey{{Key: secret, KeyID: "k"}, {Key: &short.PublicKey, KeyID: "s"}}, jose.SigningKey{}, "unusable"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			as := testas.New(t, audience)
			as.Publish(tt.publish...)
			v, err := bearer.NewJWT(context.Background(), bearer.JWTConfig{Issuer: as.URL, Audience: audience})
			if tt.want == "unusable" {
				if err == nil || !strings.Contains(err.Error(), "has no usable key") {
					t.Errorf("NewJWT: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			_, err = v.Verify(context.Background(), testas.SignWith(t, tt.sign, "k", as.Claims("alice", nil)))
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}
}

// TestNewJWTConfig: a config that cannot work is refused with an error
// that says what to fix.
func TestNewJWTConfig(t *testing.T) {
	as := testas.New(t, audience)
	for _, tt := range []struct {
		name string
		cfg  bearer.JWTConfig
		want string
	}{
		{"no issuer", bearer.JWTConfig{Audience: audience}, "Issuer is empty"},
		{"no audience", bearer.JWTConfig{Issuer: as.URL}, "audience is empty"},
		{"relative audience", bearer.JWTConfig{Issuer: as.URL, Audience: "mcp.example.com/mcp"}, "not an absolute http(s) URL"},
		{"audience with a fragment", bearer.JWTConfig{Issuer: as.URL, Audience: audience + "#x"}, "fragment"},
		{"HMAC", bearer.JWTConfig{Issuer: as.URL, Audience: audience, Algorithms: []string{"HS256"}}, `"HS256" is not accepted`},
		{"none", bearer.JWTConfig{Issuer: as.URL, Audience: audience, Algorithms: []string{"none"}}, `"none" is not accepted`},
		{"issuer over http", bearer.JWTConfig{Issuer: "http://auth.example.com", Audience: audience}, "uses http: use https"},
		{"issuer not as the server names itself", bearer.JWTConfig{Issuer: as.URL + "/", Audience: audience}, "give the issuer exactly as the server names itself"},
		{"issuer without metadata", bearer.JWTConfig{Issuer: as.URL + "/tenant", Audience: audience}, "no authorization server metadata for issuer"},
		{"unreachable issuer", bearer.JWTConfig{Issuer: "http://127.0.0.1:1", Audience: audience}, "connection refused"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := bearer.NewJWT(context.Background(), tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}
}
