package oauth

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/toolwire/toolwire/mcp"
)

// TestAuthorizationCodeFlow follows a first request through the whole
// flow: 401, metadata, registration, authorization with PKCE, state and
// resource, code exchange, the request sent again with the token.
func TestAuthorizationCodeFlow(t *testing.T) {
	f := newFake(t)
	f.scope = "mcp:read"
	cfg := f.config()
	rt := cfg.Transport(nil)
	if status, err := f.call(t, rt); err != nil || status != 200 {
		t.Fatalf("call: %d, %v", status, err)
	}
	if len(f.authRequests) != 1 || len(f.tokenForms) != 1 || len(f.regs) != 1 {
		t.Fatalf("%d authorizations, %d token requests, %d registrations; want 1 each", len(f.authRequests), len(f.tokenForms), len(f.regs))
	}
	a, tf, reg := f.authRequests[0], f.tokenForms[0], f.regs[0]
	sum := sha256.Sum256([]byte(tf.Get("code_verifier")))
	for _, c := range []struct{ what, got, want string }{
		{"code_challenge_method", a.Get("code_challenge_method"), "S256"},
		{"code_challenge", a.Get("code_challenge"), base64.RawURLEncoding.EncodeToString(sum[:])},
		{"authorization resource", a.Get("resource"), f.resource()},
		{"scope", a.Get("scope"), "mcp:read"},
		{"client_id", a.Get("client_id"), "dyn-client"},
		{"response_type", a.Get("response_type"), "code"},
		{"redirect_uri", a.Get("redirect_uri"), cfg.RedirectURL},
		{"grant_type", tf.Get("grant_type"), "authorization_code"},
		{"token resource", tf.Get("resource"), f.resource()},
		{"application_type", reg["application_type"].(string), "native"},
	} {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.what, c.got, c.want)
		}
	}
	if a.Get("state") == "" {
		t.Error("no state in the authorization request")
	}
	if gt, _ := reg["grant_types"].([]any); !slices.Contains(gt, any("refresh_token")) {
		t.Errorf("registration grant_types = %v, want refresh_token among them", reg["grant_types"])
	}
	want := []string{"", "Bearer tok-SECRET-1"}
	if !slices.Equal(f.mcpAuth, want) {
		t.Errorf("MCP requests' Authorization = %q, want %q", f.mcpAuth, want)
	}
	if f.mcpBodies[1] != f.mcpBodies[0] {
		t.Errorf("the request sent again has body %q, not %q", f.mcpBodies[1], f.mcpBodies[0])
	}
	g, err := cfg.Store.Load(context.Background(), f.resource())
	if err != nil {
		t.Fatal(err)
	}
	if g.Issuer != f.issuer() || g.ClientID != "dyn-client" || g.ClientSecret != "dyn-SECRET-secret" || g.AccessToken != "tok-SECRET-1" || g.RefreshToken != "rt-SECRET-1" || g.TokenEndpoint != f.as.URL+"/token" || !slices.Equal(g.Scopes, []string{"mcp:read"}) {
		t.Errorf("stored grant %+v", *g)
	}
	// The token is reused: no second authorization.
	if status, err := f.call(t, rt); err != nil || status != 200 || len(f.authRequests) != 1 {
		t.Fatalf("second call: %d, %v, %d authorizations", status, err, len(f.authRequests))
	}
}

