package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/internal/testpeers"
)

// runIn runs the binary in dir, with a home and configuration directory
// of the test's own (no user configuration, no other app's), and extra
// environment.
func runIn(t *testing.T, dir string, env []string, args ...string) result {
	t.Helper()
	home := t.TempDir()
	cmd := exec.Command(build(t), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), append([]string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"TOOLWIRE_CONFIG=", "TOOLWIRE_TOKEN_STORE=file", "GORACE=atexit_sleep_ms=0"}, env...)...)
	return runCmd(t, cmd)
}

func mustContain(t *testing.T, what string, r result, code int, want ...string) {
	t.Helper()
	if r.code != code {
		t.Errorf("%s: exit %d, want %d\nstdout: %s\nstderr: %s", what, r.code, code, r.stdout, r.stderr)
	}
	for _, w := range want {
		if !strings.Contains(r.stdout+r.stderr, w) {
			t.Errorf("%s: output does not say %q\nstdout: %s\nstderr: %s", what, w, r.stdout, r.stderr)
		}
	}
}

// toolwire mcp add, add-json, get, list and remove on a JSONC file, with
// real servers: toolwire serve over stdio and over HTTP, a command that
// does not exist.
func TestMCPCommands(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mcp.json")
	orig := "{\n  // my servers\n  \"mcpServers\": {\n    \"kept\": {\"command\": \"" + build(t) + "\", \"args\": [\"serve\"], \"colour\": \"blue\"}, // keep me\n  },\n  \"theme\": \"dark\",\n}\n"
	if err := os.WriteFile(cfg, []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := serveHTTPForTest(t)
	r := runIn(t, dir, nil, "mcp", "add", "--config", cfg, "local", "-e", "SECRET_TOKEN=hunter2", "--", build(t), "serve")
	mustContain(t, "add stdio", r, 0, "Added stdio server local to "+cfg, "local__TOOL", "warning: the variable SECRET_TOKEN is written into the file as it is")
	r = runIn(t, dir, nil, "mcp", "add", "--config", cfg, "web", "--url", "http://"+addr+"/mcp", "--header", "Authorization: Bearer ${WEB_TOKEN}")
	mustContain(t, "add http", r, 0, "Added HTTP server web")
	if strings.Contains(r.stderr, "warning") {
		t.Errorf("a header written as ${VAR} is warned about:\n%s", r.stderr)
	}
	r = runIn(t, dir, nil, "mcp", "add-json", "--config", cfg, "gone", `{"command": "/nonexistent/toolwire-test-server", /* JSONC */}`)
	mustContain(t, "add-json", r, 0, "Added stdio server gone")
	r = runIn(t, dir, nil, "mcp", "add", "--config", cfg, "local", "--", "other")
	mustContain(t, "add an existing name", r, 1, `server "local" is in `+cfg+` already`, "--force")

	b, _ := os.ReadFile(cfg)
	for _, keep := range []string{"// my servers", "// keep me", `"colour": "blue"`, `"theme": "dark"`, `"SECRET_TOKEN": "hunter2"`, `"Authorization": "Bearer ${WEB_TOKEN}"`, `"args": [` + "\n"} {
		if !strings.Contains(string(b), keep) {
			t.Errorf("the file lost or lacks %q:\n%s", keep, b)
		}
	}

	r = runIn(t, dir, []string{"WEB_TOKEN=t"}, "mcp", "list", "--config", cfg)
	mustContain(t, "list", r, 1, "Configuration: "+cfg+" (from --config)",
		"failed at spawn: ", "/nonexistent/toolwire-test-server")
	for _, name := range []string{"kept", "local", "web"} {
		if !regexpLine(r.stdout, name+`\s+(stdio|http)\s+.*connected, \d+ tools`) {
			t.Errorf("list: no connected line for %s:\n%s", name, r.stdout)
		}
	}
	r = runIn(t, dir, []string{"WEB_TOKEN=t"}, "mcp", "list", "--config", cfg, "--json")
	var listed struct {
		File    string
		Servers []mcpServer
	}
	if err := json.Unmarshal([]byte(r.stdout), &listed); err != nil || listed.File != cfg || len(listed.Servers) != 4 {
		t.Fatalf("list --json: %v\n%s", err, r.stdout)
	}
	if s := listed.Servers[0]; s.Name != "gone" || s.Status != "failed" || s.Step != "spawn" {
		t.Errorf("list --json: %+v", s)
	}

	r = runIn(t, dir, nil, "mcp", "get", "--config", cfg, "local")
	mustContain(t, "get", r, 0, "File: "+cfg, "Transport: stdio", "Environment: SECRET_TOKEN (values not shown)", "Tools: local__TOOL")
	r2 := runIn(t, dir, []string{"WEB_TOKEN=the-web-token"}, "mcp", "get", "--config", cfg, "web", "--json")
	mustContain(t, "get --json", r2, 0, `"headers": [`, `"Authorization"`)
	for _, out := range []string{r.stdout, r.stderr, r2.stdout, r2.stderr} {
		if strings.Contains(out, "hunter2") || strings.Contains(out, "the-web-token") {
			t.Errorf("get shows a secret:\n%s", out)
		}
	}
	r = runIn(t, dir, nil, "mcp", "get", "--config", cfg, "nope")
	mustContain(t, "get a name not there", r, 1, `"nope"`, "gone, kept, local, web")

	r = runIn(t, dir, nil, "mcp", "add", "--config", cfg, "local", "--force", "--url", "http://"+addr+"/mcp")
	mustContain(t, "add --force", r, 0, "Added HTTP server local")
	r = runIn(t, dir, nil, "mcp", "remove", "--config", cfg, "gone")
	mustContain(t, "remove", r, 0, "Removed server gone from "+cfg)
	r = runIn(t, dir, nil, "mcp", "remove", "--config", cfg, "gone")
	mustContain(t, "remove again", r, 1, `no server "gone" in `+cfg)
	r = runIn(t, dir, nil, "mcp", "list", "--config", cfg)
	mustContain(t, "list without a variable", r, 1, `server "web", key "headers.Authorization": environment variable WEB_TOKEN is not set`)
	r = runIn(t, dir, []string{"WEB_TOKEN=t"}, "mcp", "list", "--config", cfg)
	mustContain(t, "list after", r, 0, "local  http")
	b, _ = os.ReadFile(cfg)
	if strings.Contains(string(b), "gone") || !strings.Contains(string(b), "// keep me") || strings.Contains(string(b), "SECRET_TOKEN") {
		t.Errorf("after remove and replace:\n%s", b)
	}
}

func regexpLine(s, re string) bool {
	for _, line := range strings.Split(s, "\n") {
		if regexp.MustCompile(re).MatchString(line) {
			return true
		}
	}
	return false
}

// Mistakes in the command line are refused with the usage (exit 2), and
// the file is left alone.
func TestMCPUsageErrors(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mcp.json")
	orig := `{"mcpServers": {"a": {"command": "x"}}}`
	if err := os.WriteFile(cfg, []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"mcp", "add", "--config", cfg, "b"}, `give the server's command after "--", or --url`},
		{[]string{"mcp", "add", "--config", cfg, "--", "cmd"}, "want one NAME"},
		{[]string{"mcp", "add", "--config", cfg, "b", "--url", "http://h/mcp", "--", "cmd"}, "one or the other"},
		{[]string{"mcp", "add", "--config", cfg, "b", "--header", "A: b", "--", "cmd"}, "--header is for an HTTP server"},
		{[]string{"mcp", "add", "--config", cfg, "b", "--url", "http://h/mcp", "--transport", "ws"}, `--transport "ws"`},
		{[]string{"mcp", "add", "--config", cfg, "b", "--url", "ftp://h/mcp"}, "want an http:// or https:// URL"},
		{[]string{"mcp", "add", "--config", cfg, "b c", "--", "cmd"}, `server "b c"`},
		{[]string{"mcp", "add", "--config", cfg, "b", "-e", "NOEQUALS", "--", "cmd"}, "KEY=VALUE"},
		{[]string{"mcp", "add-json", "--config", cfg, "b", `["x"]`}, "must be a JSON object"},
		{[]string{"mcp", "add-json", "--config", cfg, "b", `{"command": "x",, }`}, "not valid JSON: line 1, column 17"},
		{[]string{"mcp", "add-json", "--config", cfg, "b", `{"command": "x", "url": "http://h"}`}, "not both"},
		{[]string{"tools", "--"}, `nothing after "--"`},
		{[]string{"tools", "--url", "http://h/mcp", "--", "cmd"}, "one or the other"},
		{[]string{"tools", "--config", cfg, "--", "cmd"}, "--config and an ad-hoc server"},
		{[]string{"tools", "--env", "A=b"}, "for an ad-hoc server"},
		{[]string{"call", "--url", "http://h/mcp", "--env", "A=b", "x__y"}, "--env is for a server launched by a command"},
	}
	for _, tt := range tests {
		r := runIn(t, dir, nil, tt.args...)
		mustContain(t, strings.Join(tt.args, " "), r, 2, tt.want, "Usage:")
	}
	if b, _ := os.ReadFile(cfg); string(b) != orig {
		t.Errorf("the file changed:\n%s", b)
	}
}

