package bearer_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/toolwire/toolwire/bearer"
	"github.com/toolwire/toolwire/internal/testas"
	"github.com/toolwire/toolwire/tool"
)

// whoami answers with the caller and the token's subject the request
// carries.
var whoami = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	c, _ := tool.CallerFrom(r.Context())
	info, _ := bearer.InfoFrom(r.Context())
	_ = json.NewEncoder(w).Encode(map[string]string{"caller": c.ID, "client": c.Client, "sub": info.Subject})
})

// newAuth returns an Auth over a verifier of as's tokens, needing scope
// "mcp" on every request, and "data:write" for the tool "save".
func newAuth(t *testing.T, v bearer.Verifier, issuer string) *bearer.Auth {
	t.Helper()
	a, err := bearer.New(v, bearer.Options{
		Resource:             audience,
		AuthorizationServers: []string{issuer},
		Scopes:               []string{"mcp"},
		ToolScopes:           map[string][]string{"save": {"data:write"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestRequire checks each kind of Authorization header against the
// middleware: the status, the WWW-Authenticate challenge, and, for a
// request let through, the caller it carries.
func TestRequire(t *testing.T) {
	as, v := newJWT(t, bearer.JWTConfig{})
	a := newAuth(t, v, as.URL)
	h := a.Require(whoami)
	alice := as.Token(t, "alice", nil)
	const md = `resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp"`
	aliceID := (&bearer.Info{Issuer: as.URL, Subject: "alice"}).CallerID()
	otherKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	unknownKey := testas.SignWith(t, jose.SigningKey{Algorithm: jose.RS256, Key: otherKey}, "unknown", as.Claims("alice", nil))

	tests := []struct {
		name      string
		headers   []string // Authorization headers
		status    int
		challenge string // the WWW-Authenticate header, or a part of it after "…"
	}{
		{"valid", []string{"Bearer " + alice}, 200, ""},
		{"lower-case scheme", []string{"bearer " + alice}, 200, ""},
		{"upper-case scheme", []string{"BEARER " + alice}, 200, ""},
		{"two spaces", []string{"Bearer  " + alice}, 200, ""},
		{"no header", nil, 401, `Bearer ` + md + `, scope="mcp"`},
		{"another scheme", []string{"Basic YWxpY2U6c2VjcmV0"}, 401, `Bearer ` + md + `, scope="mcp"`},
		{"scheme without space", []string{"Bearer" + alice}, 401, `Bearer ` + md + `, scope="mcp"`},
		{"no token", []string{"Bearer"}, 400, `…error="invalid_request", error_description="no token after 'Bearer'`},
		{"blank token", []string{"Bearer   "}, 400, `…error="invalid_request"`},
		{"two headers", []string{"Bearer " + alice, "Bearer " + alice}, 400, `…error="invalid_request", error_description="2 Authorization headers: send one"`},
		{"space in the token", []string{"Bearer " + alice[:10] + " " + alice[10:]}, 400, `…error="invalid_request", error_description="the token has characters`},
		{"quote in the token", []string{`Bearer ab"c`}, 400, `…error="invalid_request"`},
		{"huge token", []string{"Bearer " + strings.Repeat("a", bearer.MaxTokenSize+1)}, 401, `Bearer ` + md + `, error="invalid_token", error_description="invalid token: longer than 8192 bytes"`},
		{"expired", []string{"Bearer " + as.Token(t, "alice", map[string]any{"exp": time.Now().Add(-time.Hour).Unix()})}, 401, `…error="invalid_token", error_description="invalid token: expired at`},
		{"another audience", []string{"Bearer " + as.Token(t, "alice", map[string]any{"aud": "https://other.example.com"})}, 401, `…error="invalid_token", error_description="invalid token: issued for another audience`},
		{"garbage", []string{"Bearer abc"}, 401, `…error="invalid_token"`},
		{"unknown key, quoted in the description", []string{"Bearer " + unknownKey}, 401, `…error="invalid_token", error_description="invalid token: signed with key 'unknown' (RS256), which issuer`},
		{"without the scope", []string{"Bearer " + as.Token(t, "alice", map[string]any{"scope": "other"})}, 403, `Bearer ` + md + `, scope="mcp", error="insufficient_scope", error_description="this server needs scope mcp"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/mcp", nil)
			for _, v := range tt.headers {
				r.Header.Add("Authorization", v)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != tt.status {
				t.Fatalf("status %d, want %d: %s", w.Code, tt.status, w.Body)
			}
			got := w.Header().Get("WWW-Authenticate")
			if want, ok := strings.CutPrefix(tt.challenge, "…"); ok {
				if !strings.HasPrefix(got, "Bearer "+md) || !strings.Contains(got, want) {
					t.Errorf("WWW-Authenticate %q, want it to hold %q", got, want)
				}
			} else if got != tt.challenge {
				t.Errorf("WWW-Authenticate %q, want %q", got, tt.challenge)
			}
			if tt.status != 200 {
				var body struct{ Error, ErrorDescription string }
				if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil || body.Error == "" {
					t.Errorf("body %s: want an OAuth error", w.Body)
				}
				if strings.Contains(w.Body.String(), alice[len(alice)-20:]) || strings.Contains(got, alice[len(alice)-20:]) {
					t.Error("the answer shows the token")
				}
				return
			}
			var who map[string]string
			_ = json.Unmarshal(w.Body.Bytes(), &who)
			if who["caller"] != aliceID || who["client"] != "test-client" || who["sub"] != "alice" {
				t.Errorf("the request carried %v, want caller %s", who, aliceID)
			}
		})
	}
}

// acceptAll is a Verifier that accepts every token.
type acceptAll struct{}

func (acceptAll) Verify(context.Context, string) (*bearer.Info, error) {
	return &bearer.Info{Issuer: "https://auth.example.com", Subject: "anyone", Scopes: []string{"mcp"}}, nil
}

// TestRequireTokenSize: the middleware refuses a token longer than
// MaxTokenSize itself, whatever its Verifier would say.
func TestRequireTokenSize(t *testing.T) {
	a := newAuth(t, acceptAll{}, "https://auth.example.com")
	for _, tt := range []struct {
		size   int
		status int
	}{{bearer.MaxTokenSize, 200}, {bearer.MaxTokenSize + 1, 401}} {
		r := httptest.NewRequest("POST", "/mcp", nil)
		r.Header.Set("Authorization", "Bearer "+strings.Repeat("a", tt.size))
		w := httptest.NewRecorder()
		a.Require(whoami).ServeHTTP(w, r)
		if w.Code != tt.status || tt.status == 401 && !strings.Contains(w.Header().Get("WWW-Authenticate"), `error="invalid_token", error_description="invalid token: longer than 8192 bytes"`) {
			t.Errorf("a token of %d bytes: %d %q", tt.size, w.Code, w.Header().Get("WWW-Authenticate"))
		}
	}
}

// unavailable is a Verifier that cannot check tokens now.
type unavailable struct{}

func (unavailable) Verify(context.Context, string) (*bearer.Info, error) {
	return nil, errors.New("introspection: " + bearer.ErrUnavailable.Error() + ": connection refused")
}

type unavailableWrapped struct{}

func (unavailableWrapped) Verify(context.Context, string) (*bearer.Info, error) {
	return nil, errors.Join(bearer.ErrUnavailable, errors.New("connection refused"))
}

// TestRequireUnavailable: a token that cannot be checked now is answered
// 503 with Retry-After, not 401 (the client's token may be fine).
func TestRequireUnavailable(t *testing.T) {
	a := newAuth(t, unavailableWrapped{}, "https://auth.example.com")
	r := httptest.NewRequest("POST", "/mcp", nil)
	r.Header.Set("Authorization", "Bearer abc")
	w := httptest.NewRecorder()
	a.Require(whoami).ServeHTTP(w, r)
	if w.Code != 503 || w.Header().Get("Retry-After") != "10" || !strings.Contains(w.Body.String(), "temporarily_unavailable") {
		t.Errorf("%d %v %s", w.Code, w.Header(), w.Body)
	}
	// An error that does not wrap ErrUnavailable is the token's fault.
	a = newAuth(t, unavailable{}, "https://auth.example.com")
	w = httptest.NewRecorder()
	a.Require(whoami).ServeHTTP(w, r)
	if w.Code != 401 {
		t.Errorf("%d %s", w.Code, w.Body)
	}
}

// TestAuthorize checks the scopes of calls: a tool with scopes of its
// own needs them besides the server's, and the 403 names them all.
func TestAuthorize(t *testing.T) {
	as, v := newJWT(t, bearer.JWTConfig{})
	a := newAuth(t, v, as.URL)
	for _, tt := range []struct {
		name, scope, method, tool string
		ok                        bool
	}{
		{"tool without scopes", "mcp", "tools/call", "load", true},
		{"tool with its scope", "mcp data:write", "tools/call", "save", true},
		{"tool without its scope", "mcp", "tools/call", "save", false},
		{"another method naming it", "mcp", "prompts/get", "save", true},
		{"tools/list", "mcp", "tools/list", "", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var verdict bool
			h := a.Require(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				verdict = a.Authorize(w, r, tt.method, tt.tool)
			}))
			r := httptest.NewRequest("POST", "/mcp", nil)
			r.Header.Set("Authorization", "Bearer "+as.Token(t, "alice", map[string]any{"scope": tt.scope}))
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if verdict != tt.ok {
				t.Fatalf("Authorize said %v", verdict)
			}
			if !tt.ok {
				want := `, scope="data:write mcp", error="insufficient_scope", error_description="tool save needs scope data:write mcp"`
				if w.Code != 403 || !strings.Contains(w.Header().Get("WWW-Authenticate"), want) {
					t.Errorf("%d %q, want 403 with %q", w.Code, w.Header().Get("WWW-Authenticate"), want)
				}
			}
		})
	}
	// Without Require before it, there is no token: 401.
	w := httptest.NewRecorder()
	if a.Authorize(w, httptest.NewRequest("POST", "/mcp", nil), "tools/call", "save") || w.Code != 401 {
		t.Errorf("without a verified token: %d", w.Code)
	}
}

// TestMetadata checks the Protected Resource Metadata (RFC 9728).
func TestMetadata(t *testing.T) {
	a := newAuth(t, unavailable{}, "https://auth.example.com")
	if got, want := a.MetadataURL(), "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"; got != want {
		t.Errorf("MetadataURL %q, want %q", got, want)
	}
	w := httptest.NewRecorder()
	a.Metadata().ServeHTTP(w, httptest.NewRequest("GET", "/.well-known/oauth-protected-resource/mcp", nil))
	body, _ := io.ReadAll(w.Body)
	const want = `{"authorization_servers":["https://auth.example.com"],"bearer_methods_supported":["header"],"resource":"https://mcp.example.com/mcp","scopes_supported":["data:write","mcp"]}`
	if w.Code != 200 || string(body) != want || w.Header().Get("Content-Type") != "application/json" {
		t.Errorf("%d %s\nwant %s", w.Code, body, want)
	}
	w = httptest.NewRecorder()
	a.Metadata().ServeHTTP(w, httptest.NewRequest("POST", "/.well-known/oauth-protected-resource/mcp", nil))
	if w.Code != 405 {
		t.Errorf("POST: %d", w.Code)
	}
	root, err := bearer.New(unavailable{}, bearer.Options{Resource: "https://mcp.example.com", AuthorizationServers: []string{"https://a"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := root.MetadataURL(); got != "https://mcp.example.com/.well-known/oauth-protected-resource" {
		t.Errorf("MetadataURL of a resource at the root: %q", got)
	}
}

// TestNewOptions: options that cannot work are refused, saying why.
func TestNewOptions(t *testing.T) {
	for _, tt := range []struct {
		name string
		v    bearer.Verifier
		o    bearer.Options
		want string
	}{
		{"no verifier", nil, bearer.Options{Resource: audience, AuthorizationServers: []string{"https://a"}}, "no Verifier"},
		{"no resource", unavailable{}, bearer.Options{AuthorizationServers: []string{"https://a"}}, "audience is empty"},
		{"relative resource", unavailable{}, bearer.Options{Resource: "/mcp", AuthorizationServers: []string{"https://a"}}, "not an absolute http(s) URL"},
		{"no authorization server", unavailable{}, bearer.Options{Resource: audience}, "AuthorizationServers is empty"},
		{"scope with a quote", unavailable{}, bearer.Options{Resource: audience, AuthorizationServers: []string{"https://a"}, Scopes: []string{`a"b`}}, `scope "a\"b"`},
		{"tool scope with a space", unavailable{}, bearer.Options{Resource: audience, AuthorizationServers: []string{"https://a"}, ToolScopes: map[string][]string{"t": {"a b"}}}, `scope "a b"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := bearer.New(tt.v, tt.o)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}
}
