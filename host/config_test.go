package host

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseConfig(t *testing.T) {
	env := map[string]string{"TOKEN": "s3cret", "ROOT": "/data"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	cfg, err := ParseConfig("mcp.json", []byte(`{"mcpServers": {
		"fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "${ROOT}"], "env": {"DEBUG": "${UNSET:-0}"}},
		"api": {"url": "https://example.test/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}, "prefix": "", "timeout": "30s", "include": ["search"]},
		"off": {"command": "x", "disabled": true}
	}}`), lookup)
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Servers["fs"].Args[2]; got != "/data" {
		t.Errorf("args expansion = %q", got)
	}
	if got := cfg.Servers["fs"].Env["DEBUG"]; got != "0" {
		t.Errorf("default expansion = %q", got)
	}
	if got := cfg.Servers["api"].Headers["Authorization"]; got != "Bearer s3cret" {
		t.Errorf("header expansion = %q", got)
	}
	if p := cfg.Servers["api"].ToolPrefix(); p != "" {
		t.Errorf("empty prefix gives %q", p)
	}
	if p := cfg.Servers["fs"].ToolPrefix(); p != "fs__" {
		t.Errorf("default prefix = %q", p)
	}
	if _, ok := cfg.Servers["off"]; ok {
		t.Error("disabled server kept")
	}
}

func TestParseConfigErrors(t *testing.T) {
	lookup := func(string) (string, bool) { return "", false }
	tests := []struct {
		name, json string
		want       []string
	}{
		{"not JSON", `{"mcpServers": {`, []string{"mcp.json", "not valid JSON", "line"}},
		{"no mcpServers", `{"servers2": {}}`, []string{"mcp.json", `no "mcpServers"`, "servers2"}},
		{"wrong value type", `{"mcpServers": {"a": {"command": "x", "args": "y"}}}`, []string{"mcp.json", `server "a"`, `key "args"`, "a list"}},
		{"missing envFile", `{"mcpServers": {"a": {"command": "x", "envFile": "no-such.env"}}}`, []string{`server "a"`, `"envFile"`, "no-such.env"}},
		{"unset variable", `{"mcpServers": {"a": {"url": "http://x/${NOPE}"}}}`, []string{"mcp.json", `server "a"`, `key "url"`, "NOPE is not set"}},
		{"neither command nor url", `{"mcpServers": {"a": {"args": []}}}`, []string{`server "a"`, `"command"`, `"url"`}},
		{"both", `{"mcpServers": {"a": {"command": "x", "url": "http://y"}}}`, []string{`server "a"`, "not both"}},
		{"bad type", `{"mcpServers": {"a": {"url": "http://y", "type": "ws"}}}`, []string{`key "type"`, `"ws"`}},
		{"bad timeout", `{"mcpServers": {"a": {"command": "x", "timeout": "soon"}}}`, []string{`server "a"`, `"soon"`}},
		{"bad name", `{"mcpServers": {"a b": {"command": "x"}}}`, []string{`server "a b"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseConfig("mcp.json", []byte(tt.json), lookup)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

// Configurations pasted from other apps, as their documentation writes them.
func TestParseOtherAppsConfig(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ".env"), []byte("# comment\nAPI_KEY=from-file\nexport REGION=\"eu west\"\nDEBUG=file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "mcp.json")
	lookup := func(k string) (string, bool) { return map[string]string{"TOKEN": "t0k"}[k], k == "TOKEN" }
	cfg, err := ParseConfig(path, []byte(`{"servers": {
		"vscode": {"type": "stdio", "command": "srv", "envFile": ".env", "env": {"DEBUG": "env-wins", "T": "${env:TOKEN}"}, "cwd": "/tmp", "dev": {"watch": "src/**"}},
		"cline": {"type": "streamableHttp", "url": "http://h/mcp", "alwaysAllow": ["x"], "timeout": 60},
		"windsurf": {"serverUrl": "http://h/sse", "disabledTools": ["rm"], "headers": {"Authorization": "Bearer ${TOKEN}"}},
		"legacy": {"type": "sse", "url": "http://h/sse"},
		"opencode": {"type": "local", "command": "srv", "colour": "blue"}
	}}`), lookup)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		got, want any
	}{
		{"envFile value", cfg.Servers["vscode"].Env["API_KEY"], "from-file"},
		{"envFile export and quotes", cfg.Servers["vscode"].Env["REGION"], "eu west"},
		{"env wins over envFile", cfg.Servers["vscode"].Env["DEBUG"], "env-wins"},
		{"${env:VAR}", cfg.Servers["vscode"].Env["T"], "t0k"},
		{"cwd", cfg.Servers["vscode"].Cwd, "/tmp"},
		{"streamableHttp", cfg.Servers["cline"].Type, "http"},
		{"timeout in seconds", cfg.Servers["cline"].Timeout, Duration(60e9)},
		{"serverUrl", cfg.Servers["windsurf"].URL, "http://h/sse"},
		{"no type", cfg.Servers["windsurf"].Type, ""},
		{"disabledTools", cfg.Servers["windsurf"].Exclude, []string{"rm"}},
		{"headers", cfg.Servers["windsurf"].Headers["Authorization"], "Bearer t0k"},
		{"sse", cfg.Servers["legacy"].Type, "sse"},
		{"local", cfg.Servers["opencode"].Type, "stdio"},
	}
	for _, tt := range tests {
		if !reflect.DeepEqual(tt.got, tt.want) {
			t.Errorf("%s: got %#v, want %#v", tt.name, tt.got, tt.want)
		}
	}
	if len(cfg.Warnings) != 1 || !strings.Contains(cfg.Warnings[0], `server "opencode": unknown key "colour" ignored`) {
		t.Errorf("warnings = %q; want one for \"colour\" only", cfg.Warnings)
	}
}

func TestAppConfigPaths(t *testing.T) {
	got := appConfigPaths("/home/u", "/home/u/.config")
	want := []AppConfig{
		{"Claude Desktop", "/home/u/.config/Claude/claude_desktop_config.json"},
		{"Cursor", "/home/u/.cursor/mcp.json"},
		{"VS Code", "/home/u/.config/Code/User/mcp.json"},
		{"Windsurf", "/home/u/.codeium/windsurf/mcp_config.json"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
}
