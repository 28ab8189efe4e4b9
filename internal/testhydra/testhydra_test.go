package testhydra_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/toolwire/toolwire/internal/testhydra"
	"github.com/toolwire/toolwire/internal/testpeers"
)

// resource is the MCP server the tokens are for (RFC 8707); nothing
// listens there.
const resource = "http://127.0.0.1:9/mcp"

// redirect is the clients' loopback redirect URI (Hydra accepts any port
// for it).
const redirect = "http://127.0.0.1/callback"

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	t.Cleanup(cancel)
	return c
}

// claims decodes a token's claims, failing the test if it is no JWT.
func claims(t *testing.T, jwt string) map[string]any {
	t.Helper()
	c, err := testhydra.Claims(jwt)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// strs returns a claim that is a list of strings (or one string) as a
// list.
func strs(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		var l []string
		for _, e := range v {
			s, _ := e.(string)
			l = append(l, s)
		}
		return l
	}
	return nil
}

// userClient registers a client for the authorization code flow with
// refresh tokens and returns its configuration.
func userClient(t *testing.T, s *testhydra.Server, authMethod string) *oauth2.Config {
	t.Helper()
	id, secret, err := s.CreateClient(ctx(t), testhydra.Client{
		GrantTypes:              []string{"authorization_code", "refresh_token"},
		ResponseTypes:           []string{"code"},
		RedirectURIs:            []string{redirect},
		Scopes:                  []string{"openid", "offline_access", "mcp:tools", "mcp:admin"},
		TokenEndpointAuthMethod: authMethod,
	})
	if err != nil {
		t.Fatal(err)
	}
	if (secret == "") != (authMethod == "none") {
		t.Fatalf("client %s got secret %t", authMethod, secret != "")
	}
	e := s.Endpoint()
	if authMethod == "client_secret_post" {
		e.AuthStyle = oauth2.AuthStyleInParams
	}
	return &oauth2.Config{ClientID: id, ClientSecret: secret, Endpoint: e, RedirectURL: redirect,
		Scopes: []string{"offline_access", "mcp:tools"}}
}

// TestAuthorizationCode runs the authorization code flow with PKCE and a
// refresh against Hydra, for each way a client authenticates, and looks at
// the access tokens' claims.
func TestAuthorizationCode(t *testing.T) {
	s := testhydra.Start(t)
	for _, method := range []string{"client_secret_basic", "client_secret_post", "none"} {
		t.Run(method, func(t *testing.T) {
			cfg := userClient(t, s, method)
			tok, err := s.UserToken(ctx(t), cfg, "bob", resource)
			if err != nil {
				t.Fatal(err)
			}
			if tok.RefreshToken == "" || !strings.EqualFold(tok.TokenType, "bearer") {
				t.Fatalf("token type %q, refresh token %t; want a bearer token and a refresh token", tok.TokenType, tok.RefreshToken != "")
			}
			c := claims(t, tok.AccessToken)
			check := func(c map[string]any) {
				t.Helper()
				if c["iss"] != s.Issuer() || c["sub"] != "bob" || c["client_id"] != cfg.ClientID {
					t.Errorf("iss %v sub %v client_id %v; want %s, bob, %s", c["iss"], c["sub"], c["client_id"], s.Issuer(), cfg.ClientID)
				}
				if aud := strs(c["aud"]); !slices.Equal(aud, []string{resource}) {
					t.Errorf("aud %v, want [%s]", aud, resource)
				}
				if scope := strings.Fields(c["scope"].(string)); !slices.Equal(scope, []string{"offline_access", "mcp:tools"}) {
					t.Errorf("scope %v", scope)
				}
				exp, _ := c["exp"].(float64)
				if left := time.Until(time.Unix(int64(exp), 0)); left < 50*time.Minute || left > time.Hour+time.Minute {
					t.Errorf("the token expires in %v, want an hour (Hydra's default)", left)
				}
			}
			check(c)

			// Refresh: the token source refreshes a token it thinks expired.
			tok.Expiry = time.Now().Add(-time.Minute)
			fresh, err := cfg.TokenSource(ctx(t), tok).Token()
			if err != nil {
				t.Fatal(err)
			}
			if fresh.AccessToken == tok.AccessToken || fresh.RefreshToken == tok.RefreshToken {
				t.Fatal("refreshing returned the same access or refresh token")
			}
			fc := claims(t, fresh.AccessToken)
			check(fc)
			if fc["jti"] == c["jti"] {
				t.Error("the refreshed token has the first one's jti")
			}
		})
	}
}

