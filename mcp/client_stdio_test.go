package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/toolwire/toolwire/mcp"
)

// TestMain serves MCP on stdio when this test binary is started as a
// stdio server by the tests below.
func TestMain(m *testing.M) {
	if os.Getenv("TOOLWIRE_TEST_STDIO_SERVER") == "1" {
		serveTestStdio()
		return
	}
	os.Exit(m.Run())
}

// serveTestStdio serves "sleep" {us, tag} → tag after us microseconds,
// and "notify_later" {ms} → "ok" at once, then a tools/list_changed
// notification ms milliseconds later.
func serveTestStdio() {
	srv := &mcp.Server{Info: mcp.Implementation{Name: "stdio-test", Version: "1"}}
	later := textTool("notify_later", func(_ context.Context, args map[string]any) (string, error) {
		ms, _ := args["ms"].(float64)
		time.AfterFunc(time.Duration(ms)*time.Millisecond, func() { srv.NotifyListChanged(mcp.NotificationToolsListChanged) })
		return "ok", nil
	})
	if err := srv.AddTools(sleepTool(), later); err != nil {
		panic(err)
	}
	if err := srv.ServeStdio(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// connectTestStdio starts this test binary as a stdio server.
func connectTestStdio(t *testing.T, c *mcp.Client) *mcp.ClientSession {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := c.Connect(ctx, &mcp.CommandTransport{Command: exe, Env: []string{"TOOLWIRE_TEST_STDIO_SERVER=1"}, Stderr: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestStdioClientConcurrent runs calls from many goroutines at once, some
// of them cut short by their deadline while they may be the one reading
// the server's output. Every other call gets its own result; afterwards a
// call still works, and Close leaves no goroutine behind.
func TestStdioClientConcurrent(t *testing.T) {
	before := runtime.NumGoroutine()
	s := connectTestStdio(t, &mcp.Client{Info: mcp.Implementation{Name: "t", Version: "1"}, ProtocolVersion: mcp.Version20251125})
	var wg sync.WaitGroup
	errs := make(chan error, 1000)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 40 {
				tag := fmt.Sprintf("g%d-%d", g, i)
				us := (g*7 + i*13) % 3000
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				cut := i%5 == 4 // a deadline the call cannot meet
				if cut {
					cancel()
					ctx, cancel = context.WithTimeout(context.Background(), 500*time.Microsecond)
					us = 20000
				}
				args, _ := json.Marshal(map[string]any{"us": us, "tag": tag})
				res, err := s.CallTool(ctx, "sleep", args)
				cancel()
				switch {
				case cut && !errors.Is(err, context.DeadlineExceeded):
					errs <- fmt.Errorf("%s: got %v, %v; want a deadline error", tag, res, err)
				case !cut && err != nil:
					errs <- fmt.Errorf("%s: %w", tag, err)
				case !cut && (len(res.Content) != 1 || res.Content[0].Text != tag):
					errs <- fmt.Errorf("%s: got %+v", tag, res)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if res, err := s.CallTool(ctx, "sleep", json.RawMessage(`{"us":0,"tag":"last"}`)); err != nil || res.Content[0].Text != "last" {
		t.Errorf("call after the others: %v, %v", res, err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	eventually(t, "the client's goroutines end", func() bool { return runtime.NumGoroutine() <= before })
}

// TestStdioClientIdleNotifications shows that what a server sends between
// calls reaches the client without another call to carry it.
func TestStdioClientIdleNotifications(t *testing.T) {
	got := make(chan string, 4)
	c := &mcp.Client{Info: mcp.Implementation{Name: "t", Version: "1"}, ProtocolVersion: mcp.Version20251125,
		Notify: func(method string, _ json.RawMessage) { got <- method }}
	s := connectTestStdio(t, c)
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := s.CallTool(ctx, "notify_later", json.RawMessage(`{"ms":100}`)); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-got:
		if m != mcp.NotificationToolsListChanged {
			t.Errorf("notification %q, want %q", m, mcp.NotificationToolsListChanged)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the list_changed notification sent 100 ms after the call never arrived")
	}
}
