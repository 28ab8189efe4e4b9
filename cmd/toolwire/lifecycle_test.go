package main

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestDataToolsetClosed: every command that opens the data toolset
// closes it when it ends, however it ends (its input closed, SIGTERM,
// SIGINT): no toolwire-data-* temporary directory stays behind.
func TestDataToolsetClosed(t *testing.T) {
	seed, err := filepath.Abs(filepath.Join("..", "..", "examples", "seed000.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		// stop ends the command once it runs; nil: it ends by itself.
		stop func(*exec.Cmd, io.Closer)
		// ready is a line the command prints once it serves; "": the
		// temporary directory exists.
		ready string
	}{
		{name: "workflow validate", args: []string{"workflow", "validate", "--toolsets=data", seed}},
		{name: "serve data, stdin closed", args: []string{"serve", "data"},
			stop: func(_ *exec.Cmd, stdin io.Closer) { stdin.Close() }},
		{name: "serve data, SIGTERM", args: []string{"serve", "data"},
			stop: func(cmd *exec.Cmd, _ io.Closer) { _ = cmd.Process.Signal(syscall.SIGTERM) }},
		{name: "serve data --http, SIGTERM", args: []string{"serve", "data", "--http", "127.0.0.1:0"}, ready: "toolwire: serving",
			stop: func(cmd *exec.Cmd, _ io.Closer) { _ = cmd.Process.Signal(syscall.SIGTERM) }},
		{name: "serve data --http, SIGINT", args: []string{"serve", "data", "--http", "127.0.0.1:0"}, ready: "toolwire: serving",
			stop: func(cmd *exec.Cmd, _ io.Closer) { _ = cmd.Process.Signal(syscall.SIGINT) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			tmp := t.TempDir()
			cmd := exec.Command(build(t), c.args...)
			cmd.Dir = t.TempDir()
			cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr syncBuffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = cmd.Process.Kill() }()
			lines := make(chan string, 100)
			go func() {
				sc := bufio.NewScanner(stdout)
				for sc.Scan() {
					lines <- sc.Text()
				}
				close(lines)
			}()
			if c.stop != nil {
				waitForTemp(t, tmp)
				if c.ready != "" {
					if line := <-lines; !strings.HasPrefix(line, c.ready) {
						t.Fatalf("the server said %q\n%s", line, stderr.String())
					}
				}
				c.stop(cmd, stdin)
			}
			err = cmd.Wait()
			if c.stop == nil && err != nil {
				t.Fatalf("%s: %v\n%s", c.name, err, stderr.String())
			}
			if left, _ := filepath.Glob(filepath.Join(tmp, "toolwire-data-*")); len(left) > 0 {
				t.Errorf("%s left %v (exit: %v)\n%s", c.name, left, err, stderr.String())
			}
		})
	}
}

// waitForTemp waits until a toolset's temporary directory is in dir: at
// most 60 s.
func waitForTemp(t *testing.T, dir string) {
	t.Helper()
	for range 600 {
		if m, _ := filepath.Glob(filepath.Join(dir, "toolwire-data-*")); len(m) > 0 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("the command made no temporary directory for the data toolset")
}
