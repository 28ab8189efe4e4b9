package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/toolwire/toolwire/internal/testhydra"
	"github.com/toolwire/toolwire/oauth"
)

// testBrowser is the $BROWSER of the login tests: the test binary run
// with TOOLWIRE_TEST_BROWSER set to an address of the test process, to
// which it hands the URL it was asked to open; the test process then
// plays the user in the browser (testhydra's Visit: Hydra's login and
// consent, then the redirect to toolwire's listener).
func testBrowser(to string, args []string) int {
	if len(args) != 1 {
		fmt.Fprintf(os.Stderr, "test browser: want one URL, got %q\n", args)
		return 2
	}
	resp, err := http.Post(to, "text/plain", strings.NewReader(args[0]))
	if err != nil {
		fmt.Fprintln(os.Stderr, "test browser:", err)
		return 1
	}
	resp.Body.Close()
	return 0
}

// browserUser is the user at the test browser: it logs in to Hydra with
// each URL the browser is handed, and remembers what went wrong.
type browserUser struct {
	hy *testhydra.Server
	mu sync.Mutex
	// opened counts the URLs handed over; errs are the visits that failed.
	opened int
	errs   []error
}

func (b *browserUser) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<16))
	b.mu.Lock()
	b.opened++
	b.mu.Unlock()
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := b.hy.Visit(ctx, string(body)); err != nil {
			b.mu.Lock()
			b.errs = append(b.errs, err)
			b.mu.Unlock()
		}
	}()
}

// browserEnv is the environment of the toolwire commands of a login
// test: home as $HOME, tokens in its file (never the user's own keyring),
// and the test browser handing the URLs it opens to the browserUser at
// browserURL.
func browserEnv(t *testing.T, home, browserURL string) []string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return []string{
		"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		// Never the user's own keyring: the file, as where there is none.
		"TOOLWIRE_TOKEN_STORE=file",
		"BROWSER=" + self, "TOOLWIRE_TEST_BROWSER=" + browserURL, "GORACE=atexit_sleep_ms=0",
	}
}

// tokenFile is the content of the token file (oauth.FileStore's).
type tokenFile struct {
	Version int                     `json:"version"`
	Grants  map[string]*oauth.Grant `json:"grants"`
}

// storedGrant reads the grant for resource from the token file at path;
// a zero Grant when there is none.
func storedGrant(t *testing.T, path, resource string) oauth.Grant {
	t.Helper()
	var f tokenFile
	b, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(b, &f)
	}
	if err != nil {
		t.Fatalf("reading the token file: %v", err) // not its content: it holds tokens
	}
	if g := f.Grants[resource]; g != nil {
		return *g
	}
	return oauth.Grant{}
}

// checkNoTokens fails the test for each output that holds one of the
// secrets, naming the output by its index (never printing it: it holds
// a token).
func checkNoTokens(t *testing.T, secrets, outputs []string) {
	t.Helper()
	for i, out := range outputs {
		for j, s := range secrets {
			if s != "" && strings.Contains(out, s) {
				t.Errorf("output %d holds secret %d", i, j)
			}
		}
	}
}

// protectedServer runs toolwire serve --http with -v and more arguments,
// requiring Hydra's tokens for it (scope mcp:tools), and returns its URL
// and its log.
func protectedServer(t *testing.T, hy *testhydra.Server, more ...string) (string, *syncBuffer) {
	t.Helper()
	// The audience is the URL clients reach, port included: take a free
	// port for it.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	resource := "http://" + addr + "/mcp"
	got, log := serveHTTPWithLog(t, append([]string{"--http", addr, "-v", "--auth-issuer", hy.Issuer(), "--auth-audience", resource, "--auth-scope", "mcp:tools"}, more...)...)
	if got != addr {
		t.Fatalf("serve listens on %s, not %s", got, addr)
	}
	return resource, log
}