// TestTokenEndpointAuth checks how the client authenticates at the token
// endpoint, for each kind of client and what the server supports.
func TestTokenEndpointAuth(t *testing.T) {
	basic := func(id, secret string) string {
		return "Basic " + base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(id)+":"+url.QueryEscape(secret)))
	}
	for _, c := range []struct {
		name       string
		supported  []string
		cfg        func(f *fake, cfg *Config)
		header     string // the token request's Authorization
		formSecret string
		clientID   string
		regs       int
	}{
		{name: "pre-registered, basic", supported: []string{"client_secret_basic"},
			cfg:    func(_ *fake, c *Config) { c.ClientID, c.ClientSecret = "pre-id", "pre-SECRET" },
			header: basic("pre-id", "pre-SECRET"), clientID: "pre-id"},
		{name: "pre-registered, post", supported: []string{"client_secret_post"},
			cfg:        func(_ *fake, c *Config) { c.ClientID, c.ClientSecret = "pre-id", "pre-SECRET" },
			formSecret: "pre-SECRET", clientID: "pre-id"},
		{name: "pre-registered, configured method", supported: []string{"client_secret_basic", "client_secret_post"},
			cfg: func(_ *fake, c *Config) {
				c.ClientID, c.ClientSecret, c.TokenEndpointAuthMethod = "pre-id", "pre-SECRET", "client_secret_post"
			},
			formSecret: "pre-SECRET", clientID: "pre-id"},
		{name: "dynamic, basic", supported: []string{"client_secret_basic"},
			header: basic("dyn-client", "dyn-SECRET-secret"), clientID: "dyn-client", regs: 1},
		{name: "dynamic, post", supported: []string{"client_secret_post"},
			formSecret: "dyn-SECRET-secret", clientID: "dyn-client", regs: 1},
		{name: "dynamic, public", supported: []string{"none"},
			cfg: func(f *fake, _ *Config) {
				f.register = func(map[string]any) (int, string) { return 201, `{"client_id":"pub-client"}` }
			},
			clientID: "pub-client", regs: 1},
		{name: "client ID metadata document", supported: []string{"none"},
			cfg: func(f *fake, c *Config) {
				c.ClientMetadataURL = "https://client.example/meta.json"
				f.meta = func(m map[string]any) {
					m["client_id_metadata_document_supported"] = true
					m["token_endpoint_auth_methods_supported"] = []string{"none"}
				}
			},
			clientID: "https://client.example/meta.json"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFake(t)
			cfg := f.config()
			f.meta = func(m map[string]any) { m["token_endpoint_auth_methods_supported"] = c.supported }
			if c.cfg != nil {
				c.cfg(f, cfg)
			}
			if _, err := cfg.Login(context.Background()); err != nil {
				t.Fatal(err)
			}
			tf := f.tokenForms[0]
			if f.tokenAuth[0] != c.header || tf.Get("client_secret") != c.formSecret || len(f.regs) != c.regs {
				t.Errorf("Authorization %q, form client_secret %q, %d registrations; want %q, %q, %d", f.tokenAuth[0], tf.Get("client_secret"), len(f.regs), c.header, c.formSecret, c.regs)
			}
			if got := f.authRequests[0].Get("client_id"); got != c.clientID {
				t.Errorf("client_id = %q, want %q", got, c.clientID)
			}
			if c.header == "" && tf.Get("client_id") != c.clientID {
				t.Errorf("form client_id = %q, want %q", tf.Get("client_id"), c.clientID)
			}
		})
	}
}

// TestScopeSelection checks the scopes asked for: the configured ones,
// else the challenge's, else scopes_supported, else none; offline_access
// added where the authorization server lists it.
func TestScopeSelection(t *testing.T) {
	for _, c := range []struct {
		name  string
		setup func(f *fake, cfg *Config)
		want  []string // nil: no scope parameter
	}{
		{"challenge", func(f *fake, _ *Config) { f.scope = "a b" }, []string{"a b"}},
		{"scopes_supported", func(f *fake, _ *Config) {
			f.prm = func(m map[string]any) { m["scopes_supported"] = []string{"x", "y"} }
		}, []string{"x y"}},
		{"challenge over scopes_supported", func(f *fake, _ *Config) {
			f.scope = "a"
			f.prm = func(m map[string]any) { m["scopes_supported"] = []string{"x"} }
		}, []string{"a"}},
		{"none", func(*fake, *Config) {}, nil},
		{"configured", func(f *fake, cfg *Config) { f.scope, cfg.Scopes = "a", []string{"c"} }, []string{"c"}},
		{"offline_access listed", func(f *fake, _ *Config) {
			f.scope = "a"
			f.meta = func(m map[string]any) { m["scopes_supported"] = []string{"a", "offline_access"} }
		}, []string{"a offline_access"}},
		{"offline_access listed, no scope", func(f *fake, _ *Config) {
			f.meta = func(m map[string]any) { m["scopes_supported"] = []string{"a", "offline_access"} }
		}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFake(t)
			cfg := f.config()
			c.setup(f, cfg)
			if _, err := cfg.Login(context.Background()); err != nil {
				t.Fatal(err)
			}
			if got := f.authRequests[0]["scope"]; !slices.Equal(got, c.want) {
				t.Errorf("scope = %q, want %q", got, c.want)
			}
		})
	}
}

