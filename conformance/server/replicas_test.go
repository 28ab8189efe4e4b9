package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolwire/toolwire/mcp"
)

// alternate sends each request to the next of its servers in turn, as a
// round-robin load balancer does.
type alternate struct {
	hosts []string
	n     atomic.Int64
}

func (a *alternate) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.URL.Host = a.hosts[int(a.n.Add(1)-1)%len(a.hosts)]
	r.Host = r.URL.Host
	return http.DefaultTransport.RoundTrip(r)
}

// TestReplicasShareRequestState: two servers made with the same state key
// and task store, every request going to the other one, carry a multi
// round-trip call that becomes a task (test_tool_with_task: the question's
// answer comes back to the second server in the requestState the first
// signed) to its result. With a key each, the second refuses the state.
func TestReplicasShareRequestState(t *testing.T) {
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	tasks := &mcp.MemoryTaskStore{}
	key := []byte("0123456789abcdef0123456789abcdef")
	rr := &alternate{}
	for range 2 {
		srv, err := newServer(logger, tasks, key)
		if err != nil {
			t.Fatal(err)
		}
		h := &mcp.HTTPHandler{Server: srv}
		ts := httptest.NewServer(h)
		t.Cleanup(func() { ts.Close(); h.Close() })
		u, _ := url.Parse(ts.URL)
		rr.hosts = append(rr.hosts, u.Host)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	client := &mcp.Client{Info: mcp.Implementation{Name: "replicas", Version: "1"},
		Elicitation: func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
		}}
	s, err := client.Connect(ctx, &mcp.HTTPTransport{URL: "http://" + rr.hosts[0] + "/mcp", HTTPClient: &http.Client{Transport: rr}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res, err := s.CallTool(ctx, "test_tool_with_task", json.RawMessage(`{}`))
	if err != nil {
		t.Fatalf("test_tool_with_task across two servers: %v", err)
	}
	if len(res.Content) == 0 || res.Content[0].Text != "Hello, Ada!" {
		t.Fatalf("test_tool_with_task across two servers = %+v, want Hello, Ada!", res.Content)
	}
}
