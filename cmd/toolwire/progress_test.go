package main

import (
	"bytes"
	"io"
	"os/exec"
	"strings"
	"testing"

	"github.com/creack/pty"
)

// On a terminal, a slow server shows a progress line (its name, state and
// time) while it starts; piped, the same command shows nothing extra.
func TestProgress(t *testing.T) {
	cfg := writeConfig(t, map[string]string{
		"slow": testServerJSON(t, "calc", map[string]string{"TOOLWIRE_TEST_DELAY": "1500ms"}, ""),
	})
	args := []string{"call", "--config", cfg, "slow__calculate", `{"expression": "6*7"}`}

	out := onTerminal(t, args...)
	for _, want := range []string{"server slow  connecting", "server slow  ready", "call slow__calculate", "42"} {
		if !strings.Contains(out, want) {
			t.Errorf("the terminal did not show %q:\n%q", want, out)
		}
	}
	if !strings.ContainsAny(out, spinner) {
		t.Errorf("no spinner frame on the terminal:\n%q", out)
	}

	r := runEnv(t, nil, "", args...)
	if r.code != 0 || !strings.Contains(r.stdout, "42") {
		t.Fatalf("piped: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r.stderr != "" {
		t.Errorf("piped, stderr should be empty, got %q", r.stderr)
	}
	if out := onTerminal(t, append(args, "--quiet")...); strings.Contains(out, "connecting") || !strings.Contains(out, "42") {
		t.Errorf("with --quiet, the terminal showed:\n%q", out)
	}
}

// onTerminal runs the binary with a pseudo-terminal as its stdin, stdout
// and stderr, and returns all it wrote.
func onTerminal(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(build(t), args...)
	tty, err := pty.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	var screen bytes.Buffer
	_, _ = io.Copy(&screen, tty) // until the command exits (EIO)
	tty.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("on a terminal: %v\n%s", err, screen.String())
	}
	return screen.String()
}