// TestRefresh checks that a token is refreshed before it expires and on a
// 401, with the resource parameter, and that a refused refresh leads to a
// new authorization.
func TestRefresh(t *testing.T) {
	t.Run("before expiry", func(t *testing.T) {
		f := newFake(t)
		f.expiresIn = 10 // within refreshSkew
		rt := f.config().Transport(nil)
		for range 2 {
			if status, err := f.call(t, rt); err != nil || status != 200 {
				t.Fatalf("call: %d, %v", status, err)
			}
		}
		if len(f.authRequests) != 1 || len(f.tokenForms) != 2 {
			t.Fatalf("%d authorizations, %d token requests; want 1, 2", len(f.authRequests), len(f.tokenForms))
		}
		tf := f.tokenForms[1]
		if tf.Get("grant_type") != "refresh_token" || tf.Get("refresh_token") != "rt-SECRET-1" || tf.Get("resource") != f.resource() {
			t.Errorf("refresh request %v", tf)
		}
		if f.mcpAuth[2] != "Bearer tok-SECRET-2" {
			t.Errorf("second call sent %q, want the refreshed token", f.mcpAuth[2])
		}
	})
	t.Run("on 401", func(t *testing.T) {
		f := newFake(t)
		rt := f.config().Transport(nil)
		f.call(t, rt)
		f.revokeAll()
		if status, err := f.call(t, rt); err != nil || status != 200 {
			t.Fatalf("call: %d, %v", status, err)
		}
		if len(f.authRequests) != 1 || f.tokenForms[1].Get("grant_type") != "refresh_token" {
			t.Errorf("%d authorizations, second token request %v; want a refresh, no new authorization", len(f.authRequests), f.tokenForms[1])
		}
	})
	t.Run("refused", func(t *testing.T) {
		f := newFake(t)
		rt := f.config().Transport(nil)
		f.call(t, rt)
		f.set(func() { clear(f.valid); clear(f.refresh) })
		if status, err := f.call(t, rt); err != nil || status != 200 {
			t.Fatalf("call: %d, %v", status, err)
		}
		if len(f.authRequests) != 2 || len(f.regs) != 1 {
			t.Errorf("%d authorizations, %d registrations; want a new authorization by the same client", len(f.authRequests), len(f.regs))
		}
	})
	// The authorization server no longer knows the client it registered
	// (deleted): its refresh is refused with invalid_client, and the next
	// authorization, by the transport or by a later Login (the transport
	// without Authorize), registers the client again rather than sending
	// the user to log in for a client the server refuses.
	for _, expiresIn := range []int{10, 0} {
		for _, interactive := range []bool{true, false} {
			t.Run(fmt.Sprintf("client forgotten, expires in %d, interactive %t", expiresIn, interactive), func(t *testing.T) {
				f := newFake(t)
				f.expiresIn = expiresIn
				cfg := f.config()
				f.call(t, cfg.Transport(nil))
				f.set(func() {
					clear(f.valid)
					f.token = func(form url.Values) (int, string, string) {
						if form.Get("grant_type") == "refresh_token" {
							return 401, `{"error":"invalid_client","error_description":"The requested OAuth 2.0 Client does not exist."}`, "application/json"
						}
						rec := httptest.NewRecorder()
						f.issue(rec, form)
						return rec.Code, rec.Body.String(), "application/json"
					}
				})
				if !interactive {
					cli := *cfg
					cli.Authorize = nil
					if _, err := f.call(t, cli.Transport(nil)); !errors.Is(err, ErrLoginRequired) {
						t.Fatalf("call without Authorize: %v, want ErrLoginRequired", err)
					}
					if _, err := cfg.Login(t.Context()); err != nil {
						t.Fatal(err)
					}
				} else if status, err := f.call(t, cfg.Transport(nil)); err != nil || status != 200 {
					t.Fatalf("call: %d, %v", status, err)
				}
				if len(f.authRequests) != 2 || len(f.regs) != 2 {
					t.Errorf("%d authorizations, %d registrations; want a new authorization by a new registration", len(f.authRequests), len(f.regs))
				}
			})
		}
	}
	t.Run("refused before expiry", func(t *testing.T) {
		f := newFake(t)
		f.expiresIn = 10
		cfg := f.config()
		rt := cfg.Transport(nil)
		f.call(t, rt)
		f.set(func() { clear(f.refresh) })
		if status, err := f.call(t, rt); err != nil || status != 200 {
			t.Fatalf("call: %d, %v", status, err)
		}
		if len(f.authRequests) != 2 {
			t.Errorf("%d authorizations, want 2", len(f.authRequests))
		}
	})
}

