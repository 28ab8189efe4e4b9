package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/testas"
)

// serve -v logs one line per request: method, name, duration, outcome.
func TestServeRequestLog(t *testing.T) {
	session := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"calculate","arguments":{"expression":"1+1"}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"calculate","arguments":{"expression":"1/0"}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"nope","arguments":{}}}`,
	}, "\n") + "\n"
	t.Run("stdio text", func(t *testing.T) {
		r := runEnv(t, nil, session, "serve", "-v")
		for _, want := range []*regexp.Regexp{
			regexp.MustCompile(`(?m)^time=\S+ level=INFO msg=request method=initialize duration=\S+ outcome=ok$`),
			regexp.MustCompile(`(?m)^time=\S+ level=INFO msg=request method=tools/call name=calculate duration=\S+ outcome=ok$`),
			regexp.MustCompile(`(?m)^time=\S+ level=INFO msg=request method=tools/call name=calculate duration=\S+ outcome=tool_error$`),
			regexp.MustCompile(`(?m)^time=\S+ level=INFO msg=request method=tools/call name=nope duration=\S+ outcome=(error code=-\d+ error=.*|tool_error)$`),
		} {
			if !want.MatchString(r.stderr) {
				t.Errorf("stderr does not match %s:\n%s", want, r.stderr)
			}
		}
	})
	t.Run("stdio json", func(t *testing.T) {
		r := runEnv(t, nil, session, "serve", "-v", "--log-format", "json")
		var calls int
		for _, line := range strings.Split(strings.TrimSpace(r.stderr), "\n") {
			var rec map[string]any
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				t.Fatalf("not a JSON line: %q", line)
			}
			if rec["msg"] == "request" && rec["method"] == "tools/call" && rec["duration"] != nil && rec["outcome"] != nil {
				calls++
			}
		}
		if calls != 3 {
			t.Errorf("%d tools/call lines, want 3:\n%s", calls, r.stderr)
		}
	})
	t.Run("quiet without -v", func(t *testing.T) {
		if r := runEnv(t, nil, session, "serve"); strings.Contains(r.stderr, "msg=request") {
			t.Errorf("serve without -v logged requests:\n%s", r.stderr)
		}
	})
	t.Run("http", func(t *testing.T) {
		addr, stderr := serveHTTPWithLog(t, "-v")
		cfg := writeConfig(t, map[string]string{"h": `{"url": "http://` + addr + `/mcp"}`})
		if r := runEnv(t, nil, "", "call", "--config", cfg, "h__calculate", `{"expression": "2*21"}`); r.code != 0 {
			t.Fatalf("call: exit %d\n%s", r.code, r.stderr)
		}
		waitFor(t, stderr.String, "method=tools/call")
		if !regexp.MustCompile(`msg=request method=tools/call name=calculate duration=\S+ outcome=ok`).MatchString(stderr.String()) {
			t.Errorf("serve's stderr:\n%s", stderr)
		}
	})
	t.Run("bad log format", func(t *testing.T) {
		r := runEnv(t, nil, "", "serve", "--log-format", "xml")
		if r.code != 2 || !strings.Contains(r.stderr, `--log-format "xml": use text or json`) || !strings.Contains(r.stderr, "Usage:") {
			t.Errorf("exit %d\n%s", r.code, r.stderr)
		}
	})
}

// serve refuses --auth-* flags that cannot work, before it serves.
func TestServeAuthFlags(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"without --http", []string{"--auth-issuer", "https://auth.example.com", "--auth-audience", "https://mcp.example.com/mcp"}, 2, "--auth-* flags need --http"},
		{"scope without --http", []string{"--auth-scope", "mcp"}, 2, "--auth-* flags need --http"},
		{"without an issuer", []string{"--http", "127.0.0.1:0", "--auth-audience", "https://mcp.example.com/mcp"}, 2, "need --auth-issuer"},
		{"without an audience", []string{"--http", "127.0.0.1:0", "--auth-issuer", "https://auth.example.com"}, 2, "--auth-issuer needs --auth-audience"},
		{"relative audience", []string{"--http", "127.0.0.1:0", "--auth-issuer", "https://auth.example.com", "--auth-audience", "mcp.example.com/mcp"}, 2, `--auth-audience "mcp.example.com/mcp": give this server's canonical URL, absolute`},
		{"audience with a fragment", []string{"--http", "127.0.0.1:0", "--auth-issuer", "https://auth.example.com", "--auth-audience", "https://mcp.example.com/mcp#x"}, 2, "without a fragment"},
		{"malformed tool scope", []string{"--http", "127.0.0.1:0", "--auth-issuer", "https://auth.example.com", "--auth-audience", "https://mcp.example.com/mcp", "--auth-tool-scope", "calculate"}, 2, `--auth-tool-scope "calculate": write TOOL=SCOPE`},
		{"client id without introspection", []string{"--http", "127.0.0.1:0", "--auth-issuer", "https://auth.example.com", "--auth-audience", "https://mcp.example.com/mcp", "--auth-client-id", "rs"}, 2, "--auth-client-id is for --auth-introspect"},
		{"issuer over http", []string{"--http", "127.0.0.1:0", "--auth-issuer", "http://auth.example.com", "--auth-audience", "https://mcp.example.com/mcp"}, 1, "uses http: use https"},
		{"unreachable issuer", []string{"--http", "127.0.0.1:0", "--auth-issuer", "http://127.0.0.1:1", "--auth-audience", "https://mcp.example.com/mcp"}, 1, "connection refused"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := runEnv(t, nil, "", append([]string{"serve"}, tt.args...)...)
			if r.code != tt.code || !strings.Contains(r.stderr, tt.want) {
				t.Errorf("exit %d, want %d with %q:\n%s", r.code, tt.code, tt.want, r.stderr)
			}
		})
	}
}

