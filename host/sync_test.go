package host

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/testpeers"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/tool"
)

// liveTools are the tools of the "live" fake server: grow adds a tool
// named extra and shrink removes it (each sends list_changed), pid tells
// the server's process id.
func liveTools(srv *mcp.Server) []tool.Tool {
	text := func(name string, fn func() string) tool.Tool {
		return tool.Must(tool.New(name, name, func(context.Context, struct{}) (string, error) { return fn(), nil }))
	}
	extra := text("extra", func() string { return "extra" })
	return []tool.Tool{
		text("ping", func() string { return "pong" }),
		text("pid", func() string { return fmt.Sprint(os.Getpid()) }),
		text("grow", func() string { _ = srv.AddTools(extra); return "grown" }),
		text("shrink", func() string { srv.RemoveTools("extra"); return "shrunk" }),
	}
}

// toolNames returns the names of the registry's tools.
func toolNames(reg *tool.Registry) []string {
	var names []string
	for _, t := range reg.Tools() {
		names = append(names, t.Info().Name)
	}
	return names
}

// waitFor polls cond until it holds, failing the test after 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// TestSyncLiveSource: a registry kept by Host.Sync follows a server whose
// tools change (list_changed), with no call failing meanwhile, and a
// killed server's tools leave the registry, saying why, and come back
// after its restart.
func TestSyncLiveSource(t *testing.T) {
	h, _ := fakeHost(t, "live")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var reg tool.Registry
	var mu sync.Mutex
	var history [][]string // the tool names after each change
	reg.OnChange(func() {
		mu.Lock()
		history = append(history, toolNames(&reg))
		mu.Unlock()
	})
	if err := h.Sync(ctx, &reg); err != nil {
		t.Fatal(err)
	}
	if got, want := toolNames(&reg), []string{"fake__grow", "fake__pid", "fake__ping", "fake__shrink"}; !slices.Equal(got, want) {
		t.Fatalf("tools %v, want %v", got, want)
	}

	// Calls go on while the list changes; none may fail.
	var calls, failed atomic.Int64
	stop := make(chan struct{})
	var callers sync.WaitGroup
	for range 2 {
		callers.Add(1)
		go func() {
			defer callers.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				res, err := reg.Call(ctx, "fake__ping", nil)
				calls.Add(1)
				if err != nil || res.IsError {
					failed.Add(1)
					t.Errorf("ping during list changes: %v %v", res, err)
				}
			}
		}()
	}
	has := func(name string) func() bool {
		return func() bool { _, ok := reg.Lookup(name); return ok }
	}
	for range 3 {
		if _, err := reg.Call(ctx, "fake__grow", nil); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "fake__extra to appear", has("fake__extra"))
		if res, err := reg.Call(ctx, "fake__extra", nil); err != nil || res.Content[0].Text != "extra" {
			t.Fatalf("extra: %v %v", res, err)
		}
		if _, err := reg.Call(ctx, "fake__shrink", nil); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "fake__extra to go", func() bool { return !has("fake__extra")() })
	}
	close(stop)
	callers.Wait()
	t.Logf("%d calls during 6 list changes, %d failed", calls.Load(), failed.Load())

	// Kill the server: its tools go, with the reason, and come back.
	res, err := reg.Call(ctx, "fake__pid", nil)
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	fmt.Sscan(res.Content[0].Text, &pid)
	if kids := testpeers.Children(t); !slices.Contains(kids, pid) {
		t.Fatalf("pid %d is not a child of the test (%v)", pid, kids)
	}
	mu.Lock()
	before := len(history)
	mu.Unlock()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the tools to come back after the restart", func() bool {
		mu.Lock()
		defer mu.Unlock()
		gone := false
		for _, names := range history[before:] {
			if len(names) == 0 {
				gone = true
			} else if gone && slices.Contains(names, "fake__ping") {
				return true
			}
		}
		return false
	})
	res, err = reg.Call(ctx, "fake__pid", nil)
	if err != nil || res.Content[0].Text == fmt.Sprint(pid) {
		t.Fatalf("after the restart: pid %v, %v; want a new process", res, err)
	}
}

// TestSyncGoneToolSaysWhy: a call to a tool whose server went away names
// the server and what happened.
func TestSyncGoneToolSaysWhy(t *testing.T) {
	var reg tool.Registry
	if err := reg.SetSource("srv", []tool.Tool{tool.Must(tool.New("srv__t", "t", func(context.Context, struct{}) (string, error) { return "", nil }))}); err != nil {
		t.Fatal(err)
	}
	reg.RemoveSource("srv", errors.New(`MCP server "x" was killed by signal killed`))
	_, err := reg.Call(context.Background(), "srv__t", nil)
	var unknown *tool.UnknownToolError
	if !errors.As(err, &unknown) || !strings.Contains(err.Error(), "killed") {
		t.Errorf("error %v, want an UnknownToolError that says the server was killed", err)
	}
}