// A server that answers 401 and names an authorization server is listed
// as needing a login.
func TestMCPListNeedsLogin(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		base := "http://" + r.Host
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/mcp":
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer resource_metadata="%s/.well-known/oauth-protected-resource/mcp"`, base))
			w.WriteHeader(http.StatusUnauthorized)
		case "/.well-known/oauth-protected-resource/mcp":
			fmt.Fprintf(w, `{"resource": "%s/mcp", "authorization_servers": ["%s"]}`, base, base)
		case "/.well-known/oauth-authorization-server":
			fmt.Fprintf(w, `{"issuer": "%[1]s", "authorization_endpoint": "%[1]s/authorize", "token_endpoint": "%[1]s/token",
				"registration_endpoint": "%[1]s/register", "response_types_supported": ["code"], "code_challenge_methods_supported": ["S256"]}`, base)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mcp.json")
	r := runIn(t, dir, nil, "mcp", "add", "--config", cfg, "locked", "--url", srv.URL+"/mcp")
	mustContain(t, "add", r, 0)
	r = runIn(t, dir, nil, "mcp", "list", "--config", cfg)
	mustContain(t, "list", r, 0, "needs login: toolwire login locked --config "+cfg)
}

// The project's files are found from a subdirectory up to the repository's
// root, nearest first; mcp list and -v say which is used; mcp add edits it,
// comments kept.
func TestProjectConfigDiscovery(t *testing.T) {
	repo := t.TempDir()
	sub := filepath.Join(repo, "pkg", "sub")
	for _, d := range []string{filepath.Join(repo, ".git"), filepath.Join(sub, ".vscode")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	self := build(t)
	claude := filepath.Join(repo, ".mcp.json")
	vscode := filepath.Join(sub, ".vscode", "mcp.json")
	if err := os.WriteFile(claude, []byte(fmt.Sprintf(`{"mcpServers": {"root": {"command": %q, "args": ["serve"]}}}`, self)), 0o644); err != nil {
		t.Fatal(err)
	}
	vs := fmt.Sprintf("{\n\t// VS Code's own file\n\t\"servers\": {\n\t\t\"near\": {\"type\": \"stdio\", \"command\": %q, \"args\": [\"serve\"]},\n\t},\n}\n", self)
	if err := os.WriteFile(vscode, []byte(vs), 0o644); err != nil {
		t.Fatal(err)
	}
	// A project's files are used only once trusted, as they are: until
	// then no command of theirs starts.
	marker := filepath.Join(repo, "started")
	hostile := fmt.Sprintf(`{"mcpServers": {"evil": {"command": "sh", "args": ["-c", "touch %s"]}}}`, marker)
	if err := os.WriteFile(claude, []byte(hostile), 0o644); err != nil {
		t.Fatal(err)
	}
	home := []string{"XDG_CONFIG_HOME=" + filepath.Join(t.TempDir(), "config")}
	r := runIn(t, filepath.Join(repo, "pkg"), home, "tools")
	mustContain(t, "tools with an untrusted .mcp.json", r, 1, "not using "+claude, "toolwire mcp trust")
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("an untrusted project file's command was started")
	}
	if err := os.WriteFile(claude, []byte(fmt.Sprintf(`{"mcpServers": {"root": {"command": %q, "args": ["serve"]}}}`, self)), 0o644); err != nil {
		t.Fatal(err)
	}
	r = runIn(t, sub, home, "mcp", "trust", claude)
	mustContain(t, "trust .mcp.json", r, 0, "Trusted "+claude, "root: "+self+" serve")
	r = runIn(t, sub, home, "mcp", "list")
	mustContain(t, "list in sub, .vscode untrusted", r, 0, "Configuration: "+claude, "Not used: "+vscode+" (VS Code workspace's; not trusted", "root")
	r = runIn(t, sub, home, "mcp", "trust")
	mustContain(t, "trust the nearest", r, 0, "Trusted "+vscode, "near: "+self+" serve")
	r = runIn(t, sub, home, "mcp", "list")
	mustContain(t, "list in sub", r, 0, "Configuration: "+vscode+" (VS Code workspace's)", "Not used: "+claude, "near")
	r = runIn(t, sub, home, "-v", "tools")
	mustContain(t, "-v tools in sub", r, 0, "toolwire: configuration "+vscode, "near__calculate")
	r = runIn(t, filepath.Join(repo, "pkg"), home, "tools")
	mustContain(t, "tools in pkg", r, 0, "root__calculate")
	r = runIn(t, sub, home, "mcp", "add", "more", "--", self, "serve")
	mustContain(t, "add in sub", r, 0, "Added stdio server more to "+vscode)
	b, _ := os.ReadFile(vscode)
	if !strings.Contains(string(b), "// VS Code's own file") || !strings.Contains(string(b), "\t\t\"more\": {\n\t\t\t\"type\": \"stdio\"") {
		t.Errorf("the VS Code file after add:\n%s", b)
	}
	// toolwire's own edit keeps the file trusted; another's does not.
	r = runIn(t, sub, home, "tools")
	mustContain(t, "tools after add", r, 0, "more__calculate")
	if err := os.WriteFile(claude, []byte(hostile), 0o644); err != nil {
		t.Fatal(err)
	}
	r = runIn(t, filepath.Join(repo, "pkg"), home, "tools")
	mustContain(t, "tools after .mcp.json changed", r, 1, "not using "+claude)
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a changed project file's command was started")
	}
	r = runIn(t, sub, []string{"TOOLWIRE_CONFIG=" + vscode}, "tools")
	mustContain(t, "$TOOLWIRE_CONFIG first", r, 0, "near__calculate")

	// Outside any repository, with nothing found: the user's file is made.
	empty := t.TempDir()
	r = runIn(t, empty, nil, "mcp", "list")
	mustContain(t, "list with nothing", r, 1, "no configuration", "toolwire mcp add")
}

// Ad-hoc servers: a command after "--" (toolwire serve, the npm reference
// server) or --url (toolwire serve --http), on tools, call, resources and
// prompts; their tools named as a configured server's.
func TestAdhocServers(t *testing.T) {
	dir := t.TempDir()
	self := build(t)
	r := runIn(t, dir, nil, "-v", "tools", "--", self, "serve")
	mustContain(t, "tools -- toolwire serve", r, 0, "toolwire__calculate", "ad-hoc server toolwire: its tools are named toolwire__TOOL")
	// The names of an ad-hoc server's tools are not kept for completion,
	// as a configured server's are.
	cache := t.TempDir()
	names := filepath.Join(cache, "toolwire", "names.json")
	r = runIn(t, dir, []string{"XDG_CACHE_HOME=" + cache}, "tools", "--", self, "serve")
	if _, err := os.Stat(names); r.code != 0 || err == nil {
		t.Errorf("tools with an ad-hoc server: exit %d, names kept for completion (%v)", r.code, err)
	}
	cfg := filepath.Join(dir, "mcp.json")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`{"mcpServers": {"c": {"command": %q, "args": ["serve"]}}}`, self)), 0o644); err != nil {
		t.Fatal(err)
	}
	r = runIn(t, dir, []string{"XDG_CACHE_HOME=" + cache}, "tools", "--config", cfg)
	if _, err := os.Stat(names); r.code != 0 || err != nil {
		t.Errorf("tools with a configured server: exit %d, no names kept for completion (%v)", r.code, err)
	}
	r = runIn(t, dir, nil, "call", "toolwire__calculate", `{"expression": "6*7"}`, "--", self, "serve")
	mustContain(t, "call -- toolwire serve", r, 0, "42")
	r = runIn(t, dir, nil, "call", "--name", "calc", "calc__calculate", `{"expression": "1+1"}`, "--", self, "serve")
	mustContain(t, "call --name", r, 0, "2")
	r = runIn(t, dir, nil, "call", "calculate", `{"expression": "1+1"}`, "--", self, "serve")
	mustContain(t, "call without the prefix", r, 1, `no tool "calculate"`)

	addr := serveHTTPForTest(t)
	r = runIn(t, dir, []string{"T=secret-header"}, "tools", "--url", "http://"+addr+"/mcp", "--header", "X-Test: ${T}", "--json")
	mustContain(t, "tools --url", r, 0, `"name": "127_0_0_1__calculate"`)
	for _, cmd := range []string{"resources", "prompts"} {
		r = runIn(t, dir, nil, cmd, "--url", "http://"+addr+"/mcp", "--json")
		mustContain(t, cmd+" --url", r, 0, "[")
	}

	node := testpeers.Node(t)
	everything := filepath.Join(testpeers.Package(t, "@modelcontextprotocol/server-everything"), "dist", "index.js")
	r = runIn(t, dir, nil, "tools", "--name", "everything", "--", node, everything)
	mustContain(t, "tools -- server-everything", r, 0, "everything__echo")
	r = runIn(t, dir, nil, "call", "index__echo", `{"message": "hi there"}`, "--", node, everything)
	mustContain(t, "call -- server-everything", r, 0, "hi there")
	r = runIn(t, dir, nil, "prompts", "--", node, everything)
	mustContain(t, "prompts -- server-everything", r, 0, "index__simple-prompt")
	r = runIn(t, dir, nil, "resources", "--", node, everything)
	mustContain(t, "resources -- server-everything", r, 0, "demo://")
	r = runIn(t, dir, []string{"FROM_ENV=v1"}, "call", "--env", "SEEN=${FROM_ENV}", "index__get-env", "--", node, everything)
	mustContain(t, "--env", r, 0, `SEEN`, `v1`)
}
