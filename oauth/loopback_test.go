package oauth

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// get fetches u and returns the status and body.
func get(t *testing.T, u string) (int, string) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func listen(t *testing.T, redirect string) *Loopback {
	t.Helper()
	l, err := ListenLoopback(redirect)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

const testAuthURL = "https://as.example.com/authorize?client_id=c&state=st-123&response_type=code"

// TestLoopbackOneRedirect: Authorize takes the first redirect that
// carries its request's state, and only that one: a wrong state, a second
// redirect, a redirect when no login waits, and a POST are refused.
func TestLoopbackOneRedirect(t *testing.T) {
	l := listen(t, "")
	if !strings.HasPrefix(l.RedirectURL(), "http://127.0.0.1:") || !strings.HasSuffix(l.RedirectURL(), "/callback") {
		t.Fatalf("RedirectURL %q", l.RedirectURL())
	}
	if code, _ := get(t, l.RedirectURL()+"?code=early&state=st-123"); code != http.StatusBadRequest {
		t.Errorf("a redirect with no login waiting: %d, want 400", code)
	}
	type visit struct {
		query  string
		status int
		body   string
	}
	done := make(chan []visit, 1)
	l.Open = func(authURL string) {
		if authURL != testAuthURL {
			t.Errorf("Open got %q", authURL)
		}
		go func() {
			var visits []visit
			for _, q := range []string{"code=forged&state=wrong", "code=nostate", "code=good&state=st-123&iss=https%3A%2F%2Fas.example.com", "code=second&state=st-123"} {
				code, body := get(t, l.RedirectURL()+"?"+q)
				visits = append(visits, visit{q, code, body})
			}
			resp, err := http.Post(l.RedirectURL()+"?code=post&state=st-123", "text/plain", nil)
			if err == nil {
				resp.Body.Close()
				visits = append(visits, visit{"POST", resp.StatusCode, ""})
			}
			done <- visits
		}()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	u, err := l.Authorize(ctx, testAuthURL)
	if err != nil {
		t.Fatal(err)
	}
	if u.Query().Get("code") != "good" || u.Query().Get("iss") != "https://as.example.com" || !strings.HasPrefix(u.String(), l.RedirectURL()+"?") {
		t.Errorf("Authorize returned %v", u)
	}
	var visits []visit
	select {
	case visits = <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the visits did not end")
	}
	want := []int{400, 400, 200, 400, 405}
	if len(visits) != len(want) {
		t.Fatalf("visits: %+v", visits)
	}
	for i, v := range visits {
		if v.status != want[i] {
			t.Errorf("%s: status %d, want %d (%s)", v.query, v.status, want[i], v.body)
		}
	}
	if !strings.Contains(visits[2].body, "You can close this tab") {
		t.Errorf("the page after the login: %q", visits[2].body)
	}
}

// TestLoopbackTakesOneRedirect: once a request's redirect is taken, the
// next one is refused at once, even before Authorize has returned.
func TestLoopbackTakesOneRedirect(t *testing.T) {
	l := listen(t, "")
	p := &pendingRedirect{state: "st-123", got: make(chan *url.URL, 1)}
	l.pending = p
	for i, want := range []int{http.StatusOK, http.StatusBadRequest} {
		rec := httptest.NewRecorder()
		served := make(chan struct{})
		go func() {
			l.serveRedirect(rec, httptest.NewRequest(http.MethodGet, "/callback?code=c&state=st-123", nil))
			close(served)
		}()
		select {
		case <-served:
		case <-time.After(5 * time.Second):
			t.Fatalf("redirect %d: the handler is stuck", i+1)
		}
		if rec.Code != want {
			t.Errorf("redirect %d: %d, want %d", i+1, rec.Code, want)
		}
	}
	if u := <-p.got; u.Query().Get("code") != "c" {
		t.Errorf("the redirect taken: %v", u)
	}
}

// TestLoopbackErrorPage: a refused login shows the server's error,
// escaped, and still returns the redirect for the client to report.
func TestLoopbackErrorPage(t *testing.T) {
	l := listen(t, "")
	page := make(chan string, 1)
	l.Open = func(string) {
		go func() {
			_, body := get(t, l.RedirectURL()+"?error=access_denied&error_description=%3Cscript%3Ealert(1)%3C%2Fscript%3E&state=st-123")
			page <- body
		}()
	}
	u, err := l.Authorize(context.Background(), testAuthURL)
	if err != nil || u.Query().Get("error") != "access_denied" {
		t.Fatalf("Authorize: %v %v", u, err)
	}
	var body string
	select {
	case body = <-page:
	case <-time.After(5 * time.Second):
		t.Fatal("no page")
	}
	if !strings.Contains(body, "access_denied") || strings.Contains(body, "<script>") {
		t.Errorf("error page: %q", body)
	}
}

func TestLoopbackTimeout(t *testing.T) {
	l := listen(t, "")
	l.Timeout = 100 * time.Millisecond
	start := time.Now()
	bound, cancelBound := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancelBound()
	_, err := l.Authorize(bound, testAuthURL)
	if err == nil || !strings.Contains(err.Error(), "within 100ms") || time.Since(start) > 5*time.Second {
		t.Fatalf("Authorize without a redirect: %v after %v", err, time.Since(start))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := l.Authorize(ctx, testAuthURL); !errors.Is(err, context.Canceled) {
		t.Errorf("Authorize with a canceled context: %v", err)
	}
	// After the wait ended, a late redirect finds nobody waiting.
	if code, _ := get(t, l.RedirectURL()+"?code=late&state=st-123"); code != http.StatusBadRequest {
		t.Errorf("a late redirect: %d, want 400", code)
	}
}

// TestLoopbackBindsLoopbackOnly: the listener is on the loopback address,
// and the machine's other addresses do not reach it.
func TestLoopbackBindsLoopbackOnly(t *testing.T) {
	for _, redirect := range []string{"", "http://localhost:0/cb", "http://127.0.0.1/callback"} {
		l := listen(t, redirect)
		addr := l.ln.Addr().(*net.TCPAddr)
		if !addr.IP.IsLoopback() {
			t.Errorf("%q: listening on %v, not on the loopback interface", redirect, addr)
		}
		addrs, _ := net.InterfaceAddrs()
		for _, a := range addrs {
			ipn, ok := a.(*net.IPNet)
			if !ok || ipn.IP.IsLoopback() || ipn.IP.To4() == nil {
				continue
			}
			c, err := net.DialTimeout("tcp", net.JoinHostPort(ipn.IP.String(), strconv.Itoa(addr.Port)), time.Second)
			if err == nil {
				c.Close()
				t.Errorf("%q: the listener answers on %v", redirect, ipn.IP)
			}
		}
	}
	l := listen(t, "http://localhost:0/cb")
	if u, _ := url.Parse(l.RedirectURL()); u.Hostname() != "localhost" || u.Port() == "0" || u.Path != "/cb" {
		t.Errorf("a configured localhost redirect became %q", l.RedirectURL())
	}
}

func TestListenLoopbackRefuses(t *testing.T) {
	for _, r := range []string{
		"http://example.com/callback", "http://192.0.2.1:8080/cb", "http://0.0.0.0:0/cb", "http://[::]:0/cb",
		"https://127.0.0.1/cb", "http://127.0.0.1:99999/cb", "http://127.0.0.1/cb?x=1", "cursor://anysphere.cursor-mcp/oauth/callback",
	} {
		if l, err := ListenLoopback(r); err == nil {
			l.Close()
			t.Errorf("ListenLoopback(%q) accepted it", r)
		}
	}
}

func TestBrowserCommands(t *testing.T) {
	const u = "https://as.example.com/authorize?a=1&b=2"
	sep := string(os.PathListSeparator)
	tests := []struct {
		env, goos string
		want      [][]string
	}{
		{"", "linux", [][]string{{"xdg-open", u}, {"wslview", u}}},
		{"", "darwin", [][]string{{"open", u}}},
		{"", "windows", [][]string{{"rundll32", "url.dll,FileProtocolHandler", u}}},
		{"", "plan9", nil},
		{"firefox --new-tab", "linux", [][]string{{"firefox", "--new-tab", u}}},
		{"w3m" + sep + "lynx %s -dump", "darwin", [][]string{{"w3m", u}, {"lynx", u, "-dump"}}},
	}
	for _, tt := range tests {
		if got := browserCommands(tt.env, tt.goos, u); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("browserCommands(%q, %s) = %q, want %q", tt.env, tt.goos, got, tt.want)
		}
	}
}

// TestOpenBrowser: $BROWSER gets the URL as one argument, untouched by any
// shell; a URL that is not http or https is never opened.
func TestOpenBrowser(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("uses a shell script as the browser")
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "args")
	script := filepath.Join(dir, "browser")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nprintf '%s\\n' \"$@\" > "+out+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("BROWSER", script)
	const u = "https://as.example.com/authorize?state=$(touch%20pwned)&a=1;b"
	if err := OpenBrowser(u); err != nil {
		t.Fatal(err)
	}
	var got []byte
	for deadline := time.Now().Add(5 * time.Second); len(got) == 0 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		got, _ = os.ReadFile(out)
	}
	if string(got) != u+"\n" {
		t.Errorf("the browser got %q, want the URL as one argument", got)
	}
	for _, bad := range []string{"file:///etc/passwd", "javascript:alert(1)", "ftp://x/y", "https://", "-oProxyCommand=x"} {
		os.Remove(out)
		if err := OpenBrowser(bad); err == nil || !strings.Contains(err.Error(), "only http and https") {
			t.Errorf("OpenBrowser(%q): %v", bad, err)
		}
		time.Sleep(50 * time.Millisecond)
		if _, err := os.Stat(out); err == nil {
			t.Errorf("OpenBrowser(%q) started the browser", bad)
		}
	}
	t.Setenv("BROWSER", filepath.Join(dir, "missing"))
	if err := OpenBrowser("https://as.example.com/"); err == nil {
		t.Error("OpenBrowser with a $BROWSER that does not exist succeeded")
	}
}

