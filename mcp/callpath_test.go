package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/tool"
)

// fragileTool panics when asked to, and answers "fine" otherwise.
func fragileTool() tool.Tool {
	type in struct {
		Panic bool `json:"panic,omitempty"`
	}
	return tool.Must(tool.New("fragile", "Panics when asked to.", func(_ context.Context, a in) (string, error) {
		if a.Panic {
			panic("it broke")
		}
		return "fine", nil
	}))
}

// connect opens a client session with a server over the transport.
func connect(t *testing.T, tr mcp.ClientTransport, version string) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := (&mcp.Client{Info: mcp.Implementation{Name: "test-client", Version: "1"}, ProtocolVersion: version}).Connect(ctx, tr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestPanicSameEverywhere: a panicking tool gives the same error result
// in-process and over MCP (stdio and Streamable HTTP), and the registry
// and the server keep serving.
func TestPanicSameEverywhere(t *testing.T) {
	var reg tool.Registry
	if err := reg.Add(fragileTool()); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	res, err := reg.Call(ctx, "fragile", json.RawMessage(`{"panic":true}`))
	var pe *tool.PanicError
	if !errors.As(err, &pe) || errors.Is(err, tool.ErrFatal) {
		t.Fatalf("in-process: %v, %v; want a *tool.PanicError a model can act on", res, err)
	}
	want := tool.ErrorResult(err).ForModel()
	if !strings.Contains(want.Text, "fragile") || !strings.Contains(want.Text, "it broke") {
		t.Errorf("in-process text %q names neither the tool nor the panic", want.Text)
	}

	srv := newServer(t, fragileTool())
	ts := httptest.NewServer(&mcp.HTTPHandler{Server: srv})
	t.Cleanup(ts.Close) // after the sessions, which Cleanup closes first
	stdio := startStdio(t, srv)
	stdio.initialize(nil)
	sessions := map[string]*mcp.ClientSession{
		"http, 2026-07-28": connect(t, &mcp.HTTPTransport{URL: ts.URL}, ""),
		"http, 2025-11-25": connect(t, &mcp.HTTPTransport{URL: ts.URL}, mcp.Version20251125),
	}
	for round := range 2 { // the second round shows everything still serves
		for name, s := range sessions {
			r, err := s.CallTool(ctx, "fragile", json.RawMessage(`{"panic":true}`))
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if got := r.ToolResult().ForModel(); got.Text != want.Text || !got.IsError {
				t.Errorf("round %d, %s: %+v, in-process %+v", round, name, got, want)
			}
			if r, err := s.CallTool(ctx, "fragile", nil); err != nil || r.Content[0].Text != "fine" {
				t.Errorf("round %d, %s: after the panic: %v %v", round, name, r, err)
			}
		}
		text, isErr := toolText(t, stdio.call(mcp.MethodToolsCall, map[string]any{"name": "fragile", "arguments": map[string]any{"panic": true}}))
		if text != want.Text || !isErr {
			t.Errorf("round %d, stdio: %q (error %v), in-process %q", round, text, isErr, want.Text)
		}
		if text, _ := toolText(t, stdio.call(mcp.MethodToolsCall, map[string]any{"name": "fragile"})); text != "fine" {
			t.Errorf("round %d, stdio: after the panic: %q", round, text)
		}
		if res, err := reg.Call(ctx, "fragile", nil); err != nil || res.Content[0].Text != "fine" {
			t.Errorf("round %d, in-process: after the panic: %v %v", round, res, err)
		}
	}
}

// whoami answers with the caller a tool sees.
func whoami() tool.Tool {
	return tool.Must(tool.New("whoami", "Says who calls.", func(ctx context.Context, _ struct{}) (string, error) {
		c, ok := tool.CallerFrom(ctx)
		if !ok {
			return "", errors.New("no caller")
		}
		return c.ID + " " + c.Client, nil
	}))
}

func callerOf(t *testing.T, s *mcp.ClientSession) string {
	t.Helper()
	res, err := s.CallTool(context.Background(), "whoami", nil)
	if err != nil || res.IsError {
		t.Fatalf("whoami: %v %v", res, err)
	}
	return res.Content[0].Text
}

// TestCallerIdentity: clients of one HTTP server, legacy sessions and
// 2026-07-28 requests, each see their own caller in a tool; a program
// names callers itself through its HTTP middleware or Server.Caller.
func TestCallerIdentity(t *testing.T) {
	srv := newServer(t, whoami())
	ts := httptest.NewServer(&mcp.HTTPHandler{Server: srv})
	t.Cleanup(ts.Close) // after the sessions, which Cleanup closes first
	bearer := func(token string) http.Header { return http.Header{"Authorization": {"Bearer " + token}} }
	legacyA := connect(t, &mcp.HTTPTransport{URL: ts.URL}, mcp.Version20251125)
	legacyB := connect(t, &mcp.HTTPTransport{URL: ts.URL}, mcp.Version20251125)
	modernA := connect(t, &mcp.HTTPTransport{URL: ts.URL, Header: bearer("token-a")}, "")
	modernA2 := connect(t, &mcp.HTTPTransport{URL: ts.URL, Header: bearer("token-a")}, "")
	modernB := connect(t, &mcp.HTTPTransport{URL: ts.URL, Header: bearer("token-b")}, "")
	anonymous := connect(t, &mcp.HTTPTransport{URL: ts.URL}, "")
	if modernA.ProtocolVersion() != mcp.Version20260728 || legacyA.ProtocolVersion() != mcp.Version20251125 {
		t.Fatalf("versions %s and %s", modernA.ProtocolVersion(), legacyA.ProtocolVersion())
	}

	seen := map[string]string{}
	for name, s := range map[string]*mcp.ClientSession{"legacy A": legacyA, "legacy B": legacyB, "modern A": modernA, "modern B": modernB} {
		id := callerOf(t, s)
		if again := callerOf(t, s); again != id {
			t.Errorf("%s: caller %q, then %q", name, id, again)
		}
		if other, dup := seen[id]; dup {
			t.Errorf("%s and %s both see caller %q", name, other, id)
		}
		seen[id] = name
		wantPrefix := "session:"
		if strings.HasPrefix(name, "modern") {
			wantPrefix = "token:"
		}
		if !strings.HasPrefix(id, wantPrefix) || !strings.HasSuffix(id, " test-client/1") || strings.Contains(id, "token-") {
			t.Errorf("%s: caller %q, want %s… naming the client and never the credentials", name, id, wantPrefix)
		}
	}
	if a, a2 := callerOf(t, modernA), callerOf(t, modernA2); a != a2 {
		t.Errorf("two clients with the same credentials are %q and %q", a, a2)
	}
	if got := callerOf(t, anonymous); got != " test-client/1" {
		t.Errorf("a modern client without credentials is %q, want anonymous", got)
	}

	// A program's HTTP middleware names the caller, for both eras.
	handler := &mcp.HTTPHandler{Server: srv}
	named := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := tool.WithCaller(r.Context(), tool.Caller{ID: "user:" + r.Header.Get("X-User")})
		handler.ServeHTTP(w, r.WithContext(ctx))
	}))
	t.Cleanup(named.Close) // after the sessions, which Cleanup closes first
	user := func(name string) http.Header { return http.Header{"X-User": {name}} }
	for _, v := range []string{mcp.Version20251125, ""} {
		if got := callerOf(t, connect(t, &mcp.HTTPTransport{URL: named.URL, Header: user("alice")}, v)); got != "user:alice " {
			t.Errorf("protocol %q behind middleware: caller %q, want user:alice", v, got)
		}
	}

	// Server.Caller decides last.
	hooked := newServer(t, whoami())
	hooked.Caller = func(_ context.Context, req mcp.RequestInfo) tool.Caller {
		return tool.Caller{ID: "tenant-1/" + req.Caller.ID}
	}
	hs := httptest.NewServer(&mcp.HTTPHandler{Server: hooked})
	t.Cleanup(hs.Close) // after the sessions, which Cleanup closes first
	if got := callerOf(t, connect(t, &mcp.HTTPTransport{URL: hs.URL, Header: bearer("t")}, "")); !strings.HasPrefix(got, "tenant-1/token:") {
		t.Errorf("with Server.Caller: caller %q, want tenant-1/token:…", got)
	}
}

