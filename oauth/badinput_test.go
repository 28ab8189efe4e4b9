package oauth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// badCase is a misbehaving server: setup makes the fake misbehave, the
// login must fail with an error containing want, and reach no further
// than the stage after: "metadata" (no registration, authorization or
// token request), "authorize" (no token request) or "" (anywhere).
type badCase struct {
	name  string
	setup func(f *fake, cfg *Config)
	want  string
	stop  string
}

func badCases() []badCase {
	big := strings.Repeat("x", 200<<10)
	tokenBody := func(body string) func(*fake, *Config) {
		return func(f *fake, _ *Config) {
			f.token = func(url.Values) (int, string, string) { return 200, body, "application/json" }
		}
	}
	return []badCase{
		// Protected Resource Metadata.
		{"PRM malformed", func(f *fake, _ *Config) { f.prmRaw = `{"resource": ` }, "malformed JSON", "metadata"},
		{"PRM not an object", func(f *fake, _ *Config) { f.prmRaw = `["x"]` }, "malformed JSON", "metadata"},
		{"PRM for another origin", func(f *fake, _ *Config) {
			f.prm = func(m map[string]any) { m["resource"] = "https://evil.example.com/mcp" }
		}, "not this server", "metadata"},
		{"PRM for another path", func(f *fake, _ *Config) {
			f.prm = func(m map[string]any) { m["resource"] = f.rs.URL + "/other" }
		}, "not this server", "metadata"},
		{"PRM for a path below", func(f *fake, _ *Config) {
			f.prm = func(m map[string]any) { m["resource"] = f.rs.URL + "/mcp/deeper" }
		}, "not this server", "metadata"},
		{"PRM without resource", func(f *fake, _ *Config) {
			f.prm = func(m map[string]any) { delete(m, "resource") }
		}, `no "resource"`, "metadata"},
		{"PRM without authorization servers", func(f *fake, _ *Config) {
			f.prm = func(m map[string]any) { m["authorization_servers"] = []string{} }
		}, `no "authorization_servers"`, "metadata"},
		{"PRM with an authorization server over http, not loopback", func(f *fake, _ *Config) {
			f.prm = func(m map[string]any) { m["authorization_servers"] = []string{"http://auth.example.com"} }
		}, "neither https nor http to a loopback host", "metadata"},
		{"PRM with a bad scope", func(f *fake, _ *Config) {
			f.prm = func(m map[string]any) { m["scopes_supported"] = []string{"a\"b"} }
		}, "not a valid scope", "metadata"},
		{"PRM oversized", func(f *fake, _ *Config) {
			f.prmRaw = `{"resource":"` + f.resource() + `","pad":"` + big + `"}`
		}, "larger than", "metadata"},
		{"no PRM at all", func(f *fake, _ *Config) {
			f.challenge = func(*fake) []string { return []string{"Bearer"} }
			f.prmPath = "/nowhere"
		}, "serves no protected resource metadata", "metadata"},
		// Authorization server metadata.
		{"AS metadata malformed", func(f *fake, _ *Config) { f.metaRaw = "<html>" }, "malformed JSON", "metadata"},
		{"AS metadata issuer mismatch", func(f *fake, _ *Config) {
			f.meta = func(m map[string]any) { m["issuer"] = "https://attacker.example.com" }
		}, "names issuer", "metadata"},
		{"AS metadata issuer with a trailing slash", func(f *fake, _ *Config) {
			f.meta = func(m map[string]any) { m["issuer"] = f.issuer() + "/" }
		}, "names issuer", "metadata"},
		{"AS metadata oversized", func(f *fake, _ *Config) {
			f.metaRaw = `{"issuer":"` + f.issuer() + `","pad":"` + big + `"}`
		}, "larger than", "metadata"},
		{"AS metadata without token endpoint", func(f *fake, _ *Config) {
			f.meta = func(m map[string]any) { delete(m, "token_endpoint") }
		}, "token_endpoint", "metadata"},
		{"AS token endpoint over http, not loopback", func(f *fake, _ *Config) {
			f.meta = func(m map[string]any) { m["token_endpoint"] = "http://auth.example.com/token" }
		}, "neither https nor http to a loopback host", "metadata"},
		{"AS metadata without PKCE", func(f *fake, _ *Config) {
			f.meta = func(m map[string]any) { delete(m, "code_challenge_methods_supported") }
		}, "PKCE S256", "metadata"},
		{"AS metadata with plain PKCE only", func(f *fake, _ *Config) {
			f.meta = func(m map[string]any) { m["code_challenge_methods_supported"] = []string{"plain"} }
		}, "PKCE S256", "metadata"},
		{"AS metadata nowhere", func(f *fake, _ *Config) { f.metaPath = "/nowhere" }, "serves no metadata", "metadata"},
		// Registration.
		{"no registration possible", func(f *fake, _ *Config) {
			f.meta = func(m map[string]any) { delete(m, "registration_endpoint") }
		}, "no way to register", "metadata"},
		{"registration refused", func(f *fake, _ *Config) {
			f.register = func(map[string]any) (int, string) {
				return 400, `{"error":"invalid_redirect_uri","error_description":"loopback not allowed"}`
			}
		}, `"invalid_redirect_uri" ("loopback not allowed")`, "metadata"},
		{"registration without client_id", func(f *fake, _ *Config) {
			f.register = func(map[string]any) (int, string) { return 201, `{"client_secret":"x"}` }
		}, "no client_id", "metadata"},
		{"registration oversized", func(f *fake, _ *Config) {
			f.register = func(map[string]any) (int, string) { return 201, `{"client_id":"c","pad":"` + big + `"}` }
		}, "larger than", "metadata"},
		// The authorization response.
		{"redirect with another state", func(f *fake, _ *Config) {
			f.redirect = func(q url.Values) { q.Set("state", "forged") }
		}, "state", "authorize"},
		{"redirect without state", func(f *fake, _ *Config) {
			f.redirect = func(q url.Values) { q.Del("state") }
		}, "state", "authorize"},
		{"redirect with an error", func(f *fake, _ *Config) {
			f.redirect = func(q url.Values) { q.Del("code"); q.Set("error", "access_denied") }
		}, `refused the authorization: "access_denied"`, "authorize"},
		{"redirect with an error and another issuer", func(f *fake, _ *Config) {
			f.redirect = func(q url.Values) {
				q.Del("code")
				q.Set("error", "access_denied")
				q.Set("iss", "https://evil.example.com")
			}
		}, "RFC 9207", "authorize"},
		{"redirect from another issuer", func(f *fake, _ *Config) {
			f.redirect = func(q url.Values) { q.Set("iss", "https://evil.example.com") }
		}, "RFC 9207", "authorize"},
		{"redirect from a normalized issuer", func(f *fake, _ *Config) {
			f.redirect = func(q url.Values) { q.Set("iss", f.issuer()+"/") }
		}, "RFC 9207", "authorize"},
		{"redirect without iss, advertised", func(f *fake, _ *Config) {
			f.redirect = func(q url.Values) { q.Del("iss") }
		}, "no iss", "authorize"},
		{"redirect from another issuer, not advertised", func(f *fake, _ *Config) {
			f.meta = func(m map[string]any) { delete(m, "authorization_response_iss_parameter_supported") }
			f.redirect = func(q url.Values) { q.Set("iss", "https://evil.example.com") }
		}, "RFC 9207", "authorize"},
		{"redirect without code", func(f *fake, _ *Config) {
			f.redirect = func(q url.Values) { q.Del("code") }
		}, "no code", "authorize"},
		{"redirect elsewhere", func(_ *fake, cfg *Config) {
			cfg.Authorize = func(context.Context, string) (*url.URL, error) {
				return url.Parse("http://127.0.0.1:9/other?code=x&state=y")
			}
		}, "not to the redirect URI", "authorize"},
		// The token response.
		{"token response without access_token", tokenBody(`{"token_type":"Bearer"}`), "missing access_token", ""},
		{"token response of another type", tokenBody(`{"access_token":"a","token_type":"DPoP"}`), `token_type is "DPoP"`, ""},
		{"token response from another issuer", tokenBody(`{"access_token":"a","token_type":"Bearer","iss":"https://evil.example.com"}`), "names issuer", ""},
		{"token response with a non-string iss", tokenBody(`{"access_token":"a","token_type":"Bearer","iss":7}`), "not a string", ""},
		{"token response with a bad scope", tokenBody(`{"access_token":"a","token_type":"Bearer","scope":"a\\\\b"}`), "not a valid scope", ""},
		{"token response with a token no header can carry", tokenBody(`{"access_token":"a\r\nX-Evil: 1","token_type":"Bearer"}`), "visible ASCII", ""},
		{"token response malformed", tokenBody(`{"access_token":`), "cannot parse json", ""},
		{"token response oversized", tokenBody(`{"access_token":"a","token_type":"Bearer","pad":"` + big + `"}`), "larger than", ""},
		{"token request refused", func(f *fake, _ *Config) {
			f.token = func(url.Values) (int, string, string) {
				return 401, `{"error":"invalid_client","error_description":"unknown client"}`, "application/json"
			}
		}, `refused the authorization code exchange: "invalid_client" ("unknown client") (HTTP 401)`, ""},
	}
}

