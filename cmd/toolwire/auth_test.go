package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/toolwire/toolwire/internal/testhydra"
	"github.com/toolwire/toolwire/internal/testredis"
	"github.com/toolwire/toolwire/mcp"
)

// TestServeAuthReplicas: two users with tokens from a real authorization
// server (Ory Hydra) on two replicas of `toolwire serve data --http
// --auth-issuer …` that share tables (--data-dir) and handles (--redis).
// Each user loads a table; the other can neither read, describe nor
// release it on either replica; its user reaches it from another
// session, a modern request and the other replica.
func TestServeAuthReplicas(t *testing.T) {
	h := testhydra.Start(t)
	rs := testredis.Start(t)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	files, tables := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(files, "sales.csv"), []byte("region,amount\neast,10\nwest,20\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const aud = "http://mcp.test/mcp" // the replicas' one canonical URL, behind a load balancer
	var urls []string
	for range 2 {
		addr, _ := serveHTTPWithLog(t, "data", "--allow-dir", files, "--data-dir", tables, "--redis", rs.Addr,
			"--auth-issuer", h.Issuer(), "--auth-audience", aud, "--auth-scope", "mcp")
		urls = append(urls, "http://"+addr+"/mcp")
	}
	const redirect = "http://127.0.0.1/callback"
	id, secret, err := h.CreateClient(ctx, testhydra.Client{GrantTypes: []string{"authorization_code"}, RedirectURIs: []string{redirect}, Scopes: []string{"mcp"}})
	if err != nil {
		t.Fatal(err)
	}
	cfg := &oauth2.Config{ClientID: id, ClientSecret: secret, RedirectURL: redirect, Scopes: []string{"mcp"}}
	// call opens a session (legacy, or modern requests) for user on a
	// replica, with a token of its own, and calls a tool.
	call := func(user string, replica int, version, name string, args map[string]any) (string, bool) {
		tok, err := h.UserToken(ctx, cfg, user, aud)
		if err != nil {
			t.Fatal(err)
		}
		s, err := (&mcp.Client{Info: mcp.Implementation{Name: "test", Version: "1"}, ProtocolVersion: version}).Connect(ctx,
			&mcp.HTTPTransport{URL: urls[replica], Header: http.Header{"Authorization": {"Bearer " + tok.AccessToken}}})
		if err != nil {
			t.Fatalf("%s on replica %d: %v", user, replica, err)
		}
		defer s.Close()
		b, _ := json.Marshal(args)
		res, err := s.CallTool(ctx, name, b)
		if err != nil {
			t.Fatalf("%s on replica %d: %s: %v", user, replica, name, err)
		}
		return res.Content[0].Text, res.IsError
	}
	for _, owner := range []string{"alice", "bob"} {
		other := map[string]string{"alice": "bob", "bob": "alice"}[owner]
		text, isErr := call(owner, 0, mcp.Version20251125, "load_csv", map[string]any{"path": "sales.csv"})
		var loaded struct{ Table string }
		if err := json.Unmarshal([]byte(text), &loaded); isErr || err != nil || !strings.HasPrefix(loaded.Table, "tbl_") {
			t.Fatalf("%s: load_csv: %q", owner, text)
		}
		table := map[string]any{"table": loaded.Table}
		for _, tt := range []struct {
			user    string
			replica int
			version string
			tool    string
		}{
			{owner, 1, "", "describe"},
			{owner, 1, mcp.Version20251125, "head"},
			{owner, 0, "", "head"},
			{other, 0, "", "describe"},
			{other, 1, mcp.Version20251125, "head"},
			{other, 0, mcp.Version20251125, "release"},
			{other, 1, "", "release"},
		} {
			text, isErr := call(tt.user, tt.replica, tt.version, tt.tool, table)
			switch {
			case tt.user == owner && (isErr || !strings.Contains(text, "east")):
				t.Errorf("%s on replica %d (protocol %q): %s of its table: %q (error %v)", tt.user, tt.replica, tt.version, tt.tool, text, isErr)
			case tt.user == other && (!isErr || !strings.Contains(text, "expired")):
				t.Errorf("%s on replica %d (protocol %q): %s of %s's table: %q (error %v), want it to read as expired", tt.user, tt.replica, tt.version, tt.tool, owner, text, isErr)
			}
		}
		if text, isErr := call(owner, 1, "", "release", table); isErr {
			t.Errorf("%s releasing its table on the other replica: %q", owner, text)
		}
	}
}
