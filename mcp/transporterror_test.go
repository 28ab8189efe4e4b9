package mcp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/mcp"
)

// TestHTTPConnectionLost: a server (or the proxy in front of it) that
// drops the connection mid-request, as a killed replica does, fails the
// call at once with an error that says so and that the request may have
// run, not with a bare EOF.
func TestHTTPConnectionLost(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Errorf("hijack: %v", err)
			return
		}
		conn.Close()
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := (&mcp.Client{Info: mcp.Implementation{Name: "t", Version: "1"}}).Connect(ctx, &mcp.HTTPTransport{URL: srv.URL + "/mcp"})
	if err == nil {
		t.Fatal("Connect succeeded against a server that drops every connection")
	}
	for _, want := range []string{"the connection to the MCP server at " + srv.URL + "/mcp ended before its response was complete", "may or may not have run"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}
