package oauth

import (
	"context"
	"errors"
	"fmt"
	"html/template"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultLoginTimeout bounds the wait for the browser's redirect when a
// Loopback sets no Timeout.
const DefaultLoginTimeout = 5 * time.Minute

// Loopback is the redirect endpoint of a native app's login (RFC 8252
// §7.3): an HTTP listener on the loopback interface that takes the
// authorization server's redirect, one per authorization request, and
// tells the browser it may close the tab. Its Authorize method is an
// oauth.Config's Authorize.
type Loopback struct {
	// Open shows the authorization URL to the user: it opens a browser
	// (OpenBrowser), prints the URL, or both. It is called once per
	// authorization request, and must not block for long.
	Open func(authURL string)
	// Timeout bounds the wait for the redirect (default
	// DefaultLoginTimeout).
	Timeout time.Duration

	redirect string
	ln       net.Listener
	srv      *http.Server

	mu      sync.Mutex
	pending *pendingRedirect
}

// pendingRedirect is an authorization request waiting for its redirect.
type pendingRedirect struct {
	state string
	got   chan *url.URL
}

// ListenLoopback starts listening for the redirect. redirectURL is the
// redirect URI to give the authorization server: empty means
// http://127.0.0.1:PORT/callback on a free port; otherwise an http URI on
// 127.0.0.1, [::1] or localhost (a port of 0 or none means a free one), as
// a client registered in advance may need. The listener is bound to the
// loopback address only, never to other interfaces.
func ListenLoopback(redirectURL string) (*Loopback, error) {
	if redirectURL == "" {
		redirectURL = "http://127.0.0.1/callback"
	}
	u, err := url.Parse(redirectURL)
	if err != nil || u.Scheme != "http" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("oauth: redirect URI %q: want http://127.0.0.1:PORT/PATH (a loopback redirect, RFC 8252 §7.3)", redirectURL)
	}
	var bind string
	switch u.Hostname() {
	case "127.0.0.1", "localhost":
		bind = "127.0.0.1"
	case "::1":
		bind = "::1"
	default:
		return nil, fmt.Errorf("oauth: redirect URI %q is not on this machine's loopback interface: use 127.0.0.1, [::1] or localhost (RFC 8252 §7.3)", redirectURL)
	}
	port := u.Port()
	if port == "" {
		port = "0"
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return nil, fmt.Errorf("oauth: redirect URI %q: the port must be a number up to 65535", redirectURL)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(bind, port))
	if err != nil {
		return nil, fmt.Errorf("oauth: listening for the login's redirect on %s: %w (choose another port, or none for a free one)", net.JoinHostPort(bind, port), err)
	}
	if u.Path == "" {
		u.Path = "/"
	}
	u.Host = net.JoinHostPort(u.Hostname(), strconv.Itoa(ln.Addr().(*net.TCPAddr).Port))
	l := &Loopback{redirect: u.String(), ln: ln}
	mux := http.NewServeMux()
	mux.HandleFunc(u.Path, l.serveRedirect)
	l.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, MaxHeaderBytes: 64 << 10}
	go func() { _ = l.srv.Serve(ln) }()
	return l, nil
}

// RedirectURL is the redirect URI to register and send.
func (l *Loopback) RedirectURL() string { return l.redirect }

// Close stops listening, after letting a page being sent finish.
func (l *Loopback) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return l.srv.Shutdown(ctx)
}

// Authorize sends the user to authURL (through Open) and waits for the
// redirect that carries its state; it returns the URL of that redirect,
// whose code, state, iss or error the client checks. Only one redirect is
// taken per call; others get 400 Bad Request.
func (l *Loopback) Authorize(ctx context.Context, authURL string) (*url.URL, error) {
	au, err := url.Parse(authURL)
	if err != nil {
		return nil, fmt.Errorf("oauth: the authorization URL is not a URL: %w", err)
	}
	p := &pendingRedirect{state: au.Query().Get("state"), got: make(chan *url.URL, 1)}
	l.mu.Lock()
	l.pending = p
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		if l.pending == p {
			l.pending = nil
		}
		l.mu.Unlock()
	}()
	if l.Open != nil {
		l.Open(authURL)
	}
	timeout := l.Timeout
	if timeout <= 0 {
		timeout = DefaultLoginTimeout
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case u := <-p.got:
		return u, nil
	case <-timer.C:
		return nil, fmt.Errorf("oauth: no login came back from the browser within %v: log in sooner, or allow more time", timeout)
	case <-ctx.Done():
		return nil, fmt.Errorf("oauth: waiting for the login in the browser: %w", ctx.Err())
	}
}

