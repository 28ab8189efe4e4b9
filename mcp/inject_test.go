package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/tool"
)

// userKey is where the HTTP middleware of these examples keeps the user.
type userKey struct{}

type noteArgs struct {
	Text string `json:"text"`
	User string `json:"user" tool:"inject"` // from Server.Inject, never from the client
}

func noteTool(calls *atomic.Int32) tool.Tool {
	return tool.Must(tool.New("note", "Takes a note for the user.", func(_ context.Context, in noteArgs) (string, error) {
		if calls != nil {
			calls.Add(1)
		}
		return in.User + " noted " + in.Text, nil
	}))
}

// A server supplies a tool's injected parameters per request with
// Server.Inject: here the user that the program's HTTP middleware found.
// The client never sees the parameter.
func ExampleServer_inject() {
	srv := &mcp.Server{Info: mcp.Implementation{Name: "notes", Version: "1.0.0"}}
	srv.Inject = func(ctx context.Context, _ mcp.RequestInfo) (map[string]any, error) {
		user, ok := ctx.Value(userKey{}).(string)
		if !ok {
			return nil, errors.New("no user: put the server behind the login middleware")
		}
		return map[string]any{"user": user}, nil
	}
	if err := srv.AddTools(noteTool(nil)); err != nil {
		panic(err)
	}
	handler := &mcp.HTTPHandler{Server: srv}
	login := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := context.WithValue(r.Context(), userKey{}, r.Header.Get("X-User")) // a real program checks a credential
		handler.ServeHTTP(w, r.WithContext(ctx))
	})
	ts := httptest.NewServer(login) // on 127.0.0.1
	defer ts.Close()

	ctx := context.Background()
	s, err := (&mcp.Client{Info: mcp.Implementation{Name: "example", Version: "1"}}).Connect(ctx,
		&mcp.HTTPTransport{URL: ts.URL, Header: http.Header{"X-User": {"ada"}}})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	tools, err := s.ListTools(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println(string(tools[0].InputSchema))
	res, err := s.CallTool(ctx, "note", json.RawMessage(`{"text": "buy milk"}`))
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Content[0].Text)
	// Output:
	// {"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}
	// ada noted buy milk
}

// TestServerInject: Server.Inject's values reach the tool over Streamable
// HTTP (both eras, from what the HTTP middleware put in the request's
// context) and stdio (from the context ServeStream was given); the
// parameter is never in the schema a client sees, a value a client sends
// for it never reaches the tool, and an Inject that fails stops the call
// before the tool runs.
func TestServerInject(t *testing.T) {
	var calls atomic.Int32
	srv := newServer(t, noteTool(&calls))
	srv.Inject = func(ctx context.Context, req mcp.RequestInfo) (map[string]any, error) {
		user, _ := ctx.Value(userKey{}).(string)
		switch user {
		case "":
			return nil, fmt.Errorf("no user in the context of %s", req.Method)
		case "forbidden":
			return nil, errors.New("forbidden is not allowed")
		}
		return map[string]any{"user": user}, nil
	}
	handler := &mcp.HTTPHandler{Server: srv}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		if u := r.Header.Get("X-User"); u != "" {
			ctx = context.WithValue(ctx, userKey{}, u)
		}
		handler.ServeHTTP(w, r.WithContext(ctx))
	}))
	t.Cleanup(ts.Close) // after the sessions, which Cleanup closes first
	user := func(name string) http.Header { return http.Header{"X-User": {name}} }
	ctx := context.Background()
	forged := json.RawMessage(`{"text": "hi", "user": "mallory"}`)

	for _, v := range []string{mcp.Version20251125, ""} {
		s := connect(t, &mcp.HTTPTransport{URL: ts.URL, Header: user("ada")}, v)
		tools, err := s.ListTools(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if schema := string(tools[0].InputSchema); strings.Contains(schema, "user") {
			t.Errorf("protocol %q: the client sees the injected parameter: %s", v, schema)
		}
		res, err := s.CallTool(ctx, "note", forged)
		if err != nil || res.IsError || res.Content[0].Text != "ada noted hi" {
			t.Errorf("protocol %q: %+v, %v; want \"ada noted hi\"", v, res, err)
		}
		before := calls.Load()
		res, err = connect(t, &mcp.HTTPTransport{URL: ts.URL, Header: user("forbidden")}, v).CallTool(ctx, "note", forged)
		if err == nil || !strings.Contains(err.Error(), "forbidden is not allowed") {
			t.Errorf("protocol %q: a failing Inject gave %+v, %v; want its error", v, res, err)
		}
		if calls.Load() != before {
			t.Errorf("protocol %q: the tool ran although Inject failed", v)
		}
	}

	stdio := startStdioCtx(t, context.WithValue(context.Background(), userKey{}, "grace"), srv)
	stdio.initialize(nil)
	text, isErr := toolText(t, stdio.call(mcp.MethodToolsCall, map[string]any{"name": "note", "arguments": map[string]any{"text": "hi", "user": "mallory"}}))
	if text != "grace noted hi" || isErr {
		t.Errorf("stdio: %q (error %v), want \"grace noted hi\"", text, isErr)
	}
}
