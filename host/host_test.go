package host

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/testpeers"
	"github.com/toolwire/toolwire/tool"
)

// everythingConfig configures the reference server-everything over stdio.
func everythingConfig(t *testing.T) *Config {
	node := testpeers.Node(t)
	pkg := testpeers.Package(t, "@modelcontextprotocol/server-everything")
	cfg, err := ParseConfig("test.json", fmt.Appendf(nil, `{"mcpServers": {"everything": {"command": %q, "args": [%q, "stdio"]}}}`,
		node, filepath.Join(pkg, "dist", "index.js")), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func find(t *testing.T, tools []tool.Tool, name string) tool.Tool {
	t.Helper()
	for _, tl := range tools {
		if tl.Info().Name == name {
			return tl
		}
	}
	t.Fatalf("no tool %q", name)
	return nil
}

func TestKilledServerRestarts(t *testing.T) {
	baseGoroutines := runtime.NumGoroutine()
	h := &Host{Config: everythingConfig(t)}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	tools, err := h.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	long := find(t, tools, "everything__trigger-long-running-operation")
	echo := find(t, tools, "everything__echo")

	kids := testpeers.Children(t)
	if len(kids) != 1 {
		t.Fatalf("want one server process, have %v", kids)
	}
	errc := make(chan error, 1)
	go func() {
		_, err := long.Call(ctx, json.RawMessage(`{"duration": 30, "steps": 30}`))
		errc <- err
	}()
	time.Sleep(300 * time.Millisecond) // the call is in flight
	killed := time.Now()
	if err := syscall.Kill(kids[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errc:
		if took := time.Since(killed); took > time.Second {
			t.Errorf("the call failed %v after the kill; want within 1s", took)
		}
		if err == nil || !strings.Contains(err.Error(), "killed") || !strings.Contains(err.Error(), "everything") {
			t.Errorf("error %v should name the server and say it was killed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the call did not fail after the server was killed")
	}

	res, err := echo.Call(ctx, json.RawMessage(`{"message": "back"}`))
	if err != nil {
		t.Fatalf("call after restart: %v", err)
	}
	if got := res.Content[0].Text; !strings.Contains(got, "back") {
		t.Errorf("echo after restart = %q", got)
	}

	if err := h.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) && (len(testpeers.Children(t)) > 0 || runtime.NumGoroutine() > baseGoroutines) {
		time.Sleep(50 * time.Millisecond)
	}
	if kids := testpeers.Children(t); len(kids) > 0 {
		t.Errorf("child processes left after Close: %v", kids)
	}
	if n := runtime.NumGoroutine(); n > baseGoroutines {
		buf := make([]byte, 1<<16)
		t.Errorf("goroutines: %d after Close, %d before\n%s", n, baseGoroutines, buf[:runtime.Stack(buf, true)])
	}
}