// TestStepUp checks the answer to 403 insufficient_scope: one new
// authorization for the union of the scopes held and challenged, and no
// loop when the server keeps refusing.
func TestStepUp(t *testing.T) {
	t.Run("granted", func(t *testing.T) {
		f := newFake(t)
		f.scope = "a"
		f.need = []string{"b"}
		if status, err := f.call(t, f.config().Transport(nil)); err != nil || status != 200 {
			t.Fatalf("call: %d, %v", status, err)
		}
		var scopes []string
		for _, a := range f.authRequests {
			scopes = append(scopes, a.Get("scope"))
		}
		if !slices.Equal(scopes, []string{"a", "a b"}) {
			t.Errorf("authorizations asked for %q, want [a] then [a b]", scopes)
		}
	})
	t.Run("held already", func(t *testing.T) {
		// The server names a scope the grant holds (the authorization
		// server granted no scope list, so the grant holds what was
		// asked): asking again cannot help.
		f := newFake(t)
		f.scope, f.need, f.deny = "admin", []string{"admin"}, []string{"admin"}
		rt := f.config().Transport(nil)
		for range 2 {
			if status, err := f.call(t, rt); err != nil || status != 403 {
				t.Fatalf("call: %d, %v; want the 403 passed on", status, err)
			}
		}
		if len(f.authRequests) != 1 {
			t.Errorf("%d authorizations, want 1", len(f.authRequests))
		}
	})
	t.Run("retry limit", func(t *testing.T) {
		// The authorization server grants b, never admin: one step-up,
		// then the 403 is passed on, in this request and the next.
		f := newFake(t)
		f.scope, f.need, f.deny = "b", []string{"admin"}, []string{"admin"}
		rt := f.config().Transport(nil)
		for range 3 {
			if status, err := f.call(t, rt); err != nil || status != 403 {
				t.Fatalf("call: %d, %v; want the 403 passed on", status, err)
			}
		}
		if len(f.authRequests) != 2 {
			t.Errorf("%d authorizations, want 2 (the first, one step-up)", len(f.authRequests))
		}
	})
}

// TestMigration checks that when the server's metadata names another
// authorization server, the client registers there anew and never shows
// it the old one's client (SEP-2352).
func TestMigration(t *testing.T) {
	f := newFake(t)
	f.issuerPath = "/one"
	f.register = func(map[string]any) (int, string) {
		return 201, `{"client_id":"client` + strings.ReplaceAll(f.issuerPath, "/", "-") + `","client_secret":"s"}`
	}
	rt := f.config().Transport(nil)
	f.call(t, rt)
	f.set(func() { f.issuerPath = "/two"; clear(f.valid) })
	if status, err := f.call(t, rt); err != nil || status != 200 {
		t.Fatalf("call: %d, %v", status, err)
	}
	if len(f.regs) != 2 || len(f.authRequests) != 2 {
		t.Fatalf("%d registrations, %d authorizations; want 2 each", len(f.regs), len(f.authRequests))
	}
	if got := f.authRequests[1].Get("client_id"); got != "client-two" {
		t.Errorf("the new authorization server saw client %q, want client-two", got)
	}
	for _, tf := range f.tokenForms[1:] {
		if tf.Get("grant_type") == "refresh_token" {
			t.Errorf("the old authorization server's refresh token was sent: %v", tf)
		}
	}
}

