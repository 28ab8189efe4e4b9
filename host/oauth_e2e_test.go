package host

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolwire/toolwire/bearer"
	"github.com/toolwire/toolwire/internal/testas"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/oauth"
	"github.com/toolwire/toolwire/toolsets/calc"
)

// countingStore is a Store that counts its Loads.
type countingStore struct {
	oauth.MemoryStore
	mu    sync.Mutex
	loads int
}

func (s *countingStore) Load(ctx context.Context, resource string) (*oauth.Grant, error) {
	s.mu.Lock()
	s.loads++
	s.mu.Unlock()
	return s.MemoryStore.Load(ctx, resource)
}

// protected serves the calc tools at /mcp behind bearer tokens of as,
// counting the requests by method and path ("GET /mcp"); it returns the
// server's URL.
func protected(t *testing.T) (resource string, as *testas.Server, hits func(path string) int) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	resource = "http://" + ln.Addr().String() + "/mcp"
	as = testas.New(t, resource)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	v, err := bearer.NewJWT(ctx, bearer.JWTConfig{Issuer: as.URL, Audience: resource})
	if err != nil {
		t.Fatal(err)
	}
	auth, err := bearer.New(v, bearer.Options{Resource: resource, AuthorizationServers: []string{as.URL}})
	if err != nil {
		t.Fatal(err)
	}
	srv := &mcp.Server{Info: mcp.Implementation{Name: "calc", Version: "test"}}
	if err := srv.AddTools(calc.Tools()...); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	count := map[string]int{}
	hs, end := mcp.NewHTTPEndpoints(srv, mcp.HTTPConfig{Auth: auth, Middleware: func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			count[r.Method+" "+r.URL.Path]++
			mu.Unlock()
			next.ServeHTTP(w, r)
		})
	}})
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() { hs.Close(); end() })
	return resource, as, func(p string) int { mu.Lock(); defer mu.Unlock(); return count[p] }
}

// TestHostLogin: a server that needs a login and has none fails with a
// LoginRequiredError naming the command to run, without falling back to
// HTTP+SSE; with a grant in Tokens, its tools work.
func TestHostLogin(t *testing.T) {
	resource, as, hits := protected(t)
	cfg := &Config{Path: "mcp.json", Servers: map[string]*ServerConfig{"calc": {Name: "calc", URL: resource}}}
	store := &countingStore{}
	h := &Host{Config: cfg}
	h.Tokens, h.LoginCommand = store, "toolwire login %s"
	defer h.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := h.Tools(ctx)
	var lr *LoginRequiredError
	if !errors.As(err, &lr) || lr.Server != "calc" || !strings.Contains(err.Error(), `server "calc" needs a login: run toolwire login calc`) {
		t.Fatalf("Tools without a login: %v", err)
	}
	// HTTP+SSE would GET the URL for its event stream.
	if n := hits("GET /mcp"); n != 0 {
		t.Errorf("a server that needs a login was tried as HTTP+SSE (%d requests)", n)
	}

	// Logged in (a grant in the store): the tools work.
	if err := store.Save(ctx, &oauth.Grant{Resource: resource, Issuer: as.URL, ClientID: "c", AccessToken: as.Token(t, "alice", nil),
		TokenType: "Bearer", Expiry: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	h2 := &Host{Config: cfg}
	h2.Tokens = store
	defer h2.Close()
	tools, err := h2.Tools(ctx)
	if err != nil || len(tools) != 4 {
		t.Fatalf("Tools with a login: %d tools, %v", len(tools), err)
	}
	res, err := tools[0].Call(ctx, []byte(`{"expression": "6*7"}`))
	if err != nil || res.IsError {
		t.Fatalf("call: %v %+v", err, res)
	}
}

// TestHostNoOAuth: a server that sends its own Authorization header, or
// turns OAuth off, never reaches the token store, and its 401 is the
// server's answer.
func TestHostNoOAuth(t *testing.T) {
	resource, _, _ := protected(t)
	off := false
	for name, sc := range map[string]*ServerConfig{
		"header": {Name: "header", URL: resource, Headers: map[string]string{"Authorization": "Bearer not-a-token"}},
		"off":    {Name: "off", URL: resource, OAuth: &OAuthConfig{Enabled: &off}},
	} {
		t.Run(name, func(t *testing.T) {
			store := &countingStore{}
			h := &Host{Config: &Config{Path: "mcp.json", Servers: map[string]*ServerConfig{name: sc}}}
			h.Tokens = store
			defer h.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			_, err := h.Tools(ctx)
			var lr *LoginRequiredError
			if err == nil || errors.As(err, &lr) || !strings.Contains(err.Error(), "401") {
				t.Errorf("Tools: %v, want the server's 401", err)
			}
			if store.loads != 0 {
				t.Errorf("the token store was read %d times", store.loads)
			}
		})
	}
}