type divideIn struct {
	A float64 `json:"a" description:"Dividend"`
	B float64 `json:"b" description:"Divisor"`
}

// TestAskMissing: with the registry's AskMissing, a call that leaves out a required
// argument asks the client's user for it (elicitation), in both eras, and
// runs with the answer; a user who declines is an error result; a client
// without elicitation gets the arguments error.
func TestAskMissing(t *testing.T) {
	srv := newServer(t, tool.Must(tool.New("divide", "Divides a by b.", func(_ context.Context, in divideIn) (string, error) {
		return fmt.Sprint(in.A / in.B), nil
	})))
	srv.Registry().AskMissing(true)
	ts := httptest.NewServer(&mcp.HTTPHandler{Server: srv})
	t.Cleanup(ts.Close)
	for _, tt := range []struct {
		name, version, action string
		noElicitation         bool
		want                  string
		isError               bool
	}{
		{"modern, accepted", "", "accept", false, "3", false},
		{"legacy, accepted", mcp.Version20251125, "accept", false, "3", false},
		{"modern, declined", "", "decline", false, "the user did not give b for tool divide (decline)", true},
		{"no elicitation", "", "", true, `missing required argument "b"`, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var asked []string
			c := &mcp.Client{Info: mcp.Implementation{Name: "c", Version: "1"}, ProtocolVersion: tt.version}
			if !tt.noElicitation {
				c.Elicitation = func(_ context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
					asked = append(asked, string(p.RequestedSchema))
					return &mcp.ElicitResult{Action: tt.action, Content: map[string]any{"b": 3}}, nil
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			s, err := c.Connect(ctx, &mcp.HTTPTransport{URL: ts.URL})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			res, err := s.CallTool(ctx, "divide", json.RawMessage(`{"a":9}`))
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Content[0].Text; res.IsError != tt.isError || !strings.Contains(got, tt.want) {
				t.Errorf("result %q (error %v), want %q", got, res.IsError, tt.want)
			}
			if !tt.noElicitation && (len(asked) != 1 || !strings.Contains(asked[0], `"required":["b"]`) || !strings.Contains(asked[0], `"Divisor"`)) {
				t.Errorf("asked %v, want one form for b", asked)
			}
		})
	}
}