// TestBadInput runs the login against each misbehaving server.
func TestBadInput(t *testing.T) {
	for _, c := range badCases() {
		t.Run(c.name, func(t *testing.T) {
			f := newFake(t)
			cfg := f.config()
			c.setup(f, cfg)
			_, err := cfg.Login(context.Background())
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v\nwant it to contain %q", err, c.want)
			}
			switch c.stop {
			case "metadata":
				if len(f.authRequests)+len(f.tokenForms) != 0 {
					t.Errorf("%d authorizations, %d token requests after bad metadata; want none", len(f.authRequests), len(f.tokenForms))
				}
			case "authorize":
				if len(f.tokenForms) != 0 {
					t.Errorf("%d token requests after a bad authorization response; want none", len(f.tokenForms))
				}
			}
			if g, _ := cfg.Store.Load(context.Background(), f.resource()); g != nil {
				t.Errorf("a grant was stored: %+v", g)
			}
		})
	}
}

// TestGoodInput checks the variants a server may send that must work: iss
// absent where not advertised, an absent token_type, a form-encoded token
// response, a malformed or repeated WWW-Authenticate, a 401 without one.
func TestGoodInput(t *testing.T) {
	for _, c := range []struct {
		name  string
		setup func(f *fake)
	}{
		{"no iss, not advertised", func(f *fake) {
			f.meta = func(m map[string]any) { m["authorization_response_iss_parameter_supported"] = false }
			f.redirect = func(q url.Values) { q.Del("iss") }
		}},
		{"no token_type", func(f *fake) {
			f.token = func(url.Values) (int, string, string) { return 200, `{"access_token":"a"}`, "application/json" }
		}},
		{"form-encoded token response", func(f *fake) {
			f.token = func(url.Values) (int, string, string) {
				return 200, "access_token=a&token_type=bearer&scope=x+y", "application/x-www-form-urlencoded"
			}
		}},
		{"malformed WWW-Authenticate", func(f *fake) {
			f.challenge = func(f *fake) []string { return []string{`Bearer resource_metadata="` + f.rs.URL + `/elsewhere`} }
		}},
		{"repeated WWW-Authenticate", func(f *fake) {
			f.prmPath = "/first"
			f.challenge = func(f *fake) []string {
				return []string{`Basic realm="x"`, `Bearer resource_metadata="` + f.rs.URL + `/first"`, `Bearer resource_metadata="` + f.rs.URL + `/second"`}
			}
		}},
		{"a parameter twice", func(f *fake) {
			f.challenge = func(f *fake) []string {
				return []string{`Bearer resource_metadata="` + f.rs.URL + `/elsewhere", resource_metadata="https://evil.example.com/x"`}
			}
		}},
		{"no WWW-Authenticate", func(f *fake) { f.challenge = func(*fake) []string { return nil } }},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFake(t)
			c.setup(f)
			if _, err := f.config().Login(context.Background()); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestConfigErrors checks that a Config that cannot work is refused
// before any request, by Login and by the Transport.
func TestConfigErrors(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, _ := x509.MarshalPKCS8PrivateKey(key)
	pemKey := string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	for _, c := range []struct {
		name string
		edit func(cfg *Config)
		want string
	}{
		{"no resource", func(c *Config) { c.Resource = "" }, "want an absolute http:// or https:// URL"},
		{"resource over http, not loopback", func(c *Config) { c.Resource = "http://mcp.example.com/mcp" }, "refusing to send tokens"},
		{"resource with a fragment", func(c *Config) { c.Resource += "#x" }, "fragment"},
		{"resource with credentials", func(c *Config) { c.Resource = "https://u:p@mcp.example.com/" }, "credentials"},
		{"redirect over http, not loopback", func(c *Config) { c.RedirectURL = "http://app.example.com/cb" }, "neither https nor http to a loopback host"},
		{"redirect not absolute", func(c *Config) { c.RedirectURL = "/cb" }, "not an absolute URL"},
		{"unknown auth method", func(c *Config) { c.TokenEndpointAuthMethod = "tls_client_auth" }, "TokenEndpointAuthMethod"},
		{"bad scope", func(c *Config) { c.Scopes = []string{"a b"} }, "not a valid scope"},
		{"client metadata over http", func(c *Config) { c.ClientMetadataURL = "http://client.example/meta.json" }, "ClientMetadataURL"},
		{"client metadata without path", func(c *Config) { c.ClientMetadataURL = "https://client.example" }, "ClientMetadataURL"},
		{"client credentials without id", func(c *Config) { c.ClientCredentials = &ClientCredentials{ClientSecret: "s"} }, "ClientID is empty"},
		{"client credentials, secret and key", func(c *Config) {
			c.ClientCredentials = &ClientCredentials{ClientID: "c", ClientSecret: "s", PrivateKeyPEM: pemKey}
		}, "exactly one"},
		{"client credentials, neither", func(c *Config) { c.ClientCredentials = &ClientCredentials{ClientID: "c"} }, "exactly one"},
		{"client credentials, not PEM", func(c *Config) {
			c.ClientCredentials = &ClientCredentials{ClientID: "c", PrivateKeyPEM: "not a key"}
		}, "no PEM block"},
		{"client credentials, not a key", func(c *Config) {
			c.ClientCredentials = &ClientCredentials{ClientID: "c", PrivateKeyPEM: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"}
		}, "no PKCS #8"},
		{"client credentials, algorithm of another curve", func(c *Config) {
			c.ClientCredentials = &ClientCredentials{ClientID: "c", PrivateKeyPEM: pemKey, Alg: "ES384"}
		}, "ES384"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := &Config{Resource: "https://mcp.example.com/mcp", RedirectURL: "http://127.0.0.1:9/cb"}
			c.edit(cfg)
			_, err := cfg.Login(context.Background())
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Login: %v, want an error containing %q", err, c.want)
			}
			req, _ := http.NewRequest(http.MethodGet, "https://mcp.example.com/mcp", nil)
			if _, err := cfg.Transport(nil).RoundTrip(req); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("RoundTrip: %v, want an error containing %q", err, c.want)
			}
		})
	}
}

