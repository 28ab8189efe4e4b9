package mcp_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/tool"
)

// holdTool is a tool whose calls run until released, counting how many
// run at once.
type holdTool struct {
	mu            sync.Mutex
	running, peak int
	release       chan struct{}
}

func (h *holdTool) tool() tool.Tool {
	return tool.NewFunc(tool.Info{Name: "hold", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, json.RawMessage) (*tool.Result, error) {
			h.mu.Lock()
			h.running++
			h.peak = max(h.peak, h.running)
			h.mu.Unlock()
			<-h.release
			h.mu.Lock()
			h.running--
			h.mu.Unlock()
			return tool.Text("released"), nil
		})
}

func (h *holdTool) counts() (running, peak int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.running, h.peak
}

// waitingForSlot reports whether a goroutine waits in conn.serve for a
// request slot (the only select of conn.serve).
func waitingForSlot() bool {
	for _, stack := range goroutineStacks() {
		header, rest, _ := strings.Cut(stack, "\n")
		if strings.Contains(header, "[select") && strings.HasPrefix(rest, "github.com/toolwire/toolwire/mcp.(*conn).serve(") {
			return true
		}
	}
	return false
}

// TestSessionConcurrencyLimit opens a legacy HTTP+SSE session on the
// server `toolwire serve --http` runs, sends it one call more than
// DefaultMaxConcurrentRequests of a tool that runs until released, and
// checks that the last one waits for a slot while the others run, then
// runs once they are released: every call answered, never more than the
// limit running at once.
func TestSessionConcurrencyLimit(t *testing.T) {
	hold := &holdTool{release: make(chan struct{})}
	var once sync.Once
	unblock := func() { once.Do(func() { close(hold.release) }) }
	defer unblock()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs, end := mcp.NewHTTPEndpoints(newServer(t, hold.tool()), mcp.HTTPConfig{})
	go hs.Serve(ln)
	defer end()
	defer hs.Close()
	base := "http://" + ln.Addr().String()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/sse", nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	events := bufio.NewScanner(resp.Body)
	events.Buffer(nil, 1<<20)
	var endpoint string
	for endpoint == "" && events.Scan() {
		if e, ok := strings.CutPrefix(events.Text(), "data: "); ok {
			endpoint = e
		}
	}
	if endpoint == "" {
		t.Fatalf("the SSE stream named no endpoint: %v", events.Err())
	}
	answered := make(chan string, 2*mcp.DefaultMaxConcurrentRequests)
	go func() { // the ids of the responses, as they come
		for events.Scan() {
			var m struct {
				ID json.RawMessage `json:"id"`
			}
			if data, ok := strings.CutPrefix(events.Text(), "data: "); ok && json.Unmarshal([]byte(data), &m) == nil {
				answered <- string(m.ID)
			}
		}
		close(answered)
	}()
	send := func(body string) {
		t.Helper()
		resp, err := http.Post(base+endpoint, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("POST %s: HTTP %d, want 202", body, resp.StatusCode)
		}
	}
	waitAnswer := func(want string) {
		t.Helper()
		select {
		case id := <-answered:
			if id != want {
				t.Fatalf("answer to request %s, want %s", id, want)
			}
		case <-time.After(waitTimeout):
			t.Fatalf("no answer to request %s within %v", want, waitTimeout)
		}
	}
	send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	waitAnswer("0")
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	limit := mcp.DefaultMaxConcurrentRequests
	call := func(id int) {
		send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"hold","arguments":{}}}`, id))
	}
	for id := 1; id <= limit; id++ {
		call(id)
	}
	eventually(t, fmt.Sprintf("%d calls running", limit), func() bool { r, _ := hold.counts(); return r == limit })
	call(limit + 1) // 202: the server has it
	eventually(t, "the last call waiting for a slot, or running", func() bool {
		r, _ := hold.counts()
		return r > limit || waitingForSlot()
	})
	if r, _ := hold.counts(); r != limit {
		t.Fatalf("%d calls running at once in one session, want at most %d", r, limit)
	}
	unblock()
	for range limit + 1 {
		select {
		case _, ok := <-answered:
			if !ok {
				t.Fatal("the SSE stream ended before every call was answered")
			}
		case <-time.After(waitTimeout):
			t.Fatalf("not every call answered within %v of their release", waitTimeout)
		}
	}
	if _, peak := hold.counts(); peak != limit {
		t.Errorf("%d calls ran at once, want %d", peak, limit)
	}
}

// TestDeeplyNestedRequest sends a request of the largest size allowed
// (16 MiB), nested as deep as it can be, to the server `toolwire serve
// --http` runs, in a process of its own (this test binary, started again
// as that server), and checks that it is refused with 400 naming the
// depth, and that the process is still up and serving. Without a bound
// on nesting, reading the request recurses until the goroutine's stack
// is exhausted, which kills the process. The child's stack is bounded at
// 64 MiB, so that it crashes before it costs the machine a gigabyte.
func TestDeeplyNestedRequest(t *testing.T) {
	if os.Getenv("TOOLWIRE_TEST_HTTP_SERVER") == "1" {
		serveHTTPChild(t)
		return
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^TestDeeplyNestedRequest$")
	cmd.Env = append(os.Environ(), "TOOLWIRE_TEST_HTTP_SERVER=1", "GORACE=atexit_sleep_ms=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	defer func() {
		stdin.Close() // the child's cue to stop
		select {
		case <-exited:
		case <-time.After(waitTimeout):
			_ = cmd.Process.Kill()
		}
	}()
	out := bufio.NewScanner(stdout)
	var addr string
	for addr == "" && out.Scan() {
		if a, ok := strings.CutPrefix(out.Text(), "serving on "); ok {
			addr = a
		}
	}
	go func() {
		_, _ = io.Copy(io.Discard, stdout)
		exited <- cmd.Wait()
	}()
	if addr == "" {
		t.Fatalf("the server process did not start: %s", stderr.String())
	}

	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":`
	body += strings.Repeat("[", jsonrpcLimit-len(body))
	post := func(body string) (int, string, error) {
		req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range modernHeaders("tools/list", "") {
			req.Header.Set(k, v)
		}
		resp, err := (&http.Client{Timeout: attackWait}).Do(req)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), err
	}
	crashed := func() string {
		select {
		case err := <-exited:
			exited <- err
			s := stderr.String()
			if i := strings.Index(s, "fatal error"); i >= 0 {
				s = s[i:min(len(s), i+300)]
			}
			return fmt.Sprintf("; the server process exited (%v): %s", err, s)
		case <-time.After(time.Second):
			return ""
		}
	}
	status, answer, err := post(body)
	if err != nil || status != http.StatusBadRequest || !strings.Contains(answer, "exceeded max depth") {
		t.Fatalf("a request of %d bytes, nearly all [: HTTP %d %.200q, %v; want 400 naming the depth%s", len(body), status, answer, err, crashed())
	}
	if status, answer, err := post(listBody); err != nil || status != http.StatusOK || !strings.Contains(answer, `"tools"`) {
		t.Fatalf("the next request: HTTP %d %.200q, %v; want 200 with the tools%s", status, answer, err, crashed())
	}
}

// serveHTTPChild is TestDeeplyNestedRequest's server process: it serves
// the echo tool on the server `toolwire serve --http` runs, prints
// "serving on ADDR", and stops when its stdin closes.
func serveHTTPChild(t *testing.T) {
	debug.SetMaxStack(64 << 20)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs, end := mcp.NewHTTPEndpoints(newServer(t, echoTool()), mcp.HTTPConfig{})
	defer end()
	defer hs.Close()
	go hs.Serve(ln)
	fmt.Printf("serving on %s\n", ln.Addr())
	_, _ = io.Copy(io.Discard, os.Stdin)
}