// TestRefreshTokenTTL lets a refresh token expire.
func TestRefreshTokenTTL(t *testing.T) {
	s := testhydra.Start(t, testhydra.RefreshTokenTTL(time.Second))
	cfg := userClient(t, s, "none")
	tok, err := s.UserToken(ctx(t), cfg, "bob", resource)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	tok.Expiry = time.Now().Add(-time.Minute)
	if _, err := cfg.TokenSource(ctx(t), tok).Token(); err == nil || !strings.Contains(err.Error(), "invalid_grant") {
		t.Errorf("refreshing with an expired refresh token: err %v, want invalid_grant", err)
	}
}

// TestClientLifespan gives one client's access tokens a lifespan of
// their own, first issued and refreshed: another client's keep the
// server's.
func TestClientLifespan(t *testing.T) {
	s := testhydra.Start(t)
	id, _, err := s.CreateClient(ctx(t), testhydra.Client{
		GrantTypes: []string{"authorization_code", "refresh_token"}, RedirectURIs: []string{redirect},
		Scopes: []string{"offline_access", "mcp:tools"}, TokenEndpointAuthMethod: "none", AccessTokenLifespan: 5 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	short := &oauth2.Config{ClientID: id, Endpoint: s.Endpoint(), RedirectURL: redirect, Scopes: []string{"offline_access", "mcp:tools"}}
	long := userClient(t, s, "none")
	// exp minus iat, to the second; Hydra counts exp from the request's
	// arrival, iat from the token's making, each rounded.
	lifetime := func(tok *oauth2.Token) time.Duration {
		c := claims(t, tok.AccessToken)
		exp, _ := c["exp"].(float64)
		iat, _ := c["iat"].(float64)
		return time.Duration(exp-iat) * time.Second
	}
	for _, tc := range []struct {
		cfg  *oauth2.Config
		want time.Duration
	}{{short, 5 * time.Second}, {long, time.Hour}} {
		tok, err := s.UserToken(ctx(t), tc.cfg, "bob", resource)
		if err != nil {
			t.Fatal(err)
		}
		if got := lifetime(tok); got < tc.want || got > tc.want+2*time.Second {
			t.Errorf("client %s: the access token lives %v, want %v", tc.cfg.ClientID, got, tc.want)
		}
		tok.Expiry = time.Now().Add(-time.Minute)
		fresh, err := tc.cfg.TokenSource(ctx(t), tok).Token()
		if err != nil {
			t.Fatal(err)
		}
		if got := lifetime(fresh); got < tc.want || got > tc.want+2*time.Second {
			t.Errorf("client %s: the refreshed access token lives %v, want %v", tc.cfg.ClientID, got, tc.want)
		}
	}
}

// TestRevokeConsent revokes a user's consent: the user's refresh tokens
// are refused, another user's still work.
func TestRevokeConsent(t *testing.T) {
	s := testhydra.Start(t)
	cfg := userClient(t, s, "none")
	bob, err := s.UserToken(ctx(t), cfg, "bob", resource)
	if err != nil {
		t.Fatal(err)
	}
	carol, err := s.UserToken(ctx(t), cfg, "carol", resource)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RevokeConsent(ctx(t), "bob"); err != nil {
		t.Fatal(err)
	}
	for _, tok := range []*oauth2.Token{bob, carol} {
		tok.Expiry = time.Now().Add(-time.Minute)
	}
	if _, err := cfg.TokenSource(ctx(t), bob).Token(); err == nil || !strings.Contains(err.Error(), "invalid_grant") {
		t.Errorf("refreshing bob's token after his consent was revoked: err %v, want invalid_grant", err)
	}
	if _, err := cfg.TokenSource(ctx(t), carol).Token(); err != nil {
		t.Errorf("refreshing carol's token after bob's consent was revoked: %v", err)
	}
}

// TestDeleteClient deletes a client: its refresh tokens are refused with
// invalid_client, another client's still work.
func TestDeleteClient(t *testing.T) {
	s := testhydra.Start(t)
	gone, kept := userClient(t, s, "client_secret_basic"), userClient(t, s, "client_secret_basic")
	var toks []*oauth2.Token
	for _, cfg := range []*oauth2.Config{gone, kept} {
		tok, err := s.UserToken(ctx(t), cfg, "bob", resource)
		if err != nil {
			t.Fatal(err)
		}
		tok.Expiry = time.Now().Add(-time.Minute)
		toks = append(toks, tok)
	}
	if err := s.DeleteClient(ctx(t), gone.ClientID); err != nil {
		t.Fatal(err)
	}
	if _, err := gone.TokenSource(ctx(t), toks[0]).Token(); err == nil || !strings.Contains(err.Error(), "invalid_client") {
		t.Errorf("refreshing a token of the deleted client: err %v, want invalid_client", err)
	}
	if _, err := kept.TokenSource(ctx(t), toks[1]).Token(); err != nil {
		t.Errorf("refreshing a token of another client: %v", err)
	}
}

// TestSubjects logs two users in: by login_hint, and by SetSubject.
func TestSubjects(t *testing.T) {
	s := testhydra.Start(t)
	cfg := userClient(t, s, "none")
	for _, tc := range []struct{ set, hint, want string }{
		{"", "", testhydra.DefaultSubject},
		{"", "dave", "dave"},
		{"carol", "", "carol"},
		{"carol", "erin", "erin"},
	} {
		if tc.set != "" {
			s.SetSubject(tc.set)
		}
		tok, err := s.UserToken(ctx(t), cfg, tc.hint, resource)
		if err != nil {
			t.Fatal(err)
		}
		if sub := claims(t, tok.AccessToken)["sub"]; sub != tc.want {
			t.Errorf("SetSubject(%q), login_hint %q: sub %v, want %s", tc.set, tc.hint, sub, tc.want)
		}
	}
}

// TestConsent changes what the user grants: fewer scopes, another
// audience, nothing at all.
func TestConsent(t *testing.T) {
	s := testhydra.Start(t)
	cfg := userClient(t, s, "client_secret_basic")
	cfg.Scopes = []string{"mcp:tools", "mcp:admin"}
	var seen testhydra.ConsentRequest
	s.SetConsent(func(r testhydra.ConsentRequest) testhydra.Consent {
		seen = r
		return testhydra.Consent{Scopes: []string{"mcp:tools"}, Audience: []string{"http://127.0.0.1:9/other"}}
	})
	tok, err := s.UserToken(ctx(t), cfg, "bob", resource)
	if err != nil {
		t.Fatal(err)
	}
	want := testhydra.ConsentRequest{Subject: "bob", ClientID: cfg.ClientID, Scopes: []string{"mcp:tools", "mcp:admin"},
		Audience: []string{}, Resources: []string{resource}}
	if got, _ := json.Marshal(seen); string(got) != string(mustJSON(t, want)) {
		t.Errorf("consent request %s, want %s", got, mustJSON(t, want))
	}
	c := claims(t, tok.AccessToken)
	if c["scope"] != "mcp:tools" || !slices.Equal(strs(c["aud"]), []string{"http://127.0.0.1:9/other"}) {
		t.Errorf("scope %v aud %v; want what the consent granted", c["scope"], c["aud"])
	}

	s.SetConsent(func(testhydra.ConsentRequest) testhydra.Consent { return testhydra.Consent{Deny: true} })
	if _, err := s.UserToken(ctx(t), cfg, "bob", resource); err == nil || !strings.Contains(err.Error(), "access_denied") {
		t.Errorf("denied consent: err %v, want access_denied", err)
	}

	s.SetConsent(nil)
	tok, err = s.UserToken(ctx(t), cfg, "bob", resource)
	if err != nil {
		t.Fatal(err)
	}
	if c := claims(t, tok.AccessToken); c["scope"] != "mcp:tools mcp:admin" || !slices.Equal(strs(c["aud"]), []string{resource}) {
		t.Errorf("after SetConsent(nil): scope %v aud %v; want all that was asked", c["scope"], c["aud"])
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDefaultConsent grants the audience asked for and the resources,
// each once.
func TestDefaultConsent(t *testing.T) {
	got := testhydra.DefaultConsent(testhydra.ConsentRequest{
		Scopes: []string{"a", "b"}, Audience: []string{"https://x/", "https://y/"}, Resources: []string{"https://y/", "https://z/"},
	})
	if !slices.Equal(got.Scopes, []string{"a", "b"}) || !slices.Equal(got.Audience, []string{"https://x/", "https://y/", "https://z/"}) || got.Deny {
		t.Errorf("DefaultConsent = %+v", got)
	}
}

// TestClientCredentials obtains tokens with the client credentials grant.
func TestClientCredentials(t *testing.T) {
	s := testhydra.Start(t)
	id, secret, err := s.CreateClient(ctx(t), testhydra.Client{
		GrantTypes: []string{"client_credentials"}, Scopes: []string{"mcp:tools", "mcp:admin"}, Audience: []string{resource},
	})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := s.ClientCredentialsToken(ctx(t), id, secret, []string{"mcp:tools"}, []string{resource})
	if err != nil {
		t.Fatal(err)
	}
	c := claims(t, tok.AccessToken)
	if c["sub"] != id || c["iss"] != s.Issuer() || c["scope"] != "mcp:tools" || !slices.Equal(strs(c["aud"]), []string{resource}) {
		t.Errorf("claims %v; want sub %s, iss %s, scope mcp:tools, aud [%s]", c, id, s.Issuer(), resource)
	}
	for name, tc := range map[string]struct {
		secret   string
		audience []string
		want     string
	}{
		"audience the client was not registered with": {secret, []string{"http://127.0.0.1:9/other"}, "invalid_request"},
		"wrong secret": {"not-the-secret", []string{resource}, "invalid_client"},
	} {
		if _, err := s.ClientCredentialsToken(ctx(t), id, tc.secret, nil, tc.audience); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want %s", name, err, tc.want)
		}
	}
}

// TestDiscoveryAndJWKS looks at what a client and a resource server read
// first: discovery, and the keys that sign the access tokens.
func TestDiscoveryAndJWKS(t *testing.T) {
	s := testhydra.Start(t, testhydra.AccessTokenTTL(90*time.Second))
	if !strings.HasPrefix(s.Issuer(), "http://127.0.0.1:") || !strings.HasSuffix(s.Issuer(), "/") ||
		s.Issuer() != s.PublicURL()+"/" || s.AdminURL() == s.PublicURL() {
		t.Fatalf("issuer %s, public %s, admin %s", s.Issuer(), s.PublicURL(), s.AdminURL())
	}
	d := s.Discovery()
	if d["issuer"] != s.Issuer() || d["jwks_uri"] != s.JWKSURL() || d["token_endpoint"] != s.Endpoint().TokenURL ||
		d["authorization_endpoint"] != s.Endpoint().AuthURL || d["registration_endpoint"] != s.PublicURL()+"/oauth2/register" ||
		!slices.Contains(strs(d["code_challenge_methods_supported"]), "S256") {
		t.Errorf("discovery %v", d)
	}

	id, secret, err := s.CreateClient(ctx(t), testhydra.Client{GrantTypes: []string{"client_credentials"}})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := s.ClientCredentialsToken(ctx(t), id, secret, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var header struct {
		Alg, Kid, Typ string
	}
	h, err := base64.RawURLEncoding.DecodeString(strings.Split(tok.AccessToken, ".")[0])
	if err != nil || json.Unmarshal(h, &header) != nil {
		t.Fatalf("the token's header %q: %v", h, err)
	}
	c := claims(t, tok.AccessToken)
	// Hydra counts the lifetime from when the request arrived, iat from
	// when the token was made: seconds apart on a loaded machine.
	if exp, iat := c["exp"].(float64), c["iat"].(float64); exp-iat < 60 || exp-iat > 90 {
		t.Errorf("exp - iat = %v s, want the 90 s of AccessTokenTTL", exp-iat)
	}

	resp, err := http.Get(s.JWKSURL())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var jwks struct {
		Keys []struct {
			Kid, Kty, Alg, Use string
			D                  string `json:"d"`
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&jwks); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, k := range jwks.Keys {
		if k.D != "" {
			t.Errorf("the JWKS publishes the private part of key %s", k.Kid)
		}
		found = found || k.Kid == header.Kid && k.Alg == header.Alg && k.Kty == "RSA"
	}
	if header.Alg != "RS256" || !found {
		t.Errorf("the token is signed with %s key %q; the JWKS has %+v", header.Alg, header.Kid, jwks.Keys)
	}
}

// TestDynamicRegistration registers a client as an MCP client does
// (RFC 7591), without asking for scopes: it gets DynamicClientScopes.
func TestDynamicRegistration(t *testing.T) {
	s := testhydra.Start(t, testhydra.DynamicClientScopes("mcp:tools", "offline_access"))
	body := `{"redirect_uris":["` + redirect + `"],"grant_types":["authorization_code","refresh_token"],` +
		`"response_types":["code"],"token_endpoint_auth_method":"none","client_name":"toolwire test"}`
	resp, err := http.Post(s.Discovery()["registration_endpoint"].(string), "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var reg struct {
		ClientID string `json:"client_id"`
		Scope    string `json:"scope"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&reg); err != nil || resp.StatusCode != http.StatusCreated || reg.ClientID == "" {
		t.Fatalf("registration: %s, %+v, %v", resp.Status, reg, err)
	}
	if reg.Scope != "mcp:tools offline_access" {
		t.Errorf("registered scope %q, want DynamicClientScopes'", reg.Scope)
	}
	cfg := &oauth2.Config{ClientID: reg.ClientID, RedirectURL: redirect, Scopes: []string{"mcp:tools"}}
	tok, err := s.UserToken(ctx(t), cfg, "bob", resource)
	if err != nil {
		t.Fatal(err)
	}
	if c := claims(t, tok.AccessToken); c["scope"] != "mcp:tools" || c["sub"] != "bob" {
		t.Errorf("claims %v", c)
	}
}

// TestBrowse plays the user agent into the cases where the flow does not
// end at a loopback redirect URI with a code.
func TestBrowse(t *testing.T) {
	s := testhydra.Start(t)
	cfg := userClient(t, s, "none")
	authURL := func(redirectURI string, params ...string) string {
		c := *cfg
		c.RedirectURL = redirectURI
		opts := []oauth2.AuthCodeOption{oauth2.S256ChallengeOption(oauth2.GenerateVerifier())}
		for i := 0; i < len(params); i += 2 {
			opts = append(opts, oauth2.SetAuthURLParam(params[i], params[i+1]))
		}
		return c.AuthCodeURL("state-0123456789", opts...)
	}

	t.Run("Visit delivers the code to the listener waiting at the redirect URI", func(t *testing.T) {
		got := make(chan url.Values, 1)
		ln := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			got <- r.URL.Query()
		}))
		defer ln.Close()
		back, err := s.Visit(ctx(t), authURL(ln.URL+"/callback"))
		if err != nil {
			t.Fatal(err)
		}
		q := <-got
		if q.Get("code") == "" || q.Get("state") != "state-0123456789" || q.Get("code") != back.Query().Get("code") {
			t.Errorf("the listener got %v; Visit returned %s", q, back)
		}
	})
	t.Run("Visit reports the listener's error", func(t *testing.T) {
		ln := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "state mismatch", http.StatusBadRequest)
		}))
		defer ln.Close()
		if _, err := s.Visit(ctx(t), authURL(ln.URL+"/callback")); err == nil || !strings.Contains(err.Error(), "state mismatch") {
			t.Errorf("err %v, want the listener's answer", err)
		}
	})
	t.Run("Visit fetches no redirect URI off loopback", func(t *testing.T) {
		id, _, err := s.CreateClient(ctx(t), testhydra.Client{RedirectURIs: []string{"http://192.0.2.1/callback"}, TokenEndpointAuthMethod: "none"})
		if err != nil {
			t.Fatal(err)
		}
		c := oauth2.Config{ClientID: id, Endpoint: s.Endpoint(), RedirectURL: "http://192.0.2.1/callback"}
		u := c.AuthCodeURL("state-0123456789", oauth2.S256ChallengeOption(oauth2.GenerateVerifier()))
		if _, err := s.Visit(ctx(t), u); err == nil || !strings.Contains(err.Error(), "no loopback redirect URI") {
			t.Errorf("err %v, want a refusal to fetch", err)
		}
	})
	t.Run("a redirect URI the client did not register", func(t *testing.T) {
		_, err := s.Browse(ctx(t), authURL("http://127.0.0.1/elsewhere"))
		if err == nil || !strings.Contains(err.Error(), "redirect_uri") || !strings.Contains(err.Error(), "400 Bad Request") {
			t.Errorf("err %v, want hydra's error page about the redirect_uri", err)
		}
	})
	t.Run("a scope the client may not ask for comes back as an error", func(t *testing.T) {
		back, err := s.Browse(ctx(t), authURL(redirect, "scope", "mcp:root"))
		if err != nil {
			t.Fatal(err)
		}
		if back.Query().Get("error") != "invalid_scope" || back.Query().Get("code") != "" {
			t.Errorf("redirected to %s, want error=invalid_scope", back)
		}
	})
	t.Run("no PKCE", func(t *testing.T) {
		back, err := s.Browse(ctx(t), cfg.AuthCodeURL("state-0123456789"))
		if err != nil {
			t.Fatal(err)
		}
		if back.Query().Get("error") != "invalid_request" || !strings.Contains(back.Query().Get("error_description"), "code_challenge") {
			t.Errorf("redirected to %s, want invalid_request about the missing code_challenge", back)
		}
	})
	t.Run("a URL that is not hydra's", func(t *testing.T) {
		_, err := s.Browse(ctx(t), "http://127.0.0.1:9/oauth2/auth?client_id="+cfg.ClientID)
		if err == nil || !strings.Contains(err.Error(), "is not hydra's") {
			t.Errorf("err %v, want a refusal", err)
		}
	})
}

// TestStop checks that the Hydra process a test started is gone when the
// test ends.
func TestStop(t *testing.T) {
	before := testpeers.Children(t)
	t.Run("start", func(t *testing.T) {
		testhydra.Start(t)
		if n := len(testpeers.Children(t)); n != len(before)+1 {
			t.Fatalf("%d child processes after Start, want %d", n, len(before)+1)
		}
	})
	if after := testpeers.Children(t); !slices.Equal(after, before) {
		t.Errorf("child processes %v after the test, want %v", after, before)
	}
}

// TestOrphan checks that Hydra dies with a test process that ends without
// its cleanups: this test runs itself as a child that starts Hydra, prints
// its PID and exits at once.
func TestOrphan(t *testing.T) {
	if os.Getenv("TESTHYDRA_ORPHAN") == "1" {
		testhydra.Start(t)
		os.Stdout.WriteString("hydra pid " + strconv.Itoa(testpeers.Children(t)[0]) + "\n")
		os.Exit(0)
	}
	if runtime.GOOS != "linux" {
		t.Skip("Hydra dies with its parent on Linux only (a parent-death signal)")
	}
	testhydra.Binary(t)
	cmd := exec.CommandContext(ctx(t), os.Args[0], "-test.run=^TestOrphan$", "-test.count=1")
	cmd.Env = append(os.Environ(), "TESTHYDRA_ORPHAN=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	_, after, ok := strings.Cut(string(out), "hydra pid ")
	pid, err := strconv.Atoi(strings.TrimSpace(after))
	if !ok || err != nil {
		t.Fatalf("the child printed %q", out)
	}
	for range 100 {
		if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err != nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	p, _ := os.FindProcess(pid)
	_ = p.Kill()
	t.Fatalf("hydra (pid %d) outlived the test process that started it", pid)
}
