package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
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
