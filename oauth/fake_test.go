package oauth

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
)

// fake is an MCP server (the resource server) protected by an
// authorization server, each on a loopback httptest server. Its fields
// make each part misbehave; set them before the first request (they are
// read under mu, and may be changed between requests with set). It
// records what the client sent.
type fake struct {
	t      *testing.T
	rs, as *httptest.Server

	mu sync.Mutex
	// prmPath is where the Protected Resource Metadata is served.
	prmPath string
	// challenge returns the WWW-Authenticate values of a 401; nil: one
	// naming the metadata and scope.
	challenge func(f *fake) []string
	// scope is the scope parameter of the default challenge ("" none).
	scope string
	// need are the scopes a token must hold, else 403 insufficient_scope
	// naming need.
	need []string
	// prm edits the metadata document before it is served; prmRaw, if
	// set, is served instead.
	prm    func(m map[string]any)
	prmRaw string
	// issuerPath is the authorization server's issuer path ("/tenant1").
	issuerPath string
	// metaPath is where the authorization server metadata is served
	// (default: RFC 8414 path-inserted).
	metaPath string
	// meta edits the authorization server metadata before it is served;
	// metaRaw, if set, is served instead.
	meta    func(m map[string]any)
	metaRaw string
	// deny are scopes the authorization server never grants.
	deny []string
	// redirect edits the authorization response's query.
	redirect func(q url.Values)
	// token, if set, answers the token requests instead (status, body,
	// content type).
	token func(form url.Values) (int, string, string)
	// register, if set, answers the registrations instead.
	register func(body map[string]any) (int, string)
	// expiresIn is the tokens' lifetime (default 3600).
	expiresIn int
	// refuseAll makes the resource server refuse every token.
	refuseAll bool

	n          int                 // tokens issued
	valid      map[string][]string // live access tokens and their scopes
	refresh    map[string][]string // live refresh tokens and their scopes
	lastScope  string              // the last authorization request's scope
	challenge0 string              // the last code_challenge

	// What the client sent.
	authRequests []url.Values
	tokenForms   []url.Values
	tokenAuth    []string // the token requests' Authorization headers
	regs         []map[string]any
	paths        []string // every GET path, both servers
	mcpAuth      []string // the MCP requests' Authorization headers
	mcpBodies    []string // the MCP requests' bodies
	otherAuth    []string // the Authorization of requests to other paths
}

// newFake starts a fake; the servers stop at the test's end.
func newFake(t *testing.T) *fake {
	f := &fake{t: t, prmPath: "/.well-known/oauth-protected-resource/mcp", valid: map[string][]string{}, refresh: map[string][]string{}}
	f.rs = httptest.NewServer(http.HandlerFunc(f.serveRS))
	f.as = httptest.NewServer(http.HandlerFunc(f.serveAS))
	t.Cleanup(f.rs.Close)
	t.Cleanup(f.as.Close)
	return f
}

// set runs edit under the lock, to change the fake between requests.
func (f *fake) set(edit func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	edit()
}

// resource is the MCP endpoint's URL.
func (f *fake) resource() string { return f.rs.URL + "/mcp" }

// issuer is the authorization server's issuer.
func (f *fake) issuer() string { return f.as.URL + f.issuerPath }

// config returns a Config of the authorization code flow through the
// headless user agent, with a fresh MemoryStore.
func (f *fake) config() *Config {
	return &Config{Resource: f.resource(), RedirectURL: "http://127.0.0.1:9/callback", Authorize: headless, Store: &MemoryStore{}}
}

// headless is an Authorize that GETs the authorization URL without
// following its redirect and returns the redirect's target.
func headless(ctx context.Context, authURL string) (*url.URL, error) {
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	return resp.Location()
}

// call sends an MCP request through the Config's transport and returns
// the status.
func (f *fake) call(t *testing.T, rt http.RoundTripper) (int, error) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, f.resource(), strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := (&http.Client{Transport: rt}).Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

