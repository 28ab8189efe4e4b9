package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/host"
	"github.com/toolwire/toolwire/oauth"
)

// TestServerAuthColumn: the AUTH column of toolwire servers, from the
// configuration and the stored logins alone.
func TestServerAuthColumn(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.Local)
	cfg, err := host.ParseConfig("mcp.json", []byte(`{"mcpServers": {
		"files": {"command": "npx", "args": ["-y", "server-files", "${HOME}"]},
		"in": {"url": "https://in.example.com/mcp/"},
		"expired": {"url": "https://expired.example.com/mcp"},
		"renews": {"url": "https://renews.example.com/mcp"},
		"never": {"url": "https://never.example.com/mcp", "oauth": {"clientId": "x"}},
		"plain": {"url": "https://plain.example.com/mcp?key=${KEY}"},
		"ci": {"url": "https://ci.example.com/mcp", "oauth": {"grantType": "client_credentials", "clientId": "bot", "clientSecret": "${KEY}"}},
		"hdr": {"url": "https://hdr.example.com/mcp", "headers": {"Authorization": "Bearer ${KEY}"}},
		"off": {"url": "https://off.example.com/mcp", "oauth": {"enabled": false}}
	}}`), func(k string) (string, bool) { return "SECRET-VALUE", true })
	if err != nil {
		t.Fatal(err)
	}
	grants := []oauth.GrantInfo{
		{Resource: "https://in.example.com/mcp", Subject: "alice", Expiry: now.Add(time.Hour), Scopes: []string{"read", "write"}},
		{Resource: "https://expired.example.com/mcp", Subject: "bob", Expiry: now.Add(-time.Hour)},
		{Resource: "https://renews.example.com/mcp", Subject: "carol", Expiry: now.Add(-time.Hour), Refreshable: true},
	}
	tests := []struct{ server, state, text, target string }{
		{"files", "none", "-", `npx -y server-files ${HOME}`},
		{"in", "logged_in", "logged in as alice until 2026-05-01 13:00 (read write)", "https://in.example.com/mcp/"},
		{"expired", "login_needed", "login expired 2026-05-01 11:00: toolwire login expired", ""},
		{"renews", "logged_in", "logged in as carol (token renewed on next use)", ""},
		{"never", "login_needed", "login needed: toolwire login never", ""},
		{"plain", "none", "-", "https://plain.example.com/mcp?key=${KEY}"},
		{"ci", "client_credentials", "client credentials", ""},
		{"hdr", "header", "header", ""},
		{"off", "none", "-", ""},
	}
	for _, tt := range tests {
		e := describeServer(cfg.Servers[tt.server], grants, now)
		if e.Auth.State != tt.state {
			t.Errorf("%s: state %q, want %q", tt.server, e.Auth.State, tt.state)
		}
		if got := authText(e, "toolwire login %s", now); got != tt.text {
			t.Errorf("%s: %q, want %q", tt.server, got, tt.text)
		}
		if target := e.URL + e.Command; tt.target != "" && target != tt.target {
			t.Errorf("%s: target %q, want %q", tt.server, target, tt.target)
		}
		if s := fmt.Sprintf("%+v", e); strings.Contains(s, "SECRET-VALUE") {
			t.Errorf("%s: the entry holds a secret from the environment: %s", tt.server, s)
		}
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"calc": "calc", "/tmp/mcp.json": "/tmp/mcp.json", "my config.json": "'my config.json'",
		"it's": `'it'\''s'`, "": "''", "$(rm -rf x)": "'$(rm -rf x)'",
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestKeyringHint(t *testing.T) {
	h := strings.Join(hints(fmt.Errorf("saving: %w", oauth.ErrKeyring), false), "\n")
	if !strings.Contains(h, "TOOLWIRE_TOKEN_STORE=file") {
		t.Errorf("no hint for a keyring failure: %q", h)
	}
}

func TestTokenSubject(t *testing.T) {
	// header {"alg":"RS256"}, payload {"sub":"alice"}, a signature that
	// is not checked.
	const jwt = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2ln"
	for tok, want := range map[string]string{jwt: "alice", "opaque-token": "", "a.b.c": "", "": ""} {
		if got := tokenSubject(tok); got != want {
			t.Errorf("tokenSubject(%q) = %q, want %q", tok, got, want)
		}
	}
}
