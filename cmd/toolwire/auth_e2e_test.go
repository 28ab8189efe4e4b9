package main

import (
	"bufio"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/toolwire/toolwire/bearer"
	"github.com/toolwire/toolwire/internal/testhydra"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/oauth"
)

// digest names a token in a test's log without showing it.
func digest(token string) string {
	if token == "" {
		return "none"
	}
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:6])
}

// editGrant changes the grant for resource in the token file at path.
func editGrant(t *testing.T, path, resource string, edit func(*oauth.Grant)) {
	t.Helper()
	var f tokenFile
	b, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(b, &f)
	}
	if err != nil || f.Grants[resource] == nil {
		t.Fatalf("the token file holds no grant for %s (%v)", resource, err)
	}
	edit(f.Grants[resource])
	if b, err = json.Marshal(f); err == nil {
		err = os.WriteFile(path, b, 0o600)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// TestLoginRefresh: toolwire's stored tokens, from a real authorization
// server (Ory Hydra) whose access tokens live seconds, keep working for
// toolwire call without a new login: an expired access token is refreshed
// before it is sent, and one the server refuses though the client holds
// it for valid (a tampered one) is refreshed on the server's 401; each
// refresh leaves new tokens in the store (Hydra rotates refresh tokens).
// Once Hydra refuses the refresh token (the user's consent revoked), the
// call says to log in again, with the command, and a new login works. No
// token appears in any output.
func TestLoginRefresh(t *testing.T) {
	t.Parallel()
	const ttl = 3 * time.Second
	hy := testhydra.Start(t, testhydra.AccessTokenTTL(ttl), testhydra.DynamicClientScopes("openid", "offline", "offline_access", "mcp:tools"))
	resource, serverLog := protectedServer(t, hy)
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	user := &browserUser{hy: hy}
	browser := httptest.NewServer(user)
	defer browser.Close()
	home := t.TempDir()
	cfg := writeConfig(t, map[string]string{"calc": fmt.Sprintf(`{"url": %q}`, resource)})
	env := browserEnv(t, home, browser.URL)
	tokensFile := filepath.Join(home, ".config", "toolwire", "tokens.json")
	var outputs, secrets []string
	runTW := func(args ...string) result {
		t.Helper()
		r := runEnv(t, env, "", args...)
		outputs = append(outputs, r.stdout, r.stderr)
		return r
	}
	// grant reads the stored grant, and keeps its tokens for the final
	// check.
	grant := func() oauth.Grant {
		t.Helper()
		g := storedGrant(t, tokensFile, resource)
		secrets = append(secrets, g.AccessToken, g.RefreshToken, g.ClientSecret)
		return g
	}
	login := func() oauth.Grant {
		t.Helper()
		r := runTW("login", "calc", "--config", cfg, "--timeout", "60s")
		if r.code != 0 || !strings.Contains(r.stdout, "Logged in to calc as "+testhydra.DefaultSubject) {
			t.Fatalf("login: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		g := grant()
		if g.AccessToken == "" || g.RefreshToken == "" {
			t.Fatalf("the login stored no access token (%t) or no refresh token (%t)", g.AccessToken != "", g.RefreshToken != "")
		}
		return g
	}
	call := func(what string) {
		t.Helper()
		start := time.Now()
		r := runTW("call", "--config", cfg, "--timeout", "60s", "calc__calculate", `{"expression": "6*7"}`)
		if r.code != 0 || !strings.Contains(r.stdout, "42") {
			t.Fatalf("call %s: exit %d\n%s%s", what, r.code, r.stdout, r.stderr)
		}
		t.Logf("call %s: %v", what, time.Since(start).Round(time.Millisecond))
	}
	// renewed checks that the store holds new tokens since before, for
	// the same user and server.
	renewed := func(what string, before oauth.Grant) oauth.Grant {
		t.Helper()
		g := grant()
		t.Logf("%s: access token %s -> %s, refresh token %s -> %s, expiry %s",
			what, digest(before.AccessToken), digest(g.AccessToken), digest(before.RefreshToken), digest(g.RefreshToken), g.Expiry.Format(time.TimeOnly))
		if g.AccessToken == "" || g.AccessToken == before.AccessToken || g.RefreshToken == "" || g.RefreshToken == before.RefreshToken {
			t.Fatalf("%s: the store does not hold new tokens (access token new %t, refresh token new %t)", what,
				g.AccessToken != before.AccessToken, g.RefreshToken != before.RefreshToken)
		}
		c, err := testhydra.Claims(g.AccessToken)
		if err != nil {
			t.Fatal(err)
		}
		if aud, _ := c["aud"].([]any); c["sub"] != testhydra.DefaultSubject || c["iss"] != hy.Issuer() || len(aud) != 1 || aud[0] != resource {
			t.Errorf("%s: the new access token says sub %v, iss %v, aud %v", what, c["sub"], c["iss"], c["aud"])
		}
		// Issued later, it expires no sooner (in whole seconds: the
		// stored expiries, from expires_in, may be a second off).
		old, err := testhydra.Claims(before.AccessToken)
		newExp, _ := c["exp"].(float64)
		oldExp, _ := old["exp"].(float64)
		if err != nil || newExp == 0 || newExp < oldExp {
			t.Errorf("%s: the new access token expires at %v, before the old one (%v; %v)", what, c["exp"], old["exp"], err)
		}
		return g
	}
	// needsLogin checks that a call fails saying to log in, and that the
	// store keeps no dead token.
	needsLogin := func(what string) {
		t.Helper()
		r := runTW("call", "--config", cfg, "--timeout", "60s", "calc__calculate", `{"expression": "6*7"}`)
		t.Logf("call %s: exit %d\n%s", what, r.code, r.stderr)
		if want := `server "calc" needs a login: run toolwire login calc --config ` + cfg; r.code == 0 || !strings.Contains(r.stderr, want) {
			t.Errorf("call %s: exit %d, want a failure saying %q:\n%s%s", what, r.code, want, r.stdout, r.stderr)
		}
		for _, bad := range []string{"panic", "goroutine ", "401", "Unauthorized"} {
			if strings.Contains(r.stderr, bad) {
				t.Errorf("call %s: stderr says %q:\n%s", what, bad, r.stderr)
			}
		}
		if g := grant(); g.AccessToken != "" || g.RefreshToken != "" {
			t.Errorf("call %s: the store still holds the refused tokens (access token %t, refresh token %t)", what, g.AccessToken != "", g.RefreshToken != "")
		}
	}
	// waitPast sleeps until the access token of g has expired.
	waitPast := func(g oauth.Grant) {
		t.Helper()
		if left := time.Until(g.Expiry); left > ttl+5*time.Second {
			t.Fatalf("the access token expires in %v, though Hydra's access tokens live %v", left, ttl)
		}
		select {
		case <-time.After(time.Until(g.Expiry) + 500*time.Millisecond):
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		}
	}

	g0 := login()
	call("after the login")
	g1 := grant()
	t.Logf("after the first call: access token %s, expiry %s (the login's: %s, %s)", digest(g1.AccessToken), g1.Expiry.Format(time.TimeOnly), digest(g0.AccessToken), g0.Expiry.Format(time.TimeOnly))

	// The access token expires; the next call refreshes it first.
	waitPast(g1)
	call("with the access token expired")
	g2 := renewed("the expired access token refreshed", g1)

	// The store says the access token is good for an hour, but the server
	// refuses it (401): the call refreshes it then.
	var tampered string
	editGrant(t, tokensFile, resource, func(g *oauth.Grant) {
		parts := strings.Split(g.AccessToken, ".")
		parts[2] = flipFirst(parts[2])
		g.AccessToken, g.Expiry = strings.Join(parts, "."), time.Now().Add(time.Hour)
		tampered = g.AccessToken
	})
	secrets = append(secrets, tampered)
	call("with an access token the server refuses")
	g3 := renewed("the refused access token refreshed", oauth.Grant{AccessToken: tampered, RefreshToken: g2.RefreshToken, Expiry: g2.Expiry})

	user.mu.Lock()
	opened, errs := user.opened, user.errs
	user.mu.Unlock()
	if opened != 1 || len(errs) > 0 {
		t.Errorf("the browser was opened %d times (want 1, for the login; the refreshes need none); failures: %v", opened, errs)
	}

	// Hydra refuses the refresh token: the call says to log in, and drops
	// the dead tokens.
	if err := hy.RevokeConsent(ctx, testhydra.DefaultSubject); err != nil {
		t.Fatal(err)
	}
	waitPast(g3)
	needsLogin("with the refresh token refused")
	r := runTW("servers", "--config", cfg)
	t.Logf("toolwire servers with the refresh token refused:\n%s", r.stdout)
	if r.code != 0 || strings.Contains(r.stdout, "logged in as") {
		t.Errorf("servers with the refresh token refused: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// A new login works again.
	g4 := login()
	call("after logging in again")

	// Hydra forgets the client toolwire registered (an administrator
	// deleted it): the call says to log in, and the login registers a
	// new client, rather than sending the user to log in for the
	// forgotten one (Hydra stops that login at its error page: it never
	// comes back).
	if err := hy.DeleteClient(ctx, g4.ClientID); err != nil {
		t.Fatal(err)
	}
	waitPast(grant())
	needsLogin("with the client forgotten")
	if g := login(); g.ClientID == g4.ClientID {
		t.Errorf("the login after Hydra forgot the client uses it still")
	}
	call("after logging in with a new client")

	if !strings.Contains(serverLog.String(), "tools/call") {
		t.Errorf("the server logged no call:\n%s", serverLog)
	}
	checkNoTokens(t, secrets, append(outputs, serverLog.String()))
}

// flipFirst changes the first character of a base64url string: in a
// JWT's signature, a tampered token.
func flipFirst(s string) string {
	if s[0] == 'A' {
		return "B" + s[1:]
	}
	return "A" + s[1:]
}

// mcpReply is an HTTP answer to an MCP request.
type mcpReply struct {
	status int
	header http.Header
	body   string
}

// mcpPost POSTs an MCP message to url with the Authorization header
// values auth (none when empty) and more headers, and reads the answer
// (at most 1 MiB of it).
func mcpPost(ctx context.Context, t *testing.T, url string, auth []string, headers map[string]string, body string) mcpReply {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	for _, a := range auth {
		req.Header.Add("Authorization", a)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return mcpReply{resp.StatusCode, resp.Header, string(b)}
}

// The requests of TestServeAuthRefusals: a tools/call of calculate, 6*7.
const (
	modernCall = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"calculate","arguments":{"expression":"6*7"},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"` + mcp.Version20260728 + `","io.modelcontextprotocol/clientCapabilities":{}}}}`
	legacyInitialize  = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"%s","capabilities":{},"clientInfo":{"name":"refusals","version":"1"}}}`
	legacyInitialized = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	legacyCall        = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"calculate","arguments":{"expression":"6*7"}}}`
)

// challengeParam matches a parameter of a WWW-Authenticate challenge.
var challengeParam = regexp.MustCompile(`([a-z_]+)="((?:[^"\\]|\\.)*)"`)

