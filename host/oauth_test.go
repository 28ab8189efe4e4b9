package host

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/oauth"
)

// TestParseOAuthConfig reads the "oauth" object in the shapes other apps
// write it: Claude Code's, Gemini CLI's, Cursor's "auth", and toolwire's
// client credentials.
func TestParseOAuthConfig(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "bot.pem"), []byte("-----BEGIN PRIVATE KEY-----\nabc\n-----END PRIVATE KEY-----\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"SECRET": "s3cret", "CURSOR_SECRET": "c5ecret"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	cfg, err := ParseConfig(filepath.Join(dir, "mcp.json"), []byte(`{"mcpServers": {
		"claude": {"type": "http", "url": "https://a.example.com/mcp", "oauth": {"clientId": "cc-id", "callbackPort": 8765, "scopes": "read write", "authServerMetadataUrl": "https://as.example.com/.well-known/oauth-authorization-server"}},
		"gemini": {"url": "https://b.example.com/mcp", "oauth": {"enabled": true, "clientId": "g-id", "clientSecret": "${SECRET}", "redirectUri": "http://localhost:7777/oauth/callback", "scopes": ["x", "y"], "tokenUrl": "https://as/token"}},
		"cursor": {"url": "https://c.example.com/mcp", "auth": {"CLIENT_ID": "cu-id", "CLIENT_SECRET": "${CURSOR_SECRET}", "scopes": ["mcp"]}},
		"ci": {"url": "https://d.example.com/mcp", "oauth": {"grantType": "client_credentials", "clientId": "bot", "privateKeyFile": "bot.pem", "keyId": "k1", "alg": "ES256"}},
		"off": {"url": "https://e.example.com/mcp", "oauth": {"enabled": false}},
		"header": {"url": "https://f.example.com/mcp", "headers": {"authorization": "Bearer ${SECRET}"}},
		"plain": {"url": "https://g.example.com/mcp"},
		"stdio": {"command": "srv"}
	}}`), lookup)
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.Servers
	tests := []struct {
		name      string
		got, want any
	}{
		{"Claude Code clientId", s["claude"].OAuth.ClientID, "cc-id"},
		{"scopes as one string", s["claude"].OAuth.Scopes, Scopes{"read", "write"}},
		{"callbackPort", s["claude"].RedirectURI(), "http://localhost:8765/callback"},
		{"Gemini secret from the environment", s["gemini"].OAuth.ClientSecret, "s3cret"},
		{"redirectUri", s["gemini"].RedirectURI(), "http://localhost:7777/oauth/callback"},
		{"scopes as a list", s["gemini"].OAuth.Scopes, Scopes{"x", "y"}},
		{"Cursor's auth", s["cursor"].OAuth.ClientID + " " + s["cursor"].OAuth.ClientSecret, "cu-id c5ecret"},
		{"Cursor's auth moved to OAuth", s["cursor"].Auth == nil && s["cursor"].OAuth.CursorClientID == "", true},
		{"private key file read", strings.Contains(s["ci"].OAuth.PrivateKey, "BEGIN PRIVATE KEY"), true},
		{"client credentials", s["ci"].ClientCredentials(), true},
		{"user login is not client credentials", s["gemini"].ClientCredentials(), false},
		{"enabled false", s["off"].UsesOAuth(), false},
		{"own Authorization header", s["header"].UsesOAuth(), false},
		{"plain HTTP server", s["plain"].UsesOAuth(), true},
		{"no redirect configured", s["plain"].RedirectURI(), ""},
		{"stdio", s["stdio"].UsesOAuth(), false},
	}
	for _, tt := range tests {
		if !reflect.DeepEqual(tt.got, tt.want) {
			t.Errorf("%s: got %#v, want %#v", tt.name, tt.got, tt.want)
		}
	}
	warnings := strings.Join(cfg.Warnings, "\n")
	for _, want := range []string{
		`server "claude", key "oauth": "authServerMetadataUrl" ignored: toolwire finds the authorization server`,
		`server "gemini", key "oauth": "tokenUrl" ignored`,
	} {
		if !strings.Contains(warnings, want) {
			t.Errorf("no warning %q in:\n%s", want, warnings)
		}
	}
	if len(cfg.Warnings) != 2 {
		t.Errorf("warnings: %q", cfg.Warnings)
	}
	if strings.Contains(warnings, "s3cret") || strings.Contains(warnings, "c5ecret") {
		t.Errorf("a warning holds a secret:\n%s", warnings)
	}
}

// TestOAuthConfigWarnsOfSecretInFile: a secret written in the file is
// accepted, with a warning to move it to the environment; the warning
// does not repeat it.
func TestOAuthConfigWarnsOfSecretInFile(t *testing.T) {
	for _, body := range []string{
		`{"url": "https://a/mcp", "oauth": {"clientId": "x", "clientSecret": "literal-SECRET"}}`,
		`{"url": "https://a/mcp", "auth": {"CLIENT_ID": "x", "CLIENT_SECRET": "literal-SECRET"}}`,
		`{"url": "https://a/mcp", "oauth": {"grantType": "client_credentials", "clientId": "x", "privateKey": "literal-SECRET"}}`,
	} {
		cfg, err := ParseConfig("mcp.json", []byte(`{"mcpServers": {"a": `+body+`}}`), func(string) (string, bool) { return "", false })
		if err != nil {
			t.Fatal(err)
		}
		w := strings.Join(cfg.Warnings, "\n")
		if !strings.Contains(w, "is written in the file: keep the secret in the environment") || strings.Contains(w, "literal-SECRET") {
			t.Errorf("%s: warnings %q", body, cfg.Warnings)
		}
	}
}

func TestParseOAuthConfigErrors(t *testing.T) {
	lookup := func(k string) (string, bool) { return "v", k == "SET" }
	tests := []struct {
		name, server string
		want         []string
	}{
		{"stdio", `{"command": "x", "oauth": {"clientId": "a"}}`, []string{`key "oauth"`, "over HTTP"}},
		{"both spellings", `{"url": "https://a/mcp", "oauth": {}, "auth": {}}`, []string{`"oauth" or "auth"`}},
		{"Cursor and Claude disagree", `{"url": "https://a/mcp", "oauth": {"clientId": "a", "CLIENT_ID": "b"}}`, []string{"CLIENT_ID", "disagree"}},
		{"bad grant", `{"url": "https://a/mcp", "oauth": {"grantType": "password"}}`, []string{`grantType "password"`, "client_credentials"}},
		{"bad auth method", `{"url": "https://a/mcp", "oauth": {"tokenEndpointAuthMethod": "tls"}}`, []string{"tokenEndpointAuthMethod", "client_secret_basic"}},
		{"bad port", `{"url": "https://a/mcp", "oauth": {"callbackPort": 70000}}`, []string{"callbackPort 70000"}},
		{"port and URI", `{"url": "https://a/mcp", "oauth": {"callbackPort": 1, "redirectUri": "http://127.0.0.1:1/cb"}}`, []string{"callbackPort or redirectUri"}},
		{"client credentials without id", `{"url": "https://a/mcp", "oauth": {"grantType": "client_credentials", "clientSecret": "${SET}"}}`, []string{"needs clientId"}},
		{"client credentials without secret", `{"url": "https://a/mcp", "oauth": {"grantType": "client_credentials", "clientId": "x"}}`, []string{"clientSecret or a private key"}},
		{"client credentials with both", `{"url": "https://a/mcp", "oauth": {"grantType": "client_credentials", "clientId": "x", "clientSecret": "${SET}", "privateKey": "${SET}"}}`, []string{"one of them"}},
		{"key without client credentials", `{"url": "https://a/mcp", "oauth": {"privateKey": "${SET}"}}`, []string{`"grantType": "client_credentials"`}},
		{"missing key file", `{"url": "https://a/mcp", "oauth": {"grantType": "client_credentials", "clientId": "x", "privateKeyFile": "nope.pem"}}`, []string{"privateKeyFile", "nope.pem"}},
		{"unset secret", `{"url": "https://a/mcp", "oauth": {"clientSecret": "${NOPE}"}}`, []string{`key "oauth.clientSecret"`, "NOPE is not set"}},
		{"scopes of the wrong type", `{"url": "https://a/mcp", "oauth": {"scopes": 3}}`, []string{"scopes"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseConfig("mcp.json", []byte(`{"mcpServers": {"a": `+tt.server+`}}`), lookup)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range append(tt.want, `server "a"`) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

// TestHostOAuth: the OAuth configuration the host builds for a server.
func TestHostOAuth(t *testing.T) {
	cfg, err := ParseConfig("mcp.json", []byte(`{"mcpServers": {
		"user": {"url": "https://a.example.com/mcp", "oauth": {"clientId": "id", "clientSecret": "${S}", "scopes": "a b", "tokenEndpointAuthMethod": "client_secret_post"}},
		"ci": {"url": "https://b.example.com/mcp", "oauth": {"grantType": "client_credentials", "clientId": "bot", "clientSecret": "${S}"}}
	}}`), func(string) (string, bool) { return "sec", true })
	if err != nil {
		t.Fatal(err)
	}
	store := &oauth.MemoryStore{}
	h := &Host{Config: cfg}
	h.Client.Info.Name = "toolwire-test"
	h.Tokens = store
	u := h.OAuth(cfg.Servers["user"])
	if u.Resource != "https://a.example.com/mcp" || u.Store != store || u.ClientID != "id" || u.ClientSecret != "sec" ||
		!reflect.DeepEqual(u.Scopes, []string{"a", "b"}) || u.TokenEndpointAuthMethod != "client_secret_post" ||
		u.ClientName != "toolwire-test" || u.Authorize != nil || u.ClientCredentials != nil {
		t.Errorf("user login config: %+v", u)
	}
	c := h.OAuth(cfg.Servers["ci"])
	if c.ClientCredentials == nil || c.ClientCredentials.ClientID != "bot" || c.ClientCredentials.ClientSecret != "sec" || c.ClientID != "" {
		t.Errorf("client credentials config: %+v", c)
	}
	// Without Tokens, one store in memory for the host's life.
	h2 := &Host{Config: cfg}
	if a, b := h2.OAuth(cfg.Servers["user"]).Store, h2.OAuth(cfg.Servers["ci"]).Store; a == nil || a != b {
		t.Errorf("the default store is not one store: %v %v", a, b)
	}
}

func TestLoginRequiredError(t *testing.T) {
	h := &Host{Config: &Config{Servers: map[string]*ServerConfig{"calc": {Name: "calc", URL: "https://a/mcp"}}}}
	s, _ := h.server("calc")
	cause := fmt.Errorf("tools/list: %w: https://a/mcp needs an interactive login", oauth.ErrLoginRequired)
	err := s.loginError(cause)
	var lr *LoginRequiredError
	if !errors.As(err, &lr) || !errors.Is(err, oauth.ErrLoginRequired) || err.Error() != `server "calc" needs a login` {
		t.Errorf("without LoginCommand: %v", err)
	}
	h.LoginCommand = "toolwire login %s"
	if err := s.loginError(cause); err.Error() != `server "calc" needs a login: run toolwire login calc` {
		t.Errorf("with LoginCommand: %v", err)
	}
	if again := s.loginError(err); again != err {
		t.Errorf("a LoginRequiredError is wrapped again: %v", again)
	}
	other := errors.New("connection refused")
	if s.loginError(other) != other {
		t.Error("another error was changed")
	}
	ce := &ConnectError{Server: "calc", Step: StepConnect, Err: s.loginError(cause)}
	if ce.Error() != `server "calc" needs a login: run toolwire login calc` {
		t.Errorf("ConnectError: %v", ce)
	}
}
