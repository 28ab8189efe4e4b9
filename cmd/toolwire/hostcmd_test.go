package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/testpeers"
)

// A server that never answers initialize: the command ends within the
// server's "timeout" (plus a second), naming the server and the step, and
// saying what to try.
func TestConnectTimeout(t *testing.T) {
	cfg := writeConfig(t, map[string]string{
		"stuck": testServerJSON(t, "silent", nil, `"timeout": "2s"`),
	})
	for _, args := range [][]string{
		{"tools", "--config", cfg},
		{"call", "--config", cfg, "stuck__calculate", `{"expression": "1+1"}`},
	} {
		t.Run(args[0], func(t *testing.T) {
			r := runEnv(t, nil, "", args...)
			if r.code != 1 {
				t.Errorf("exit %d, want 1", r.code)
			}
			if r.took > 3*time.Second {
				t.Errorf("took %v; the server's timeout is 2s", r.took)
			}
			for _, want := range []string{`server "stuck": no answer to initialize within 2s`, `its "timeout" in ` + cfg, "try: run the command again with -v", `longer "timeout"`} {
				if !strings.Contains(r.stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
				}
			}
			if strings.Contains(r.stderr, "initialize: initialize") || strings.Contains(r.stderr, "no tool") {
				t.Errorf("stderr repeats the step or blames the tool name:\n%s", r.stderr)
			}
		})
	}
	// The default is stated in the help.
	r := runEnv(t, nil, "", "tools", "--help")
	if !strings.Contains(r.stdout, "each server also has 30s to start") {
		t.Errorf("tools --help does not state the connect timeout:\n%s", r.stdout)
	}
}