// donePage is what the browser shows after the redirect.
var donePage = template.Must(template.New("done").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>Login complete</title></head>
<body><p>{{if .Error}}The authorization server refused the login: {{.Error}}{{if .Description}} ({{.Description}}){{end}}.{{else}}Login complete.{{end}}</p>
<p>You can close this tab and return to the terminal.</p></body></html>
`))

// The refusals of a redirect.
var (
	errNoLogin    = errors.New("no login is waiting for this redirect (it came already, or the login ended)")
	errOtherState = errors.New("this redirect is not for the login in progress: its state does not match")
)

// take takes the redirect whose query is q for the pending authorization
// request: the first one that carries its state.
func (l *Loopback) take(q url.Values) (*pendingRedirect, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	p := l.pending
	switch {
	case p == nil:
		return nil, errNoLogin
	case p.state != "" && q.Get("state") != p.state:
		return nil, errOtherState
	}
	l.pending = nil // one redirect per authorization request
	return p, nil
}

// serveRedirect takes the redirect the browser brings, and answers it
// with a page telling the user to close the tab.
func (l *Loopback) serveRedirect(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Content-Security-Policy", "default-src 'none'")
	if r.Method != http.MethodGet {
		http.Error(w, "the login redirect is a GET", http.StatusMethodNotAllowed)
		return
	}
	q := r.URL.Query()
	p, err := l.take(q)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	got, _ := url.Parse(l.redirect)
	got.RawQuery = r.URL.RawQuery
	h.Set("Content-Type", "text/html; charset=utf-8")
	_ = donePage.Execute(w, struct{ Error, Description string }{q.Get("error"), q.Get("error_description")})
	p.got <- got
}

// Deliver takes a redirect the user brings by hand: the address the
// browser ended on, pasted from a browser on another machine (where
// 127.0.0.1 is not this one, so the redirect could not arrive). It must
// be the redirect URI's path with the pending request's state; it is
// taken as if the browser had brought it.
func (l *Loopback) Deliver(rawURL string) error {
	u, err := url.Parse(strings.TrimSpace(rawURL))
	want, _ := url.Parse(l.redirect)
	if err != nil || u.Scheme != "http" || u.Path != want.Path {
		return fmt.Errorf("oauth: not the login's redirect: want the address the browser ended on, %s with a code and a state", l.redirect)
	}
	p, err := l.take(u.Query())
	if err != nil {
		return fmt.Errorf("oauth: %w", err)
	}
	want.RawQuery = u.RawQuery
	p.got <- want
	return nil
}

// OpenBrowser opens an http or https URL in the user's browser: with
// $BROWSER when it is set (commands separated as in $PATH, tried in turn;
// "%s" in one stands for the URL, else the URL is its last argument),
// else with xdg-open (Linux, BSD), open (macOS) or rundll32 (Windows). It
// returns once a command has started, or an error saying why none could:
// print the URL for the user to open in any case. The URL never passes
// through a shell.
func OpenBrowser(rawURL string) error {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return fmt.Errorf("oauth: not opening %q in a browser: only http and https URLs are opened", rawURL)
	}
	cmds := browserCommands(os.Getenv("BROWSER"), runtime.GOOS, rawURL)
	if len(cmds) == 0 {
		return errors.New("no browser to open: $BROWSER is not set and this system has no xdg-open")
	}
	var errs []error
	for _, argv := range cmds {
		path, err := exec.LookPath(argv[0])
		if err != nil {
			errs = append(errs, err)
			continue
		}
		cmd := exec.Command(path, argv[1:]...)
		if err := cmd.Start(); err != nil {
			errs = append(errs, err)
			continue
		}
		go func() { _ = cmd.Wait() }()
		return nil
	}
	return fmt.Errorf("no browser could be started: %w", errors.Join(errs...))
}

// browserCommands lists the commands that may open u, in order.
func browserCommands(browserEnv, goos, u string) [][]string {
	if browserEnv != "" {
		var out [][]string
		for _, c := range filepath.SplitList(browserEnv) {
			f := strings.Fields(c)
			if len(f) == 0 {
				continue
			}
			substituted := false
			for i, a := range f {
				if strings.Contains(a, "%s") {
					f[i], substituted = strings.ReplaceAll(a, "%s", u), true
				}
			}
			if !substituted {
				f = append(f, u)
			}
			out = append(out, f)
		}
		return out
	}
	switch goos {
	case "darwin":
		return [][]string{{"open", u}}
	case "windows":
		return [][]string{{"rundll32", "url.dll,FileProtocolHandler", u}}
	case "linux", "freebsd", "openbsd", "netbsd", "dragonfly", "solaris", "illumos":
		return [][]string{{"xdg-open", u}, {"wslview", u}}
	}
	return nil
}
