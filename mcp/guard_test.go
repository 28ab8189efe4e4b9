package mcp_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/mcp"
)

// guardedServer serves srv's endpoints as `toolwire serve --http` does
// (NewHTTPEndpoints: Streamable HTTP at /mcp, the legacy HTTP+SSE
// transport at /sse and /message), with the given allow lists, over a
// real loopback listener; it returns the listener's address.
func guardedServer(t *testing.T, hosts, origins []string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs, end := mcp.NewHTTPEndpoints(newServer(t, echoTool()), mcp.HTTPConfig{AllowedHosts: hosts, AllowedOrigins: origins})
	go hs.Serve(ln)
	t.Cleanup(func() {
		hs.Close()
		end()
	})
	return ln.Addr().String()
}

// guardEndpoint is one way into the server, and what it answers a request
// that the guard lets through.
type guardEndpoint struct {
	name, method, path, body string
	allowed                  int    // status when let through
	allowedBody              string // text in the answer when let through
}

var guardEndpoints = []guardEndpoint{
	{"streamable HTTP POST", http.MethodPost, "/mcp",
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		http.StatusOK, `"protocolVersion"`},
	{"streamable HTTP GET", http.MethodGet, "/mcp", "",
		http.StatusMethodNotAllowed, "GET opens the stream of a legacy session"},
	{"legacy SSE stream", http.MethodGet, "/sse", "",
		http.StatusOK, "event: endpoint"},
	{"legacy SSE message", http.MethodPost, "/message?sessionId=none", `{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		http.StatusNotFound, `session "none" not found`},
}

// TestHTTPGuards sends requests with good and bad Host and Origin headers
// to every HTTP endpoint, with the default (loopback) allow lists and with
// widened ones, and checks that each is refused with 403 exactly when its
// Host or Origin is not allowed, and let through otherwise.
func TestHTTPGuards(t *testing.T) {
	widenedHosts := []string{"localhost", "127.0.0.1", "mcp.example.com"}
	widenedOrigins := []string{"https://app.example.com"}
	tests := []struct {
		name    string
		hosts   []string // HTTPHandler.AllowedHosts
		origins []string // HTTPHandler.AllowedOrigins
		host    string   // Host header; "" is the listener's address; ":port" is added
		origin  string   // Origin header; "" sends none
		refused string   // "" when let through, else a text of the 403
	}{
		{name: "loopback address", host: ""},
		{name: "localhost", host: "localhost"},
		{name: "IPv6 loopback", host: "[::1]"},
		{name: "loopback origin", origin: "http://localhost:5173"},
		{name: "loopback IP origin", origin: "https://127.0.0.1"},
		{name: "bad origin only", origin: "http://evil.example", refused: `Origin "http://evil.example" is not allowed`},
		{name: "bad host only", host: "evil.example", refused: `Host "evil.example:`},
		{name: "bad host and origin", host: "evil.example", origin: "http://evil.example", refused: "not allowed"},
		{name: "host that starts like localhost", host: "localhost.evil.example", refused: "Host"},
		{name: "non-loopback IP origin", origin: "http://192.168.1.7:8080", refused: "Origin"},
		{name: "origin that starts like loopback", origin: "http://127.0.0.1.evil.example", refused: "Origin"},
		{name: "null origin", origin: "null", refused: "Origin"},
		{name: "origin of another scheme", origin: "file://localhost", refused: "Origin"},

		{name: "widened: allowed host", hosts: widenedHosts, origins: widenedOrigins, host: "mcp.example.com"},
		{name: "widened: allowed host and origin", hosts: widenedHosts, origins: widenedOrigins, host: "mcp.example.com", origin: "https://app.example.com"},
		{name: "widened: loopback still", hosts: widenedHosts, origins: widenedOrigins, origin: "http://localhost:5173"},
		{name: "widened: other host", hosts: widenedHosts, origins: widenedOrigins, host: "other.example.com", refused: "Host"},
		{name: "widened: other origin", hosts: widenedHosts, origins: widenedOrigins, host: "mcp.example.com", origin: "https://other.example.com", refused: "Origin"},
		{name: "widened: origin of another scheme", hosts: widenedHosts, origins: widenedOrigins, origin: "http://app.example.com", refused: "Origin"},
		{name: "any origin", origins: []string{"*"}, origin: "http://evil.example"},
		{name: "any origin, bad host", origins: []string{"*"}, host: "evil.example", origin: "http://evil.example", refused: "Host"},
		{name: "any host", hosts: []string{"*"}, host: "evil.example"},
		{name: "any host, bad origin", hosts: []string{"*"}, host: "evil.example", origin: "http://evil.example", refused: "Origin"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr := guardedServer(t, tt.hosts, tt.origins)
			host := addr
			if tt.host != "" {
				_, port, _ := net.SplitHostPort(addr)
				host = net.JoinHostPort(strings.Trim(tt.host, "[]"), port)
			}
			for _, ep := range guardEndpoints {
				status, body := guardRequest(t, addr, ep, host, tt.origin)
				switch {
				case tt.refused != "" && (status != http.StatusForbidden || !strings.Contains(body, tt.refused)):
					t.Errorf("%s with Host %q, Origin %q: HTTP %d %q; want 403 saying %q", ep.name, host, tt.origin, status, body, tt.refused)
				case tt.refused == "" && (status != ep.allowed || !strings.Contains(body, ep.allowedBody)):
					t.Errorf("%s with Host %q, Origin %q: HTTP %d %q; want it let through: %d with %q", ep.name, host, tt.origin, status, body, ep.allowed, ep.allowedBody)
				}
			}
		})
	}
}

// guardRequest sends one request with the given Host and Origin and
// returns the status and the start of the body (an SSE stream is read up
// to its first event), with JSON-escaped quotes unescaped.
func guardRequest(t *testing.T, addr string, ep guardEndpoint, host, origin string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, ep.method, "http://"+addr+ep.path, strings.NewReader(ep.body))
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", ep.name, err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	sc := bufio.NewScanner(io.LimitReader(resp.Body, 64<<10))
	for sc.Scan() && sc.Text() != "" { // an SSE stream: up to its first event's end
		b.WriteString(sc.Text())
		b.WriteByte('\n')
	}
	return resp.StatusCode, strings.ReplaceAll(b.String(), `\"`, `"`) // JSON-escaped quotes as quotes
}