// TestDiscoveryOrder checks the well-known URLs tried, in order, and that
// none is tried past the one that answers.
func TestDiscoveryOrder(t *testing.T) {
	for _, c := range []struct {
		name  string
		setup func(f *fake)
		want  []string
	}{
		{"header, RFC 8414", func(*fake) {}, []string{
			"rs:/.well-known/oauth-protected-resource/mcp", "as:/.well-known/oauth-authorization-server"}},
		{"path-based PRM, OpenID", func(f *fake) {
			f.challenge = func(*fake) []string { return []string{"Bearer"} }
			f.metaPath = "/.well-known/openid-configuration"
		}, []string{
			"rs:/.well-known/oauth-protected-resource/mcp",
			"as:/.well-known/oauth-authorization-server", "as:/.well-known/openid-configuration"}},
		{"root PRM, tenant path-inserted", func(f *fake) {
			f.challenge = func(*fake) []string { return []string{`Bearer error="invalid_token"`} }
			f.prmPath = "/.well-known/oauth-protected-resource"
			f.prm = func(m map[string]any) { m["resource"] = f.rs.URL }
			f.issuerPath = "/tenant1"
		}, []string{
			"rs:/.well-known/oauth-protected-resource/mcp", "rs:/.well-known/oauth-protected-resource",
			"as:/.well-known/oauth-authorization-server/tenant1"}},
		{"custom PRM, tenant OpenID appended", func(f *fake) {
			f.prmPath = "/custom/prm.json"
			f.issuerPath = "/tenant1"
			f.metaPath = "/tenant1/.well-known/openid-configuration"
		}, []string{
			"rs:/custom/prm.json",
			"as:/.well-known/oauth-authorization-server/tenant1", "as:/.well-known/openid-configuration/tenant1",
			"as:/tenant1/.well-known/openid-configuration"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFake(t)
			c.setup(f)
			if _, err := f.config().Login(context.Background()); err != nil {
				t.Fatal(err)
			}
			got := slices.DeleteFunc(slices.Clone(f.paths), func(p string) bool { return p == "as:/authorize" })
			if !slices.Equal(got, c.want) {
				t.Errorf("GET %q\nwant %q", got, c.want)
			}
		})
	}
}

// TestClientCredentials checks the client credentials grant with a
// secret and with a private_key_jwt assertion.
func TestClientCredentials(t *testing.T) {
	t.Run("secret", func(t *testing.T) {
		f := newFake(t)
		f.scope = "svc"
		f.expiresIn = 10
		cfg := &Config{Resource: f.resource(), ClientCredentials: &ClientCredentials{ClientID: "svc-id", ClientSecret: "svc-SECRET"}}
		rt := cfg.Transport(nil)
		for range 2 {
			if status, err := f.call(t, rt); err != nil || status != 200 {
				t.Fatalf("call: %d, %v", status, err)
			}
		}
		if len(f.tokenForms) != 2 || len(f.authRequests) != 0 || len(f.regs) != 0 {
			t.Fatalf("%d token requests, %d authorizations, %d registrations; want 2 (the second before expiry), 0, 0", len(f.tokenForms), len(f.authRequests), len(f.regs))
		}
		for i, tf := range f.tokenForms {
			if tf.Get("grant_type") != "client_credentials" || tf.Get("resource") != f.resource() || tf.Get("scope") != "svc" || !strings.HasPrefix(f.tokenAuth[i], "Basic ") {
				t.Errorf("token request %d: %v, Authorization %q", i, tf, f.tokenAuth[i])
			}
		}
	})
	t.Run("private_key_jwt", func(t *testing.T) {
		f := newFake(t)
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		der, _ := x509.MarshalPKCS8PrivateKey(key)
		pemKey := string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
		cfg := &Config{Resource: f.resource(), ClientCredentials: &ClientCredentials{ClientID: "svc-id", PrivateKeyPEM: pemKey, KeyID: "k1"}}
		if status, err := f.call(t, cfg.Transport(nil)); err != nil || status != 200 {
			t.Fatalf("call: %d, %v", status, err)
		}
		tf := f.tokenForms[0]
		if tf.Get("client_assertion_type") != jwtBearerAssertion || f.tokenAuth[0] != "" || tf.Get("client_secret") != "" {
			t.Fatalf("token request %v, Authorization %q", tf, f.tokenAuth[0])
		}
		tok, err := jwt.ParseSigned(tf.Get("client_assertion"), []jose.SignatureAlgorithm{jose.ES256})
		if err != nil {
			t.Fatal(err)
		}
		var claims jwt.Claims
		if err := tok.Claims(&key.PublicKey, &claims); err != nil {
			t.Fatal(err)
		}
		if err := claims.Validate(jwt.Expected{Issuer: "svc-id", Subject: "svc-id", AnyAudience: jwt.Audience{f.issuer()}, Time: time.Now()}); err != nil {
			t.Error(err)
		}
		if claims.ID == "" || claims.Expiry.Time().Sub(claims.IssuedAt.Time()) > assertionLifetime || tok.Headers[0].KeyID != "k1" {
			t.Errorf("assertion claims %+v, kid %q", claims, tok.Headers[0].KeyID)
		}
	})
}