func (f *fake) serveRS(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r.Method == http.MethodGet {
		f.paths = append(f.paths, "rs:"+r.URL.Path)
	}
	switch {
	case r.Method == http.MethodGet && r.URL.Path == f.prmPath:
		if f.prmRaw != "" {
			fmt.Fprint(w, f.prmRaw)
			return
		}
		m := map[string]any{"resource": f.resource(), "authorization_servers": []string{f.issuer()}}
		if f.prm != nil {
			f.prm(m)
		}
		writeJSON(w, 200, m)
	case r.URL.Path == "/mcp":
		f.mcpAuth = append(f.mcpAuth, r.Header.Get("Authorization"))
		body, _ := io.ReadAll(r.Body)
		f.mcpBodies = append(f.mcpBodies, string(body))
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		scopes, live := f.valid[tok]
		if !ok || !live || f.refuseAll {
			hs := []string{fmt.Sprintf(`Bearer resource_metadata="%s%s"`, f.rs.URL, f.prmPath)}
			if f.scope != "" {
				hs[0] += fmt.Sprintf(`, scope="%s"`, f.scope)
			}
			if f.challenge != nil {
				hs = f.challenge(f)
			}
			for _, h := range hs {
				w.Header().Add("WWW-Authenticate", h)
			}
			writeJSON(w, 401, map[string]any{"error": "invalid_token"})
			return
		}
		for _, s := range f.need {
			if !slices.Contains(scopes, s) {
				w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="insufficient_scope", scope="%s", resource_metadata="%s%s"`, strings.Join(f.need, " "), f.rs.URL, f.prmPath))
				writeJSON(w, 403, map[string]any{"error": "insufficient_scope"})
				return
			}
		}
		writeJSON(w, 200, map[string]any{"jsonrpc": "2.0", "id": 1, "result": map[string]any{}})
	default:
		f.otherAuth = append(f.otherAuth, r.Header.Get("Authorization"))
		http.NotFound(w, r)
	}
}

func (f *fake) serveAS(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r.Method == http.MethodGet {
		f.paths = append(f.paths, "as:"+r.URL.Path)
	}
	metaPath := f.metaPath
	if metaPath == "" {
		metaPath = "/.well-known/oauth-authorization-server" + f.issuerPath
	}
	switch {
	case r.Method == http.MethodGet && r.URL.Path == metaPath && f.metaRaw != "":
		fmt.Fprint(w, f.metaRaw)
	case r.Method == http.MethodGet && r.URL.Path == metaPath:
		m := map[string]any{
			"issuer":                                         f.issuer(),
			"authorization_endpoint":                         f.as.URL + "/authorize",
			"token_endpoint":                                 f.as.URL + "/token",
			"registration_endpoint":                          f.as.URL + "/register",
			"response_types_supported":                       []string{"code"},
			"code_challenge_methods_supported":               []string{"S256"},
			"token_endpoint_auth_methods_supported":          []string{"client_secret_basic", "client_secret_post", "none"},
			"authorization_response_iss_parameter_supported": true,
		}
		if f.meta != nil {
			f.meta(m)
		}
		writeJSON(w, 200, m)
	case r.URL.Path == "/authorize":
		q := r.URL.Query()
		f.authRequests = append(f.authRequests, q)
		f.lastScope, f.challenge0 = q.Get("scope"), q.Get("code_challenge")
		back, err := url.Parse(q.Get("redirect_uri"))
		if err != nil {
			http.Error(w, "bad redirect_uri", 400)
			return
		}
		rq := url.Values{"code": {"code-SECRET-42"}, "state": {q.Get("state")}, "iss": {f.issuer()}}
		if f.redirect != nil {
			f.redirect(rq)
		}
		back.RawQuery = rq.Encode()
		http.Redirect(w, r, back.String(), http.StatusFound)
	case r.URL.Path == "/token":
		_ = r.ParseForm()
		f.tokenForms = append(f.tokenForms, r.PostForm)
		f.tokenAuth = append(f.tokenAuth, r.Header.Get("Authorization"))
		if f.token != nil {
			status, body, ct := f.token(r.PostForm)
			w.Header().Set("Content-Type", ct)
			w.WriteHeader(status)
			fmt.Fprint(w, body)
			return
		}
		f.issue(w, r.PostForm)
	case r.URL.Path == "/register":
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		f.regs = append(f.regs, body)
		if f.register != nil {
			status, resp := f.register(body)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			fmt.Fprint(w, resp)
			return
		}
		writeJSON(w, 201, map[string]any{"client_id": "dyn-client", "client_secret": "dyn-SECRET-secret", "token_endpoint_auth_method": body["token_endpoint_auth_method"]})
	default:
		http.NotFound(w, r)
	}
}

// issue answers a token request as a well-behaved authorization server.
func (f *fake) issue(w http.ResponseWriter, form url.Values) {
	var scopes []string
	switch form.Get("grant_type") {
	case "authorization_code":
		sum := sha256.Sum256([]byte(form.Get("code_verifier")))
		if form.Get("code") != "code-SECRET-42" || base64.RawURLEncoding.EncodeToString(sum[:]) != f.challenge0 {
			writeJSON(w, 400, map[string]any{"error": "invalid_grant"})
			return
		}
		scopes = strings.Fields(f.lastScope)
	case "refresh_token":
		s, ok := f.refresh[form.Get("refresh_token")]
		if !ok {
			writeJSON(w, 400, map[string]any{"error": "invalid_grant"})
			return
		}
		scopes = s
	case "client_credentials":
		scopes = strings.Fields(form.Get("scope"))
	default:
		writeJSON(w, 400, map[string]any{"error": "unsupported_grant_type"})
		return
	}
	scopes = slices.DeleteFunc(scopes, func(s string) bool { return slices.Contains(f.deny, s) })
	f.n++
	at := fmt.Sprintf("tok-SECRET-%d", f.n)
	f.valid[at] = scopes
	exp := f.expiresIn
	if exp == 0 {
		exp = 3600
	}
	resp := map[string]any{"access_token": at, "token_type": "Bearer", "expires_in": exp}
	if form.Get("grant_type") != "client_credentials" {
		rt := fmt.Sprintf("rt-SECRET-%d", f.n)
		f.refresh[rt] = scopes
		resp["refresh_token"] = rt
	}
	if len(scopes) > 0 {
		resp["scope"] = strings.Join(scopes, " ")
	}
	writeJSON(w, 200, resp)
}

// revokeAll makes every access token issued so far invalid.
func (f *fake) revokeAll() {
	f.set(func() { clear(f.valid) })
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