// serve --http --auth-issuer requires tokens of that issuer for its
// audience, with the scopes its flags name, and serves its metadata.
func TestServeAuth(t *testing.T) {
	const aud = "http://toolwire.test/mcp"
	as := testas.New(t, aud)
	if r := runEnv(t, nil, "", "serve", "--http", "127.0.0.1:0", "--auth-issuer", as.URL, "--auth-audience", aud, "--auth-tool-scope", "nope=x"); r.code != 1 || !strings.Contains(r.stderr, "this server has no tool nope") {
		t.Errorf("a scope for a tool that is not there: exit %d\n%s", r.code, r.stderr)
	}
	addr, stderr := serveHTTPWithLog(t, "--auth-issuer", as.URL, "--auth-audience", aud, "--auth-scope", "mcp", "--auth-tool-scope", "calculate=math")
	resp, err := http.Post("http://"+addr+"/mcp", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if want := `Bearer resource_metadata="http://toolwire.test/.well-known/oauth-protected-resource/mcp", scope="mcp"`; resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") != want {
		t.Errorf("without a token: %d %q, want 401 %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), want)
	}
	md, err := http.Get("http://" + addr + "/.well-known/oauth-protected-resource/mcp")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(md.Body)
	md.Body.Close()
	if md.StatusCode != 200 || !strings.Contains(string(body), `"resource":"http://toolwire.test/mcp"`) || !strings.Contains(string(body), `"scopes_supported":["math","mcp"]`) {
		t.Errorf("metadata: %d %s", md.StatusCode, body)
	}

	cfg := writeConfig(t, map[string]string{"h": `{"url": "http://` + addr + `/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}}`})
	for _, tt := range []struct {
		name  string
		token string
		want  string // "" for success; else what the error says
	}{
		{"with the scopes", as.Token(t, "alice", map[string]any{"scope": "mcp math"}), ""},
		{"without the tool's scope", as.Token(t, "alice", nil), `403 Forbidden: {"error":"insufficient_scope","error_description":"tool calculate needs scope math mcp"}`},
		{"expired", as.Token(t, "alice", map[string]any{"scope": "mcp math", "exp": time.Now().Add(-time.Hour).Unix()}), `401 Unauthorized: {"error":"invalid_token","error_description":"invalid token: expired at`},
		{"for another audience", as.Token(t, "alice", map[string]any{"scope": "mcp math", "aud": "http://other.test/mcp"}), "invalid token: issued for another audience than http://toolwire.test/mcp"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := runEnv(t, []string{"TOKEN=" + tt.token}, "", "call", "--config", cfg, "h__calculate", `{"expression": "2*21"}`)
			ok := r.code == 0 && strings.Contains(r.stdout, "42")
			if ok != (tt.want == "") || !strings.Contains(r.stderr, tt.want) {
				t.Errorf("exit %d, want %q\nstdout: %s\nstderr: %s", r.code, tt.want, r.stdout, r.stderr)
			}
			if strings.Contains(r.stdout+r.stderr+stderr.String(), tt.token[len(tt.token)-16:]) {
				t.Error("the token shows in the output")
			}
		})
	}
}

// serve --state-key-file gives the server the file's key (every replica
// the same), and refuses a key too short to sign with before serving.
func TestServeStateKeyFile(t *testing.T) {
	dir := t.TempDir()
	key := filepath.Join(dir, "state.key")
	if err := os.WriteFile(key, []byte("0123456789abcdef0123456789abcdef"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv, opened, err := newToolServer(serveOptions{stateKeyFile: key}, nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = opened.Close()
	if string(srv.StateKey) != "0123456789abcdef0123456789abcdef" {
		t.Fatalf("StateKey = %q, want the file's", srv.StateKey)
	}
	short := filepath.Join(dir, "short.key")
	if err := os.WriteFile(short, []byte("short"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := newToolServer(serveOptions{stateKeyFile: short}, nil); err == nil || !strings.Contains(err.Error(), "--state-key-file") || !strings.Contains(err.Error(), "too short") {
		t.Fatalf("a 5-byte key: %v, want --state-key-file's too short error", err)
	}
}