// TestServeAuthRefusals sends a real toolwire serve --http --auth-issuer
// (a real authorization server: Ory Hydra) MCP requests of each era
// (a 2026-07-28 request; a 2025-11-25 initialize, then a call in its
// session; the 2024-11-05 HTTP+SSE stream, then a call through it) with
// tokens it must refuse: none, a malformed Authorization header, a token
// for another audience, an expired one, a tampered one, one without the
// scope every request needs, one without the scope the tool needs. Each
// gets its status (401, 400, 403) and a Bearer challenge naming the
// server's Protected Resource Metadata (which names Hydra), the error and
// the scope needed; a token with every scope gets its answer. No token
// appears in an answer or in the server's log.
func TestServeAuthRefusals(t *testing.T) {
	t.Parallel()
	hy := testhydra.Start(t)
	resource, serverLog := protectedServer(t, hy, "--auth-tool-scope", "calculate=calc:use")
	base := strings.TrimSuffix(resource, "/mcp")
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	const redirect = "http://127.0.0.1/callback"
	scopes := []string{"mcp:tools", "calc:use"}
	newClient := func(lifespan time.Duration) *oauth2.Config {
		id, secret, err := hy.CreateClient(ctx, testhydra.Client{GrantTypes: []string{"authorization_code"}, RedirectURIs: []string{redirect},
			Scopes: scopes, AccessTokenLifespan: lifespan})
		if err != nil {
			t.Fatal(err)
		}
		return &oauth2.Config{ClientID: id, ClientSecret: secret, RedirectURL: redirect, Scopes: scopes}
	}
	client := newClient(0)
	var secrets []string
	token := func(cfg *oauth2.Config, resource string, granted ...string) string {
		t.Helper()
		if granted != nil {
			hy.SetConsent(func(r testhydra.ConsentRequest) testhydra.Consent {
				c := testhydra.DefaultConsent(r)
				c.Scopes = granted
				return c
			})
			defer hy.SetConsent(nil)
		}
		tok, err := hy.UserToken(ctx, cfg, testhydra.DefaultSubject, resource)
		if err != nil {
			t.Fatal(err)
		}
		secrets = append(secrets, tok.AccessToken)
		return tok.AccessToken
	}
	// The expired token first: the server allows a minute of clock skew
	// (bearer.DefaultLeeway) past its expiry, which the other rows use.
	expired := token(newClient(time.Second), resource)
	c, err := testhydra.Claims(expired)
	if err != nil {
		t.Fatal(err)
	}
	exp, _ := c["exp"].(float64)
	expiredAfter := time.Unix(int64(exp), 0).Add(bearer.DefaultLeeway + time.Second)
	valid := token(client, resource)
	parts := strings.Split(valid, ".")
	tampered := parts[0] + "." + parts[1] + "." + flipFirst(parts[2])
	secrets = append(secrets, tampered)
	bearerOf := func(tok string) []string { return []string{"Bearer " + tok} }

	// The Protected Resource Metadata the challenges point at.
	prm := strings.Replace(resource, "/mcp", "/.well-known/oauth-protected-resource/mcp", 1)
	r := mcpGet(ctx, t, prm, nil)
	var md struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
		ScopesSupported      []string `json:"scopes_supported"`
	}
	if err := json.Unmarshal([]byte(r.body), &md); r.status != http.StatusOK || err != nil {
		t.Fatalf("GET %s: %d %v\n%s", prm, r.status, err, r.body)
	}
	if md.Resource != resource || !slices.Equal(md.AuthorizationServers, []string{hy.Issuer()}) || !slices.Equal(md.ScopesSupported, []string{"calc:use", "mcp:tools"}) {
		t.Errorf("the metadata at %s: %s; want resource %s, authorization_servers [%s], scopes_supported [calc:use mcp:tools]", prm, r.body, resource, hy.Issuer())
	}

	eras := []struct {
		name string
		// send makes the era's request with the Authorization header
		// values auth, and returns the answer of the first step refused,
		// else the call's.
		send func(auth []string) mcpReply
		// ok says whether the answer of the call is the call's result.
		ok func(r mcpReply) bool
	}{
		{"2026-07-28", func(auth []string) mcpReply {
			return mcpPost(ctx, t, resource, auth, map[string]string{mcp.HeaderProtocolVersion: mcp.Version20260728, mcp.HeaderMethod: "tools/call", mcp.HeaderName: "calculate"}, modernCall)
		}, func(r mcpReply) bool {
			return r.status == http.StatusOK && strings.Contains(r.body, `"42"`) || strings.Contains(r.body, `42`)
		}},
		{"2025-11-25", func(auth []string) mcpReply {
			r := mcpPost(ctx, t, resource, auth, nil, fmt.Sprintf(legacyInitialize, mcp.Version20251125))
			sid := r.header.Get(mcp.HeaderSessionID)
			if r.status != http.StatusOK || sid == "" {
				return r
			}
			headers := map[string]string{mcp.HeaderSessionID: sid, mcp.HeaderProtocolVersion: mcp.Version20251125}
			if r := mcpPost(ctx, t, resource, auth, headers, legacyInitialized); r.status != http.StatusAccepted {
				return r
			}
			return mcpPost(ctx, t, resource, auth, headers, legacyCall)
		}, func(r mcpReply) bool { return r.status == http.StatusOK && strings.Contains(r.body, "42") }},
		{"2024-11-05 HTTP+SSE", func(auth []string) mcpReply {
			return sseCall(ctx, t, base, auth)
		}, func(r mcpReply) bool { return r.status == http.StatusAccepted && strings.Contains(r.body, "42") }},
	}
	const (
		noError   = ""
		allScopes = "calc:use mcp:tools"
	)
	rows := []struct {
		name      string
		auth      []string
		notBefore time.Time // the row waits until then
		status    int       // 0: the call goes through
		err       string    // the challenge's error
		scope     string    // the challenge's scope
		desc      string    // in its error_description
	}{
		{name: "no token", status: http.StatusUnauthorized, err: noError, scope: "mcp:tools"},
		{name: "another scheme", auth: []string{"Basic YWxpY2U6c2VjcmV0"}, status: http.StatusUnauthorized, err: noError, scope: "mcp:tools"},
		{name: "no token after Bearer", auth: []string{"Bearer "}, status: http.StatusBadRequest, err: "invalid_request", desc: `no token after 'Bearer'`},
		{name: "a token with a space", auth: []string{"Bearer " + parts[0] + " " + parts[1]}, status: http.StatusBadRequest, err: "invalid_request", desc: "characters a bearer token cannot have"},
		{name: "two Authorization headers", auth: append(bearerOf(valid), bearerOf(valid)...), status: http.StatusBadRequest, err: "invalid_request", desc: "2 Authorization headers"},
		{name: "another audience", auth: bearerOf(token(client, "http://127.0.0.1:9/other")), status: http.StatusUnauthorized, err: "invalid_token", desc: "another audience"},
		{name: "tampered", auth: bearerOf(tampered), status: http.StatusUnauthorized, err: "invalid_token"},
		{name: "without the server's scope", auth: bearerOf(token(client, resource, "calc:use")), status: http.StatusForbidden, err: "insufficient_scope", scope: "mcp:tools", desc: "this server needs scope mcp:tools"},
		{name: "without the tool's scope", auth: bearerOf(token(client, resource, "mcp:tools")), status: http.StatusForbidden, err: "insufficient_scope", scope: allScopes, desc: "tool calculate needs scope " + allScopes},
		{name: "every scope", auth: bearerOf(valid)},
		{name: "expired", auth: bearerOf(expired), notBefore: expiredAfter, status: http.StatusUnauthorized, err: "invalid_token", desc: "expired at"},
	}
	var answers []string
	for _, row := range rows {
		if wait := time.Until(row.notBefore); wait > 0 {
			t.Logf("waiting %v for the expired token to be past the server's leeway", wait.Round(time.Second))
			select {
			case <-time.After(wait):
			case <-ctx.Done():
				t.Fatal(ctx.Err())
			}
		}
		for _, era := range eras {
			t.Run(row.name+"/"+era.name, func(t *testing.T) {
				r := era.send(row.auth)
				answers = append(answers, r.body, fmt.Sprint(r.header))
				if row.status == 0 {
					if !era.ok(r) {
						t.Errorf("status %d, want the call's result:\n%s", r.status, r.body)
					}
					return
				}
				if r.status != row.status {
					t.Fatalf("status %d, want %d:\n%s", r.status, row.status, r.body)
				}
				challenges := r.header.Values("WWW-Authenticate")
				if len(challenges) != 1 || !strings.HasPrefix(challenges[0], "Bearer ") {
					t.Fatalf("WWW-Authenticate %q, want one Bearer challenge", challenges)
				}
				params := map[string]string{}
				for _, m := range challengeParam.FindAllStringSubmatch(challenges[0], -1) {
					params[m[1]] = m[2]
				}
				t.Logf("%d, WWW-Authenticate: %s", r.status, challenges[0])
				if params["resource_metadata"] != prm || params["error"] != row.err || params["scope"] != row.scope || !strings.Contains(params["error_description"], row.desc) {
					t.Errorf("the challenge says resource_metadata %q, error %q, scope %q, error_description %q; want %q, %q, %q and a description saying %q",
						params["resource_metadata"], params["error"], params["scope"], params["error_description"], prm, row.err, row.scope, row.desc)
				}
				var body struct{ Error string }
				if err := json.Unmarshal([]byte(r.body), &body); err != nil || body.Error != cmp.Or(row.err, "unauthorized") {
					t.Errorf("the body %q, want an OAuth error %q", r.body, cmp.Or(row.err, "unauthorized"))
				}
			})
		}
	}
	checkNoTokens(t, secrets, append(answers, serverLog.String()))
}

