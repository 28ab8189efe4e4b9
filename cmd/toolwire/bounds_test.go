package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/mcp"
)

// TestServeHTTPBounds runs `toolwire serve --http` with small bounds and
// checks that each flag reaches the server: --max-sessions refuses one
// initialize too many with 503, --max-streams one SSE stream too many, and
// --stream-idle-timeout closes a stream that carries nothing. Flags that
// bound nothing are usage errors.
func TestServeHTTPBounds(t *testing.T) {
	addr := serveHTTPForTest(t, "--max-sessions", "2", "--max-streams", "1", "--stream-idle-timeout", "1s")
	base := "http://" + addr
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	do := func(method, path, sid, body string) (*http.Response, string) {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, method, base+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set(mcp.HeaderSessionID, sid)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		b, _ := io.ReadAll(resp.Body) // an SSE stream: until the server ends it
		resp.Body.Close()
		return resp, string(b)
	}
	const init = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	var sids []string
	for range 2 {
		resp, body := do(http.MethodPost, "/mcp", "", init)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("initialize: HTTP %d %s", resp.StatusCode, body)
		}
		sids = append(sids, resp.Header.Get(mcp.HeaderSessionID))
	}
	if resp, body := do(http.MethodPost, "/mcp", "", init); resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "2 legacy sessions") {
		t.Errorf("initialize past --max-sessions 2: HTTP %d %s; want 503 naming the cap", resp.StatusCode, body)
	}

	// The stream of the first session holds the one slot until it is
	// idle for 1s; read to its end, it shows the idle limit holds.
	opened := make(chan struct{})
	ended := make(chan string, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/mcp", nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set(mcp.HeaderSessionID, sids[0])
		resp, err := http.DefaultClient.Do(req)
		close(opened)
		if err != nil {
			ended <- err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		ended <- resp.Status + " " + string(b)
	}()
	<-opened
	if resp, body := do(http.MethodGet, "/sse", "", ""); resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "1 SSE streams") {
		t.Errorf("GET /sse past --max-streams 1: HTTP %d %s; want 503 naming the cap", resp.StatusCode, body)
	}
	select {
	case got := <-ended:
		if !strings.HasPrefix(got, "200 ") || !strings.Contains(got, "retry: ") {
			t.Errorf("the idle GET stream: %q; want 200 ended with a retry field", got)
		}
	case <-ctx.Done():
		t.Fatal("the GET stream was still open 20s after --stream-idle-timeout 1s")
	}

	for _, args := range [][]string{
		{"--max-sessions", "0"},
		{"--max-streams", "-1"},
		{"--stream-idle-timeout", "0s"},
		{"--task-after", "0s"},
	} {
		r := runEnv(t, nil, "", append([]string{"serve", "--http", "127.0.0.1:0"}, args...)...)
		if r.code != 2 || !strings.Contains(r.stderr, args[0]) {
			t.Errorf("serve %v: exit %d, stderr %q; want a usage error naming the flag", args, r.code, r.stderr)
		}
	}
}
