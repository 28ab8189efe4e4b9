// Package testhydra runs a real OAuth 2.1 / OpenID Connect authorization
// server for tests: Ory Hydra, built by scripts/install-hydra.sh into
// .cache/bin/hydra, on free loopback ports with an in-memory database.
//
// Hydra issues JWT access tokens (signed with the keys of its JWKS), so a
// resource server can verify them. Hydra delegates login and consent to an
// application of the deployer's: here one the test process runs, which
// logs in the subject asked for and grants what the client asked for,
// through Hydra's own admin API (its intended integration, not a mock);
// SetConsent changes what it grants. Browse plays the user agent.
//
// Start skips the test where the binary is missing, and fails it instead
// under CI (see testpeers.Strict).
//
// Hydra does not implement RFC 8707: it ignores the resource parameter,
// and takes the access token's audience from its own audience parameter,
// which must be among the client's registered audiences. The consent
// application therefore grants, as the token's audience, both the
// audience asked for and the resource parameters of the authorization
// request, so that a token asked for with resource=URL carries aud=[URL],
// as an MCP server expects. Hydra also checks, on refresh, that the
// client may ask for each audience granted: the consent application adds
// those it grants to the client's registered audiences (admin API), as a
// deployer would register them. The client credentials grant has no
// consent: there only the audience parameter counts.
//
// What else a client or resource server meets with Hydra v2.3.0: its
// issuer ends with "/" (Issuer); it serves OpenID discovery only (no RFC
// 8414 /.well-known/oauth-authorization-server); it sends no iss in the
// authorization response (RFC 9207) and does not say it would; its access
// tokens are RS256 JWTs with typ "JWT" (not RFC 9068's "at+jwt"), carrying
// iss, sub, aud, client_id, scope and scp, exp, iat, nbf and jti; it issues
// a refresh token only when offline_access (or offline) is granted; a
// client registered dynamically without "scope" may ask only for
// DynamicClientScopes.
package testhydra

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/testpeers"
)

// Server is a Hydra process the test started, with the login and consent
// application it delegates to.
type Server struct {
	issuer    string
	publicURL string
	adminURL  string
	jwksURL   string
	discovery map[string]any
	app       *httptest.Server
	http      *http.Client

	mu      sync.Mutex
	subject string
	consent func(ConsentRequest) Consent
}

// options are what Start's Options set.
type options struct {
	accessTTL, refreshTTL time.Duration
	dynamicScopes         []string
}

// Option changes how Start configures Hydra.
type Option func(*options)

// AccessTokenTTL sets how long access tokens live (Hydra's default is an
// hour): a short one lets a test see a token expire and be refreshed.
func AccessTokenTTL(d time.Duration) Option {
	return func(o *options) { o.accessTTL = d }
}

// RefreshTokenTTL sets how long refresh tokens live (Hydra's default is
// 720 hours).
func RefreshTokenTTL(d time.Duration) Option {
	return func(o *options) { o.refreshTTL = d }
}

// DynamicClientScopes sets the scopes a client registered dynamically
// (RFC 7591, /oauth2/register) may ask for when its registration names
// none; Hydra's default is openid, offline and offline_access. A client
// that sends "scope" in its registration gets what it sent.
func DynamicClientScopes(scopes ...string) Option {
	return func(o *options) { o.dynamicScopes = scopes }
}

// DefaultSubject is the user the login application logs in when neither
// the authorization request's login_hint nor SetSubject names one.
const DefaultSubject = "alice"

// startAttempts bounds how often Start tries new ports when Hydra cannot
// listen on the ones it picked (another process took them meanwhile).
const startAttempts = 3

// requestTimeout bounds each request to Hydra's admin API, and to a
// redirect URI.
const requestTimeout = 30 * time.Second

// readyTimeout bounds the wait for Hydra to be ready (it takes a quarter
// of a second on an idle machine).
const readyTimeout = 30 * time.Second

