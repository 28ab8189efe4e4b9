package host

import (
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
		{"unknown key", `{"mcpServers": {"a": {"command": "x", "comand": "y"}}}`, []string{"mcp.json", `server "a"`, `unknown key "comand"`}},
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