// TestLoginRequired checks that without Authorize a request that needs a
// login fails with ErrLoginRequired, through an http.Client, and sends
// nothing to the authorization server but metadata requests.
func TestLoginRequired(t *testing.T) {
	f := newFake(t)
	cfg := f.config()
	cfg.Authorize = nil
	_, err := f.call(t, cfg.Transport(nil))
	if !errors.Is(err, ErrLoginRequired) {
		t.Fatalf("err = %v, want ErrLoginRequired", err)
	}
	if len(f.regs)+len(f.authRequests)+len(f.tokenForms) != 0 {
		t.Errorf("%d registrations, %d authorizations, %d token requests; want none", len(f.regs), len(f.authRequests), len(f.tokenForms))
	}
}

// TestTokenOnlyToResource checks that the token goes to the resource's
// origin only: another path of it (a legacy SSE server's message
// endpoint) gets it, another origin not.
func TestTokenOnlyToResource(t *testing.T) {
	f := newFake(t)
	rt := f.config().Transport(nil)
	f.call(t, rt)
	var got []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Get("Authorization"))
	}))
	defer other.Close()
	for _, u := range []string{other.URL + "/mcp", f.rs.URL + "/messages"} {
		req, _ := http.NewRequest(http.MethodGet, u, nil)
		resp, err := rt.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if len(got) != 1 || got[0] != "" {
		t.Errorf("another origin got Authorization %q, want none", got)
	}
	if len(f.otherAuth) != 1 || f.otherAuth[0] != "Bearer tok-SECRET-1" {
		t.Errorf("another path of the resource's origin got Authorization %q, want the token", f.otherAuth)
	}
}

// TestBodyNotReplayable checks that a request whose body cannot be sent
// again fails clearly after the authorization (which is kept).
func TestBodyNotReplayable(t *testing.T) {
	f := newFake(t)
	rt := f.config().Transport(nil)
	req, _ := http.NewRequest(http.MethodPost, f.resource(), strings.NewReader(`{}`))
	req.GetBody = nil
	if _, err := rt.RoundTrip(req); err == nil || !strings.Contains(err.Error(), "cannot be sent again") {
		t.Fatalf("err = %v", err)
	}
	if status, err := f.call(t, rt); err != nil || status != 200 || len(f.authRequests) != 1 {
		t.Errorf("next call: %d, %v, %d authorizations; want 200 with the grant kept", status, err, len(f.authRequests))
	}
}