// TestSecretsNotInErrors makes the flow fail at every stage where a
// secret is at hand, with servers that echo secrets in their answers, and
// checks that no error says one.
func TestSecretsNotInErrors(t *testing.T) {
	const echo = `{"error":"invalid_request","debug":"client_secret=dyn-SECRET-secret refresh_token=rt-SECRET-1 code=code-SECRET-42"}`
	cases := badCases()
	cases = append(cases,
		badCase{name: "token error echoing the request", setup: func(f *fake, _ *Config) {
			f.token = func(url.Values) (int, string, string) { return 400, echo, "application/json" }
		}},
		badCase{name: "token error without code, echoing", setup: func(f *fake, _ *Config) {
			f.token = func(url.Values) (int, string, string) {
				return 500, "code-SECRET-42 rt-SECRET-1 dyn-SECRET-secret", "text/html"
			}
		}},
		badCase{name: "registration error echoing", setup: func(f *fake, _ *Config) {
			f.register = func(map[string]any) (int, string) { return 400, echo }
		}},
		badCase{name: "pre-registered client refused", setup: func(f *fake, cfg *Config) {
			cfg.ClientID, cfg.ClientSecret = "pre-id", "pre-SECRET"
			f.token = func(url.Values) (int, string, string) {
				return 401, `{"error":"invalid_client","echo":"pre-SECRET"}`, "application/json"
			}
		}},
		badCase{name: "redirect to elsewhere with the code", setup: func(_ *fake, cfg *Config) {
			cfg.Authorize = func(context.Context, string) (*url.URL, error) {
				return url.Parse("http://127.0.0.1:9/elsewhere?code=code-SECRET-42")
			}
		}},
	)
	var errs []string
	for _, c := range cases {
		f := newFake(t)
		cfg := f.config()
		c.setup(f, cfg)
		if _, err := cfg.Login(context.Background()); err != nil {
			errs = append(errs, err.Error())
		}
	}
	// Refreshes refused, echoing, through the Transport.
	f := newFake(t)
	f.expiresIn = 10
	rt := f.config().Transport(nil)
	f.call(t, rt)
	f.set(func() {
		f.token = func(url.Values) (int, string, string) { return 400, echo, "application/json" }
		clear(f.valid)
	})
	if _, err := f.call(t, rt); err != nil {
		errs = append(errs, err.Error())
	}
	if len(errs) < len(cases) {
		t.Fatalf("only %d errors from %d failing logins", len(errs), len(cases))
	}
	for _, e := range errs {
		if strings.Contains(e, "SECRET") {
			t.Errorf("an error says a secret: %s", e)
		}
	}
}