// TestLoopbackDeliver: a redirect pasted by the user counts as the
// browser's, with the same checks: the path, the state, once.
func TestLoopbackDeliver(t *testing.T) {
	l := listen(t, "")
	if err := l.Deliver(l.RedirectURL() + "?code=c&state=st-123"); err == nil || !strings.Contains(err.Error(), "no login is waiting") {
		t.Errorf("Deliver with no login waiting: %v", err)
	}
	other := strings.Replace(l.RedirectURL(), "127.0.0.1", "localhost", 1)
	errs := make(chan []error, 1)
	l.Open = func(string) {
		go func() {
			errs <- []error{
				l.Deliver("https://evil.example.com/x?code=c&state=st-123"),
				l.Deliver(l.RedirectURL() + "?code=c&state=wrong"),
				l.Deliver("  " + other + "?code=pasted&state=st-123\n"),
				l.Deliver(l.RedirectURL() + "?code=again&state=st-123"),
			}
		}()
	}
	u, err := l.Authorize(context.Background(), testAuthURL)
	if err != nil || u.Query().Get("code") != "pasted" || !strings.HasPrefix(u.String(), l.RedirectURL()) {
		t.Fatalf("Authorize: %v %v", u, err)
	}
	got := <-errs
	for i, want := range []string{"not the login's redirect", "state does not match", "", "no login is waiting"} {
		if (got[i] == nil) != (want == "") || (got[i] != nil && !strings.Contains(got[i].Error(), want)) {
			t.Errorf("Deliver %d: %v, want %q", i+1, got[i], want)
		}
	}
}