// Binary returns the path of the Hydra binary scripts/install-hydra.sh
// builds, skipping the test (failing it under CI) when it is missing.
func Binary(t testing.TB) string {
	t.Helper()
	dir := testpeers.Root(t)
	bin := filepath.Join(dir, ".cache", "bin", "hydra")
	if _, err := os.Stat(bin); err != nil {
		testpeers.Missing(t, "Ory Hydra (.cache/bin/hydra)", "run ./scripts/install-hydra.sh (builds it in about 2 minutes)")
	}
	return bin
}

// Start starts Hydra and its login and consent application, and stops
// both when the test ends.
func Start(t testing.TB, opts ...Option) *Server {
	t.Helper()
	bin := Binary(t)
	var o options
	for _, f := range opts {
		f(&o)
	}
	s := &Server{subject: DefaultSubject, http: &http.Client{Timeout: requestTimeout}}
	s.app = httptest.NewServer(s.appHandler())
	t.Cleanup(s.app.Close)
	dir := t.TempDir()
	var lastErr error
	for attempt := range startAttempts {
		p, err := s.start(t, bin, dir, attempt, o)
		if err == nil {
			t.Cleanup(p.Stop)
			return s
		}
		lastErr = err
	}
	t.Fatalf("testhydra: Hydra did not start (%d attempts): %v", startAttempts, lastErr)
	return nil
}

// start runs Hydra once on new ports and waits until it is ready; on
// failure it has stopped the process and says why, with its log's end.
func (s *Server) start(t testing.TB, bin, dir string, attempt int, o options) (*testpeers.Process, error) {
	t.Helper()
	ports, err := testpeers.FreePorts(2)
	if err != nil {
		return nil, err
	}
	public, admin := ports[0], ports[1]
	s.publicURL = "http://127.0.0.1:" + strconv.Itoa(public)
	s.adminURL = "http://127.0.0.1:" + strconv.Itoa(admin)
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	cfg := map[string]any{
		"dsn":     "memory",
		"secrets": map[string]any{"system": []string{hex.EncodeToString(secret)}},
		"serve": map[string]any{
			"public": map[string]any{"host": "127.0.0.1", "port": public},
			"admin":  map[string]any{"host": "127.0.0.1", "port": admin},
		},
		"urls": map[string]any{
			"self":    map[string]any{"issuer": s.publicURL + "/", "public": s.publicURL + "/"},
			"login":   s.app.URL + "/login",
			"consent": s.app.URL + "/consent",
			"error":   s.app.URL + "/error",
		},
		// JWT access tokens, with the scopes both as RFC 9068's "scope"
		// string and as Hydra's "scp" list.
		"strategies": map[string]any{"access_token": "jwt", "jwt": map[string]any{"scope_claim": "both"}},
		// Client secrets hashed at BCrypt's lowest cost: a test server
		// checks many of them on a loaded machine.
		"oauth2": map[string]any{"pkce": map[string]any{"enforced": true},
			"hashers": map[string]any{"algorithm": "bcrypt", "bcrypt": map[string]any{"cost": 4}}},
		"oidc": map[string]any{"dynamic_client_registration": map[string]any{
			"enabled": true, "default_scope": cmpOr(o.dynamicScopes, []string{"openid", "offline", "offline_access"}),
		}},
		// Hydra's discovery names a registration endpoint only when told.
		"webfinger": map[string]any{"oidc_discovery": map[string]any{"client_registration_url": s.publicURL + "/oauth2/register"}},
		"log":       map[string]any{"level": "info"},
	}
	ttl := map[string]any{}
	if o.accessTTL > 0 {
		ttl["access_token"] = o.accessTTL.String()
	}
	if o.refreshTTL > 0 {
		ttl["refresh_token"] = o.refreshTTL.String()
	}
	if len(ttl) > 0 {
		cfg["ttl"] = ttl
	}
	data, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	conf := filepath.Join(dir, "hydra-"+strconv.Itoa(attempt)+".json")
	if err := os.WriteFile(conf, data, 0o600); err != nil {
		return nil, err
	}
	logPath := filepath.Join(dir, "hydra-"+strconv.Itoa(attempt)+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	cmd := exec.Command(bin, "serve", "all", "--dev", "--config", conf)
	// Only what Hydra needs from the environment: a config variable
	// inherited from the test's environment would override the file.
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "SQA_OPT_OUT=true"}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	p, err := testpeers.StartProcess(cmd)
	if err != nil {
		return nil, fmt.Errorf("running %s: %w", bin, err)
	}
	if err := s.waitReady(p.Exited()); err != nil {
		p.Stop()
		return nil, fmt.Errorf("%w; the end of its log:\n%s", err, testpeers.Tail(logPath, 2000))
	}
	return p, nil
}