// TestLoginRequiredThroughMCP checks that ErrLoginRequired reaches the
// caller of an mcp.Client, for a host to say which command logs in.
func TestLoginRequiredThroughMCP(t *testing.T) {
	f := newFake(t)
	cfg := f.config()
	cfg.Authorize = nil
	c := &mcp.Client{Info: mcp.Implementation{Name: "t", Version: "1"}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := c.Connect(ctx, &mcp.HTTPTransport{URL: f.resource(), HTTPClient: &http.Client{Transport: cfg.Transport(nil)}})
	if err == nil {
		s.Close()
	}
	if !errors.Is(err, ErrLoginRequired) {
		t.Fatalf("Connect: %v, want ErrLoginRequired", err)
	}
}

// TestRefusedToken checks that a server refusing every token gets one
// authorization per request, and its 401 passed on, not a loop.
func TestRefusedToken(t *testing.T) {
	f := newFake(t)
	f.refuseAll = true
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, f.resource(), strings.NewReader(`{}`))
	resp, err := (&http.Client{Transport: f.config().Transport(nil)}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 || len(f.authRequests) != 1 {
		t.Errorf("HTTP %d after %d authorizations; want 401 after 1", resp.StatusCode, len(f.authRequests))
	}
}

// forgetfulStore keeps nothing: every Load finds no grant.
type forgetfulStore struct{}

func (forgetfulStore) Load(context.Context, string) (*Grant, error) { return nil, ErrNoGrant }
func (forgetfulStore) Save(context.Context, *Grant) error           { return nil }
func (forgetfulStore) Delete(context.Context, string) error         { return nil }

// TestConcurrentLogin checks that requests arriving together before any
// grant make one authorization, whose token the others use (nor do they
// refresh it).
func TestConcurrentLogin(t *testing.T) {
	f := newFake(t)
	cfg := f.config()
	cfg.Store = forgetfulStore{} // the transport's own grant only
	rt := cfg.Transport(nil)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if status, err := f.call(t, rt); err != nil || status != 200 {
				t.Errorf("call: %d, %v", status, err)
			}
		})
	}
	wg.Wait()
	if len(f.authRequests) != 1 || len(f.tokenForms) != 1 {
		t.Errorf("%d authorizations, %d token requests; want 1 each", len(f.authRequests), len(f.tokenForms))
	}
}

// TestSharedStore checks that a transport takes the grant another one
// (another process) saved in the Store, rather than authorizing again.
func TestSharedStore(t *testing.T) {
	f := newFake(t)
	a, b := f.config(), f.config()
	b.Store = a.Store
	rtb := b.Transport(nil)
	resp, err := rtb.RoundTrip(httptestRequest(t, f.rs.URL+"/elsewhere"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close() // b has looked at the Store: no grant yet
	f.call(t, a.Transport(nil))
	if status, err := f.call(t, rtb); err != nil || status != 200 {
		t.Fatalf("call: %d, %v", status, err)
	}
	if len(f.authRequests) != 1 {
		t.Errorf("%d authorizations, want 1", len(f.authRequests))
	}
}

// httptestRequest returns a GET request to u.
func httptestRequest(t *testing.T, u string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// TestAssertionKeys checks the assertion's algorithm for each kind of key,
// and that it verifies with the public key.
func TestAssertionKeys(t *testing.T) {
	ec384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	edPub, edKey, _ := ed25519.GenerateKey(rand.Reader)
	rsaPEM := string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(rsaKey)}))
	ecDER, _ := x509.MarshalECPrivateKey(ec384)
	ecPEM := string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: ecDER}))
	for _, c := range []struct {
		name string
		cc   ClientCredentials
		pub  any
		alg  jose.SignatureAlgorithm
	}{
		{"P-384 in SEC 1 PEM", ClientCredentials{PrivateKeyPEM: ecPEM}, &ec384.PublicKey, jose.ES384},
		{"RSA in PKCS #1 PEM", ClientCredentials{PrivateKeyPEM: rsaPEM}, &rsaKey.PublicKey, jose.RS256},
		{"RSA, PS256", ClientCredentials{PrivateKey: rsaKey, Alg: "PS256"}, &rsaKey.PublicKey, jose.PS256},
		{"Ed25519", ClientCredentials{PrivateKey: edKey}, edPub, jose.EdDSA},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.cc.ClientID = "svc"
			a, err := c.cc.assertion("https://auth.example.com", time.Now())
			if err != nil {
				t.Fatal(err)
			}
			tok, err := jwt.ParseSigned(a, []jose.SignatureAlgorithm{c.alg})
			if err != nil {
				t.Fatal(err)
			}
			var claims jwt.Claims
			if err := tok.Claims(c.pub, &claims); err != nil || claims.Issuer != "svc" {
				t.Errorf("claims %+v, %v", claims, err)
			}
		})
	}
}