// TestLoginOnTerminal logs in to a real protected MCP server through a
// real authorization server (Ory Hydra), on a terminal: toolwire login
// opens the "browser", takes the redirect and keeps the tokens in a 0600
// file; toolwire servers shows whom as and until when; tools and call
// work with the tokens; toolwire logout forgets them, and the next call
// says to log in. The tokens appear in no output of any command, and
// nowhere but in the token file.
func TestLoginOnTerminal(t *testing.T) {
	hy := testhydra.Start(t, testhydra.DynamicClientScopes("openid", "offline", "offline_access", "mcp:tools"))
	resource, serverLog := protectedServer(t, hy)
	user := &browserUser{hy: hy}
	browser := httptest.NewServer(user)
	defer browser.Close()

	home := t.TempDir()
	cfg := writeConfig(t, map[string]string{"calc": fmt.Sprintf(`{"url": %q}`, resource)})
	env := browserEnv(t, home, browser.URL)
	var outputs []string // everything every command printed
	runTW := func(args ...string) result {
		t.Helper()
		r := runEnv(t, env, "", args...)
		outputs = append(outputs, r.stdout, r.stderr)
		return r
	}
	loginHint := "run toolwire login calc --config " + cfg

	// Before the login: the server needs one, and says how.
	r := runTW("tools", "--config", cfg)
	if r.code == 0 || !strings.Contains(r.stderr, `server "calc" needs a login: `+loginHint) {
		t.Fatalf("tools before the login: exit %d\n%s", r.code, r.stderr)
	}
	r = runTW("servers", "--config", cfg)
	if r.code != 0 || !strings.Contains(r.stdout, "calc") || !strings.Contains(r.stdout, resource) {
		t.Fatalf("servers before the login: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// The login, on a terminal.
	cmd := exec.Command(build(t), "login", "calc", "--config", cfg, "--timeout", "60s")
	cmd.Env = append(os.Environ(), env...)
	tty, err := pty.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	var scr screen
	go func() { _, _ = tty.WriteTo(&scr) }()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	scr.waitFor(t, "Logged in to calc as "+testhydra.DefaultSubject+" until ")
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("login: %v\n%s", err, scr.String())
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("login did not end:\n%s", scr.String())
	}
	outputs = append(outputs, scr.String())
	t.Logf("toolwire login on a terminal:\n%s", scr.String())
	tokensFile := filepath.Join(home, ".config", "toolwire", "tokens.json")
	for _, want := range []string{"log in to calc in the browser", "http://127.0.0.1:", "mcp:tools", "the tokens are kept in " + tokensFile + ", readable only by you"} {
		if !strings.Contains(scr.String(), want) {
			t.Errorf("the terminal does not show %q:\n%s", want, scr.String())
		}
	}
	user.mu.Lock()
	if user.opened != 1 || len(user.errs) > 0 {
		t.Errorf("the browser was opened %d times (want 1); failures: %v", user.opened, user.errs)
	}
	user.mu.Unlock()

	// The tokens are in the token file, which only the user may read.
	fi, err := os.Stat(tokensFile)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("token file mode %#o, want 0600", fi.Mode().Perm())
	}
	g := storedGrant(t, tokensFile, resource)
	if g.AccessToken == "" || g.RefreshToken == "" || g.Subject != testhydra.DefaultSubject {
		t.Fatalf("the token file holds no grant for %s with both tokens and the subject %s (access token %t, refresh token %t, subject %q)",
			resource, testhydra.DefaultSubject, g.AccessToken != "", g.RefreshToken != "", g.Subject)
	}
	secrets := []string{g.AccessToken, g.RefreshToken}

	// The listing says whom as, until when, with which scopes.
	r = runTW("servers", "--config", cfg)
	if r.code != 0 || !strings.Contains(r.stdout, "logged in as "+testhydra.DefaultSubject+" until ") || !strings.Contains(r.stdout, "mcp:tools") {
		t.Errorf("servers after the login: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	t.Logf("toolwire servers:\n%s", r.stdout)
	r = runTW("servers", "--config", cfg, "--json")
	var entries []serverEntry
	if err := json.Unmarshal([]byte(r.stdout), &entries); err != nil || len(entries) != 1 {
		t.Fatalf("servers --json: %v\n%s", err, r.stdout)
	}
	if a := entries[0].Auth; a.State != "logged_in" || a.Subject != testhydra.DefaultSubject || a.Expiry.Before(time.Now()) || !a.Refreshable {
		t.Errorf("servers --json: %+v", a)
	}
	t.Logf("toolwire servers --json:\n%s", r.stdout)
	r = runTW("servers", "--config", cfg, "--check")
	t.Logf("toolwire servers --check:\n%s", r.stdout)
	if !strings.Contains(r.stdout, "ready, 4 tools") {
		t.Errorf("servers --check: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// The tools work with the stored tokens.
	r = runTW("tools", "--config", cfg, "-v")
	if r.code != 0 || !strings.Contains(r.stdout, "calc__calculate") {
		t.Errorf("tools after the login: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = runTW("call", "--config", cfg, "-v", "calc__calculate", `{"expression": "6*7"}`)
	if r.code != 0 || !strings.Contains(r.stdout, "42") {
		t.Errorf("call after the login: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// Logged out, the next call says to log in again.
	r = runTW("logout", "calc", "--config", cfg)
	if r.code != 0 || !strings.Contains(r.stdout, "Logged out of calc") {
		t.Errorf("logout: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if b, _ := os.ReadFile(tokensFile); strings.Contains(string(b), g.AccessToken) || strings.Contains(string(b), g.RefreshToken) {
		t.Errorf("the token file still holds the tokens after logout")
	}
	r = runTW("call", "--config", cfg, "calc__calculate", `{"expression": "6*7"}`)
	t.Logf("toolwire call after logout:\n%s", r.stderr)
	if r.code == 0 || !strings.Contains(r.stderr, `server "calc" needs a login: `+loginHint) {
		t.Errorf("call after logout: exit %d\n%s", r.code, r.stderr)
	}
	r = runTW("logout", "calc", "--config", cfg)
	if r.code != 0 || !strings.Contains(r.stdout, "Not logged in to calc") {
		t.Errorf("second logout: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// No token in any output (the server's log included), nor in any file
	// but the token file.
	if !strings.Contains(serverLog.String(), "tools/call") {
		t.Errorf("the server logged no call:\n%s", serverLog)
	}
	checkNoTokens(t, secrets, append(outputs, serverLog.String()))
	_ = filepath.Walk(home, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() || p == tokensFile {
			return nil
		}
		b, _ := os.ReadFile(p)
		for _, s := range secrets {
			if strings.Contains(string(b), s) {
				t.Errorf("%s holds a token", p)
			}
		}
		return nil
	})
}

// TestLoginPreregisteredClient logs in with a client registered in
// advance (its secret from the environment, a fixed redirect URI), with
// --no-browser: the user opens the printed address. Where this system
// has the Secret Service client but no session bus, the tokens go to the
// file and the login says why.
func TestLoginPreregisteredClient(t *testing.T) {
	hy := testhydra.Start(t)
	resource, _ := protectedServer(t, hy)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const secret = "cs-PREREGISTERED-4e1d9"
	id, _, err := hy.CreateClient(ctx, testhydra.Client{
		Secret: secret, GrantTypes: []string{"authorization_code", "refresh_token"},
		RedirectURIs: []string{"http://127.0.0.1/callback"}, Scopes: []string{"mcp:tools", "offline_access"},
	})
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	cfg := writeConfig(t, map[string]string{"calc": fmt.Sprintf(`{"url": %q, "oauth": {"clientId": %q, "clientSecret": "${CALC_CLIENT_SECRET}", "redirectUri": "http://127.0.0.1/callback", "scopes": "mcp:tools offline_access"}}`, resource, id)})
	env := []string{
		"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"CALC_CLIENT_SECRET=" + secret, "BROWSER=", "GORACE=atexit_sleep_ms=0",
	}
	noKeyring := runtime.GOOS == "linux"
	if noKeyring {
		// The Secret Service client, with no session bus to reach.
		env = append(env, "TOOLWIRE_TOKEN_STORE=", "DBUS_SESSION_BUS_ADDRESS=unix:path="+filepath.Join(home, "no-bus"))
	} else {
		env = append(env, "TOOLWIRE_TOKEN_STORE=file") // never the user's own keyring
	}

	cmd := exec.CommandContext(ctx, build(t), "login", "calc", "--config", cfg, "--no-browser", "--timeout", "60s")
	cmd.Env = append(os.Environ(), env...)
	var stdout syncBuffer
	stderr := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, stderr.String, "\n\n")
	m := regexp.MustCompile(`\n  (http\S+)\n`).FindStringSubmatch(stderr.String())
	if m == nil {
		cmd.Process.Kill()
		t.Fatalf("login printed no address to visit:\n%s", stderr)
	}
	if _, err := hy.Visit(ctx, m[1]); err != nil {
		t.Errorf("visiting the printed address: %v", err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("login: %v\n%s%s", err, stdout.String(), stderr)
	}
	if !strings.Contains(stdout.String(), "Logged in to calc as "+testhydra.DefaultSubject) {
		t.Errorf("login's stdout: %s", stdout.String())
	}
	if noKeyring && !strings.Contains(stderr.String(), "readable only by you, as there is no OS keyring here (") {
		t.Errorf("login does not say why the tokens are in a file:\n%s", stderr)
	}
	r := runEnv(t, env, "", "servers", "--config", cfg, "--json")
	var entries []serverEntry
	if err := json.Unmarshal([]byte(r.stdout), &entries); err != nil || len(entries) != 1 || entries[0].Auth.ClientID != id {
		t.Errorf("servers --json: the grant is not the configured client's: %v\n%s", err, r.stdout)
	}
	c := runEnv(t, env, "", "call", "--config", cfg, "calc__calculate", `{"expression": "6*7"}`)
	if c.code != 0 || !strings.Contains(c.stdout, "42") {
		t.Errorf("call: exit %d\n%s%s", c.code, c.stdout, c.stderr)
	}
	for _, out := range []string{stdout.String(), stderr.String(), r.stdout, r.stderr, c.stdout, c.stderr} {
		if strings.Contains(out, secret) {
			t.Errorf("the client secret is printed:\n%s", out)
		}
	}
}

// TestLoginPasted: with the browser on another machine, the redirect
// cannot reach toolwire's listener; the user pastes the address the
// browser ended on, and the login completes. A pasted address of
// another login is refused, and the login waits on.
func TestLoginPasted(t *testing.T) {
	hy := testhydra.Start(t, testhydra.DynamicClientScopes("openid", "offline", "offline_access", "mcp:tools"))
	resource, _ := protectedServer(t, hy)
	home := t.TempDir()
	cfg := writeConfig(t, map[string]string{"calc": fmt.Sprintf(`{"url": %q}`, resource)})
	cmd := exec.Command(build(t), "login", "calc", "--config", cfg, "--no-browser", "--timeout", "60s")
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "TOOLWIRE_TOKEN_STORE=file", "GORACE=atexit_sleep_ms=0")
	tty, err := pty.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	var scr screen
	go func() { _, _ = tty.WriteTo(&scr) }()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	scr.waitFor(t, "paste here the address it ends on")
	m := regexp.MustCompile(`\n  (http\S+)\r?\n`).FindStringSubmatch(scr.String())
	if m == nil {
		cmd.Process.Kill()
		t.Fatalf("no address to visit:\n%s", scr.String())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	back, err := hy.Browse(ctx, m[1]) // the browser elsewhere: it never reaches 127.0.0.1
	if err != nil {
		cmd.Process.Kill()
		t.Fatal(err)
	}
	forged := *back
	q := forged.Query()
	q.Set("state", "not-this-login")
	forged.RawQuery = q.Encode()
	tty.WriteString(forged.String() + "\r")
	scr.waitFor(t, "state does not match")
	tty.WriteString(back.String() + "\r")
	scr.waitFor(t, "Logged in to calc as "+testhydra.DefaultSubject)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("login: %v\n%s", err, scr.String())
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("login did not end:\n%s", scr.String())
	}
}