// cmpOr returns a, or b when a is empty.
func cmpOr(a, b []string) []string {
	if len(a) == 0 {
		return b
	}
	return a
}

// waitReady waits, at most readyTimeout, until Hydra's admin and public
// endpoints answer /health/ready and its discovery document names the
// issuer it was given, and records the document.
func (s *Server) waitReady(exited <-chan struct{}) error {
	deadline := time.Now().Add(readyTimeout)
	for _, base := range []string{s.adminURL, s.publicURL} {
		for !s.ok(base + "/health/ready") {
			select {
			case <-exited:
				return errors.New("hydra exited before it was ready")
			case <-time.After(50 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%s/health/ready did not answer 200 within %v", base, readyTimeout)
			}
		}
	}
	var doc map[string]any
	if err := s.getJSON(context.Background(), s.publicURL+"/.well-known/openid-configuration", &doc); err != nil {
		return err
	}
	issuer, _ := doc["issuer"].(string)
	jwks, _ := doc["jwks_uri"].(string)
	if issuer != s.publicURL+"/" || jwks == "" {
		return fmt.Errorf("discovery names issuer %q and jwks_uri %q; want issuer %q and a jwks_uri", issuer, jwks, s.publicURL+"/")
	}
	s.issuer, s.jwksURL, s.discovery = issuer, jwks, doc
	return nil
}

// ok reports whether GET url answers 200.
func (s *Server) ok(url string) bool {
	resp, err := s.http.Get(url)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// Issuer returns Hydra's issuer identifier as its discovery document and
// tokens name it: "http://127.0.0.1:PORT/", with the trailing slash.
func (s *Server) Issuer() string { return s.issuer }

// PublicURL returns the base of Hydra's public endpoints, without a
// trailing slash.
func (s *Server) PublicURL() string { return s.publicURL }

// AdminURL returns the base of Hydra's admin API, without a trailing
// slash.
func (s *Server) AdminURL() string { return s.adminURL }

// JWKSURL returns the URL of the JSON Web Key Set that signs Hydra's
// tokens.
func (s *Server) JWKSURL() string { return s.jwksURL }

// Discovery returns a copy of Hydra's OpenID discovery document
// (/.well-known/openid-configuration; Hydra serves no RFC 8414
// /.well-known/oauth-authorization-server).
func (s *Server) Discovery() map[string]any {
	doc := make(map[string]any, len(s.discovery))
	for k, v := range s.discovery {
		doc[k] = v
	}
	return doc
}

// getJSON GETs url and decodes its JSON answer into v.
func (s *Server) getJSON(ctx context.Context, url string, v any) error {
	return s.doJSON(ctx, http.MethodGet, url, nil, v)
}

// doJSON sends a request with body (JSON, when not nil) and decodes a 2xx
// JSON answer into v; another status is an error quoting Hydra's answer.
func (s *Server) doJSON(ctx context.Context, method, url string, body, v any) error {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, r)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := s.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %s: %s", method, url, resp.Status, strings.TrimSpace(string(data)))
	}
	if v == nil {
		return nil
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s %s: decoding the answer: %w", method, url, err)
	}
	return nil
}