// call starts only the server that owns the tool, and when that server
// fails, its failure is what is reported.
func TestCallStartsOnlyTheOwner(t *testing.T) {
	dir := t.TempDir()
	markA, markB := filepath.Join(dir, "a-ran"), filepath.Join(dir, "b-ran")
	cfg := writeConfig(t, map[string]string{
		"a": testServerJSON(t, "calc", map[string]string{"TOOLWIRE_TEST_MARKER": markA}, ""),
		"b": testServerJSON(t, "calc", map[string]string{"TOOLWIRE_TEST_MARKER": markB}, ""),
	})
	r := runEnv(t, nil, "", "call", "--config", cfg, "a__calculate", `{"expression": "6*7"}`)
	if r.code != 0 || !strings.Contains(r.stdout, "42") {
		t.Fatalf("call: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(markA); err != nil {
		t.Errorf("server a did not run: %v", err)
	}
	if _, err := os.Stat(markB); err == nil {
		t.Error("server b ran, although the tool is a's")
	}

	cfg = writeConfig(t, map[string]string{
		"memory": testServerJSON(t, "silent", nil, `"timeout": "1s"`),
		"calc":   testServerJSON(t, "calc", nil, ""),
	})
	r = runEnv(t, nil, "", "call", "--config", cfg, "memory__read_graph")
	first, _, _ := strings.Cut(r.stderr, "\n")
	if r.code != 1 || !strings.Contains(first, `server "memory"`) || !strings.Contains(first, "initialize") {
		t.Errorf("exit %d; the first line should name the failing server and step:\n%s", r.code, r.stderr)
	}
}

// tools SERVER... lists only those servers.
func TestToolsOfSomeServers(t *testing.T) {
	dir := t.TempDir()
	markB := filepath.Join(dir, "b-ran")
	cfg := writeConfig(t, map[string]string{
		"a": testServerJSON(t, "calc", nil, ""),
		"b": testServerJSON(t, "calc", map[string]string{"TOOLWIRE_TEST_MARKER": markB}, ""),
	})
	r := runEnv(t, nil, "", "tools", "--config", cfg, "a")
	if r.code != 0 || !strings.Contains(r.stdout, "a__calculate") || strings.Contains(r.stdout, "b__") {
		t.Errorf("tools a: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(markB); err == nil {
		t.Error("server b ran")
	}
	r = runEnv(t, nil, "", "tools", "--config", cfg, "c")
	if r.code != 1 || !strings.Contains(r.stderr, `no server named "c"`) || !strings.Contains(r.stderr, "the servers are: a, b") {
		t.Errorf("tools c: exit %d\n%s", r.code, r.stderr)
	}
}

// Configurations as other apps write them.
func TestPastedConfigs(t *testing.T) {
	t.Run("envFile", func(t *testing.T) {
		dir := t.TempDir()
		mark := filepath.Join(dir, "from-env-file")
		if err := os.WriteFile(filepath.Join(dir, "server.env"), []byte("# set by the env file\nTOOLWIRE_TEST_MARKER="+mark+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg := writeConfig(t, map[string]string{"s": testServerJSON(t, "calc", nil, `"type": "stdio", "envFile": "`+filepath.Join(dir, "server.env")+`"`)})
		r := runEnv(t, nil, "", "tools", "--config", cfg)
		if r.code != 0 || !strings.Contains(r.stdout, "s__calculate") {
			t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		if _, err := os.Stat(mark); err != nil {
			t.Errorf("the server did not get the env file's variable: %v", err)
		}
	})
	t.Run("unknown key", func(t *testing.T) {
		cfg := writeConfig(t, map[string]string{"s": testServerJSON(t, "calc", nil, `"colour": "blue", "gallery": true`)})
		r := runEnv(t, nil, "", "tools", "--config", cfg)
		if r.code != 0 || !strings.Contains(r.stderr, `warning: config `+cfg+`, server "s": unknown key "colour" ignored`) || strings.Contains(r.stderr, "gallery") {
			t.Errorf("exit %d\n%s", r.code, r.stderr)
		}
		r = runEnv(t, nil, "", "tools", "--config", cfg, "-q")
		if r.code != 0 || r.stderr != "" {
			t.Errorf("with -q: exit %d, stderr %q", r.code, r.stderr)
		}
	})
	t.Run("sse url without type", func(t *testing.T) {
		addr := serveHTTPForTest(t)
		cfg := writeConfig(t, map[string]string{"old": `{"url": "http://` + addr + `/sse"}`})
		r := runEnv(t, nil, "", "call", "--config", cfg, "old__calculate", `{"expression": "2+3"}`)
		if r.code != 0 || !strings.Contains(r.stdout, "5") {
			t.Errorf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
	})
	t.Run("other apps' files", func(t *testing.T) {
		home := t.TempDir()
		claude := filepath.Join(home, ".config", "Claude", "claude_desktop_config.json")
		body := `{"mcpServers": {"desk": ` + testServerJSON(t, "calc", nil, "") + `}, "globalShortcut": ""}`
		if err := os.MkdirAll(filepath.Dir(claude), 0o755); err != nil {
			t.Fatal(err)
		}
		env := []string{"HOME=" + home, "XDG_CONFIG_HOME=", "TOOLWIRE_CONFIG=", "XDG_CACHE_HOME=" + t.TempDir()}
		r := runEnv(t, env, "", "tools")
		if r.code != 1 || !strings.Contains(r.stderr, filepath.Join(home, ".config", "toolwire", "mcp.json")+" does not exist") {
			t.Errorf("without any file: exit %d\n%s", r.code, r.stderr)
		}
		if err := os.WriteFile(claude, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		r = runEnv(t, env, "", "tools")
		if r.code != 0 || !strings.Contains(r.stdout, "desk__calculate") || !strings.Contains(r.stderr, "using Claude Desktop's configuration "+claude) {
			t.Errorf("with Claude Desktop's file: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
	})
}

// A server started the way most configurations start one, with npx (the
// one the test script puts beside the pinned node), in a working directory
// ("cwd") whose node_modules holds the package, so nothing is fetched.
func TestNpxServer(t *testing.T) {
	testpeers.Package(t, "@modelcontextprotocol/server-everything") // skips, or fails under TOOLWIRE_REQUIRE_NODE
	npx, err := exec.LookPath("npx")
	switch {
	case err != nil && os.Getenv("TOOLWIRE_REQUIRE_NODE") != "":
		t.Fatalf("no npx on PATH: %v", err)
	case err != nil:
		t.Skip("no npx on PATH: run ./scripts/test.sh")
	}
	if os.Getenv("TOOLWIRE_REQUIRE_NODE") != "" {
		if node, _ := exec.LookPath("node"); filepath.Dir(node) != filepath.Dir(npx) {
			t.Errorf("npx (%s) is not beside node (%s)", npx, node)
		}
	}
	cfg := writeConfig(t, map[string]string{"everything": fmt.Sprintf(`{"command": "npx", "args": ["--offline", "-y", "@modelcontextprotocol/server-everything"], "cwd": %q}`,
		filepath.Dir(testpeers.Modules(t)))})
	r := runEnv(t, nil, "", "call", "--config", cfg, "everything__echo", `{"message": "via npx"}`)
	if r.code != 0 || !strings.Contains(r.stdout, "Echo: via npx") {
		t.Errorf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