// mcpGet GETs url with the Authorization header values auth and reads
// the answer (at most 1 MiB of it).
func mcpGet(ctx context.Context, t *testing.T, url string, auth []string) mcpReply {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range auth {
		req.Header.Add("Authorization", a)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return mcpReply{resp.StatusCode, resp.Header, string(b)}
}

// sseCall opens the HTTP+SSE stream of the server at base (GET /sse)
// with the Authorization header values auth, initializes a session
// through it and calls calculate. It returns the first answer that
// refuses (the stream's, or a POST's), else the call's POST answer (202)
// with the call's result, read from the stream, as its body.
func sseCall(ctx context.Context, t *testing.T, base string, auth []string) mcpReply {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/sse", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	for _, a := range auth {
		req.Header.Add("Authorization", a)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s/sse: %v", base, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return mcpReply{resp.StatusCode, resp.Header, string(b)}
	}
	lines := bufio.NewScanner(resp.Body)
	// data returns the data of the stream's next event whose data
	// contains want.
	data := func(want string) string {
		for lines.Scan() {
			if d, ok := strings.CutPrefix(lines.Text(), "data: "); ok && strings.Contains(d, want) {
				return d
			}
		}
		t.Fatalf("the event stream ended (%v) before an event with %q", lines.Err(), want)
		return ""
	}
	endpoint := base + data("sessionId=")
	for _, msg := range []string{fmt.Sprintf(legacyInitialize, "2024-11-05"), legacyInitialized} {
		if r := mcpPost(ctx, t, endpoint, auth, nil, msg); r.status != http.StatusAccepted {
			return r
		}
	}
	r := mcpPost(ctx, t, endpoint, auth, nil, legacyCall)
	if r.status == http.StatusAccepted {
		r.body = data(`"id":2`)
	}
	return r
}
