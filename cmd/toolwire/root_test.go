package main

import (
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

func TestConventions(t *testing.T) {
	dir := t.TempDir()
	mark := filepath.Join(dir, "ran")
	cfg := writeConfig(t, map[string]string{
		"calc": testServerJSON(t, "calc", map[string]string{"TOOLWIRE_TEST_MARKER": mark}, ""),
	})
	cache := []string{"XDG_CACHE_HOME=" + t.TempDir()}
	version := regexp.MustCompile(`^toolwire \S+.*, ` + regexp.QuoteMeta(runtime.Version()) + `\n$`)
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout *regexp.Regexp
		stderr *regexp.Regexp
	}{
		{"version", []string{"version"}, 0, version, nil},
		{"--version", []string{"--version"}, 0, version, nil},
		{"version --json", []string{"version", "--json"}, 0, regexp.MustCompile(`"version": "[^"]+",(.|\n)*"go": "go`), nil},
		{"-v is verbose, not version", []string{"-v", "version"}, 0, version, nil},
		{"call without arguments", []string{"call"}, 2, nil, regexp.MustCompile(`^toolwire: missing the tool name \(toolwire tools lists them\)\n\nUsage:\n  toolwire call SERVER__TOOL \[JSON_ARGS \| KEY=VALUE...\]`)},
		{"call with unquoted JSON", []string{"call", "a__b", "{", "}"}, 2, nil, regexp.MustCompile(`3 arguments, but the JSON arguments are one: quote them(.|\n)*Usage:`)},
		{"tools show without a name", []string{"tools", "show"}, 2, nil, regexp.MustCompile(`accepts 1 arg\(s\), received 0\n\nUsage:\n  toolwire tools show SERVER__TOOL`)},
		{"bad flag", []string{"tools", "--nope"}, 2, nil, regexp.MustCompile(`unknown flag: --nope\n\nUsage:`)},
		{"did you mean a tool", []string{"call", "--config", cfg, "calc__calculat", "{}"}, 1, nil, regexp.MustCompile(`no tool "calc__calculat"; did you mean calc__calculate\? \(toolwire tools lists the names\)`)},
		{"did you mean a server", []string{"call", "--config", cfg, "calk__calculate", "{}"}, 1, nil, regexp.MustCompile(`did you mean calc__calculate\?`)},
		{"did you mean a command", []string{"toolz"}, 1, nil, regexp.MustCompile(`unknown command "toolz"(.|\n)*tools`)},
		{"config help is a topic", []string{"help", "config"}, 0, regexp.MustCompile(`"mcpServers"(.|\n)*envFile(.|\n)*default 30s to connect`), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runEnv(t, cache, "", tt.args...)
			if r.code != tt.code || tt.stdout != nil && !tt.stdout.MatchString(r.stdout) || tt.stderr != nil && !tt.stderr.MatchString(r.stderr) {
				t.Errorf("exit %d (want %d)\nstdout: %s\nstderr: %s", r.code, tt.code, r.stdout, r.stderr)
			}
		})
	}
	// The configuration's help is written once, and the commands that
	// read the file point to it.
	for _, cmd := range []string{"tools", "call", "resources", "read", "prompts", "prompt"} {
		r := runEnv(t, nil, "", cmd, "--help")
		if !strings.Contains(r.stdout, "see toolwire help config") || strings.Contains(r.stdout, `"mcpServers"`) {
			t.Errorf("%s --help should point to toolwire help config, not repeat it:\n%s", cmd, r.stdout)
		}
	}
}

// Completion of server and tool names never starts a server: tool names
// come from what the last listing saw.
func TestCompletion(t *testing.T) {
	dir := t.TempDir()
	mark := filepath.Join(dir, "ran")
	cfg := writeConfig(t, map[string]string{
		"calc":  testServerJSON(t, "calc", map[string]string{"TOOLWIRE_TEST_MARKER": mark}, ""),
		"other": testServerJSON(t, "calc", map[string]string{"TOOLWIRE_TEST_MARKER": mark}, `"prefix": "o"`),
	})
	env := []string{"XDG_CACHE_HOME=" + t.TempDir()}
	complete := func(args ...string) []string {
		t.Helper()
		r := runEnv(t, env, "", append([]string{"__complete"}, args...)...)
		if r.code != 0 {
			t.Fatalf("__complete %v: exit %d\n%s", args, r.code, r.stderr)
		}
		lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
		return lines[:len(lines)-1] // the last line is the directive
	}
	if got := strings.Join(complete("tools", "--config", cfg, ""), " "); got != "calc other" {
		t.Errorf("servers: %q", got)
	}
	if got := strings.Join(complete("call", "--config", cfg, ""), " "); got != "calc__ o__" {
		t.Errorf("tool names before any listing: %q; want the prefixes", got)
	}
	if _, err := os.Stat(mark); err == nil {
		t.Fatal("completion started a server")
	}
	if r := runEnv(t, env, "", "tools", "--config", cfg); r.code != 0 {
		t.Fatalf("tools: exit %d\n%s", r.code, r.stderr)
	}
	os.Remove(mark)
	got := complete("call", "--config", cfg, "calc__c")
	if strings.Join(got, " ") != "calc__calculate calc__convert_time" {
		t.Errorf("tool names after a listing: %q", got)
	}
	if got := complete("tools", "show", "--config", cfg, "o__n"); strings.Join(got, " ") != "o__now" {
		t.Errorf("tools show: %q", got)
	}
	if _, err := os.Stat(mark); err == nil {
		t.Error("completion started a server")
	}
}

func TestBuildInfoString(t *testing.T) {
	tests := []struct {
		in   buildInfo
		want string
	}{
		{buildInfo{Version: "(devel)", Go: "go1.26.8"}, "(devel), go1.26.8"},
		{buildInfo{Version: "v0.0.0-20261124031712-5b038af6ed25", Commit: "5b038af6", Time: "2026-11-24T03:17:12Z", Go: "go1.26.8"},
			"v0.0.0-20261124031712-5b038af6ed25 commit 5b038af6 of 2026-11-24T03:17:12Z, go1.26.8"},
		{buildInfo{Version: "v1.2.0", Commit: "abc", Modified: true, Go: "go1.26.8"}, "v1.2.0 commit abc (modified), go1.26.8"},
	}
	for _, tt := range tests {
		if got := tt.in.String(); got != tt.want {
			t.Errorf("%+v: got %q, want %q", tt.in, got, tt.want)
		}
	}
}
