package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"

	mcpgoclient "github.com/mark3labs/mcp-go/client"
	mcpgotransport "github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"

	twmcp "github.com/toolwire/toolwire/mcp"

	"github.com/toolwire/toolwire/bench/driver"
)

// Client-side benchmarks: each library's MCP client, through its public
// CallTool API, against a server program of this module (servers/NAME)
// that the client spawns itself (stdio) or that the harness starts with
// -http (Streamable HTTP). The server runs in a child process, so B/op and
// allocs/op are the client's.

// toolCall is one tools/call, with its arguments prepared once in the form
// each client API takes: toolwire a JSON object (json.RawMessage), go-sdk
// and mcp-go a map[string]any (their documented usage).
type toolCall struct {
	name string
	args map[string]any
	raw  json.RawMessage
	want string
}

func newToolCall(name string, args map[string]any, want string) *toolCall {
	raw, err := json.Marshal(args)
	if err != nil {
		panic(err)
	}
	return &toolCall{name: name, args: args, raw: raw, want: want}
}

var (
	clientEcho      = newToolCall("echo", map[string]any{"text": echoText}, echoText)
	clientAdd       = newToolCall("add", map[string]any{"a": 2, "b": 3}, addWant)
	clientEchoLarge = newToolCall("echo", map[string]any{"text": largeSizes[0].text}, largeSizes[0].text) // 100 KiB
)

// clientSession is one client library's session with a server.
type clientSession interface {
	// call makes one tools/call and returns the text of its single text
	// content item, failing on an isError result.
	call(ctx context.Context, c *toolCall) (string, error)
	// protocolVersion is the revision the session speaks.
	protocolVersion() string
	// close ends the session (and, for stdio, waits for the server process
	// to exit).
	close() error
}

// clientSpec is one client library (and mode) under test.
type clientSpec struct {
	name string
	// version is the protocol revision the session must end up speaking.
	version string
	// stdio spawns cmd as a child process and connects to it.
	stdio func(ctx context.Context, cmd []string, stderr *cappedBuffer) (clientSession, error)
	// http connects to a Streamable HTTP endpoint.
	http func(ctx context.Context, url string) (clientSession, error)
}

// clients: library defaults except the pinned protocol version (as the
// in-process benchmarks and the raw driver: 2025-11-25), plus toolwire
// with ProtocolVersion left empty (it probes server/discover and, against
// the toolwire server, speaks 2026-07-28).
var clients = []clientSpec{
	{"gosdk", driver.ProtocolVersion, gosdkStdio, gosdkHTTP},
	{"mcpgo", driver.ProtocolVersion, mcpgoStdio, mcpgoHTTP},
	{"toolwire", driver.ProtocolVersion, toolwireStdio(driver.ProtocolVersion), toolwireHTTP(driver.ProtocolVersion)},
	{"toolwire-modern", twmcp.LatestVersion, toolwireStdio(""), toolwireHTTP("")},
}

// clientCombos are measured in this order by every client benchmark: every
// client against the toolwire server, then each peer against its own
// server (the "pairs"; toolwire's pair is client=toolwire/server=toolwire).
var clientCombos = []struct{ client, server string }{
	{"gosdk", "toolwire"},
	{"mcpgo", "toolwire"},
	{"toolwire", "toolwire"},
	{"toolwire-modern", "toolwire"},
	{"gosdk", "gosdk"},
	{"mcpgo", "mcpgo"},
}

func findClient(name string) (clientSpec, bool) {
	for _, c := range clients {
		if c.name == name {
			return c, true
		}
	}
	return clientSpec{}, false
}

func findServer(name string) (serverSpec, bool) {
	for _, s := range servers {
		if s.Name == name {
			return s, true
		}
	}
	return serverSpec{}, false
}

// forEachCombo runs f as the sub-benchmark client=C/server=S for every
// combination in clientCombos, in order, under a watchdog that f must tell
// of its progress.
func forEachCombo(b *testing.B, f func(b *testing.B, c clientSpec, s serverSpec, w *watchdog)) {
	for _, cc := range clientCombos {
		c, okc := findClient(cc.client)
		s, oks := findServer(cc.server)
		if !okc || !oks {
			continue
		}
		b.Run("client="+c.name+"/server="+s.Name, func(b *testing.B) {
			w := startWatchdog(b.Name())
			defer w.close()
			f(b, c, s, w)
		})
	}
}

// --- toolwire ---

type toolwireSession struct{ s *twmcp.ClientSession }

func toolwireClient(version string) *twmcp.Client {
	return &twmcp.Client{Info: twmcp.Implementation{Name: "bench", Version: "v0.0.1"}, ProtocolVersion: version}
}

func toolwireStdio(version string) func(context.Context, []string, *cappedBuffer) (clientSession, error) {
	return func(ctx context.Context, cmd []string, stderr *cappedBuffer) (clientSession, error) {
		s, err := toolwireClient(version).Connect(ctx, &twmcp.CommandTransport{Command: cmd[0], Args: cmd[1:], Stderr: stderr})
		if err != nil {
			return nil, err
		}
		return toolwireSession{s}, nil
	}
}

func toolwireHTTP(version string) func(context.Context, string) (clientSession, error) {
	return func(ctx context.Context, url string) (clientSession, error) {
		s, err := toolwireClient(version).Connect(ctx, &twmcp.HTTPTransport{URL: url})
		if err != nil {
			return nil, err
		}
		return toolwireSession{s}, nil
	}
}

func (t toolwireSession) call(ctx context.Context, c *toolCall) (string, error) {
	res, err := t.s.CallTool(ctx, c.name, c.raw)
	if err != nil {
		return "", err
	}
	if res.IsError || len(res.Content) != 1 || res.Content[0].Type != "text" {
		return "", fmt.Errorf("bad result %+v", res)
	}
	return res.Content[0].Text, nil
}

func (t toolwireSession) protocolVersion() string { return t.s.ProtocolVersion() }
func (t toolwireSession) close() error            { return t.s.Close() }

// --- go-sdk ---

type gosdkSession struct{ cs *gosdk.ClientSession }

func gosdkConnectClient(ctx context.Context, t gosdk.Transport) (clientSession, error) {
	client := gosdk.NewClient(&gosdk.Implementation{Name: "bench", Version: "v0.0.1"}, nil)
	cs, err := client.Connect(ctx, t, &gosdk.ClientSessionOptions{ProtocolVersion: driver.ProtocolVersion})
	if err != nil {
		return nil, err
	}
	return gosdkSession{cs}, nil
}

func gosdkStdio(ctx context.Context, cmd []string, stderr *cappedBuffer) (clientSession, error) {
	c := exec.Command(cmd[0], cmd[1:]...)
	c.Stderr = stderr
	return gosdkConnectClient(ctx, &gosdk.CommandTransport{Command: c})
}

func gosdkHTTP(ctx context.Context, url string) (clientSession, error) {
	return gosdkConnectClient(ctx, &gosdk.StreamableClientTransport{Endpoint: url})
}

func (g gosdkSession) call(ctx context.Context, c *toolCall) (string, error) {
	return gosdkText(g.cs.CallTool(ctx, &gosdk.CallToolParams{Name: c.name, Arguments: c.args}))
}

func (g gosdkSession) protocolVersion() string { return g.cs.InitializeResult().ProtocolVersion }
func (g gosdkSession) close() error            { return g.cs.Close() }

// --- mcp-go ---

type mcpgoSession struct {
	c       *mcpgoclient.Client
	version string
}

func mcpgoConnectClient(ctx context.Context, c *mcpgoclient.Client) (clientSession, error) {
	if err := c.Start(ctx); err != nil { // idempotent for stdio, which starts on creation
		c.Close()
		return nil, err
	}
	var init mcpgo.InitializeRequest
	init.Params.ProtocolVersion = driver.ProtocolVersion
	init.Params.ClientInfo = mcpgo.Implementation{Name: "bench", Version: "v0.0.1"}
	res, err := c.Initialize(ctx, init)
	if err != nil {
		c.Close()
		return nil, err
	}
	return &mcpgoSession{c: c, version: res.ProtocolVersion}, nil
}

func mcpgoStdio(ctx context.Context, cmd []string, stderr *cappedBuffer) (clientSession, error) {
	c, err := mcpgoclient.NewStdioMCPClientWithOptions(cmd[0], nil, cmd[1:],
		mcpgotransport.WithCommandStderrWriter(stderr))
	if err != nil {
		return nil, err
	}
	return mcpgoConnectClient(ctx, c)
}

func mcpgoHTTP(ctx context.Context, url string) (clientSession, error) {
	c, err := mcpgoclient.NewStreamableHttpClient(url)
	if err != nil {
		return nil, err
	}
	return mcpgoConnectClient(ctx, c)
}

func (m *mcpgoSession) call(ctx context.Context, c *toolCall) (string, error) {
	var req mcpgo.CallToolRequest
	req.Params.Name = c.name
	req.Params.Arguments = c.args
	return mcpgoText(m.c.CallTool(ctx, req))
}

func (m *mcpgoSession) protocolVersion() string { return m.version }
func (m *mcpgoSession) close() error            { return m.c.Close() }

// --- harness ---

// connectClientStdio has client c spawn server s and checks the session's
// protocol version. The caller must close the session.
func connectClientStdio(tb testing.TB, c clientSpec, s serverSpec) (clientSession, *cappedBuffer) {
	tb.Helper()
	stderr := newCappedBuffer()
	sess, err := c.stdio(context.Background(), s.Cmd, stderr)
	if err != nil {
		tb.Fatalf("client %s, server %s: connect over stdio: %v\nstderr:\n%s", c.name, s.Name, err, stderr)
	}
	if v := sess.protocolVersion(); v != c.version {
		sess.close()
		tb.Fatalf("client %s, server %s: protocol version %q, want %q", c.name, s.Name, v, c.version)
	}
	return sess, stderr
}

// connectClientHTTP starts server s with -http and connects client c to it.
// The caller must close the session, then stop the server.
func connectClientHTTP(tb testing.TB, c clientSpec, s serverSpec) (clientSession, *httpServer) {
	tb.Helper()
	srv := startHTTPServer(tb, s)
	sess, err := c.http(context.Background(), srv.URL)
	if err != nil {
		srv.stop()
		tb.Fatalf("client %s, server %s: connect over HTTP: %v\nstderr:\n%s", c.name, s.Name, err, srv.stderr)
	}
	if v := sess.protocolVersion(); v != c.version {
		sess.close()
		srv.stop()
		tb.Fatalf("client %s, server %s: protocol version %q, want %q", c.name, s.Name, v, c.version)
	}
	return sess, srv
}

func checkClientCall(tb testing.TB, sess clientSession, c *toolCall) {
	tb.Helper()
	got, err := sess.call(context.Background(), c)
	if err != nil {
		tb.Fatalf("%s: %v", c.name, err)
	}
	if got != c.want {
		tb.Fatalf("%s: got %.100q (%d bytes), want %.100q (%d bytes)", c.name, got, len(got), c.want, len(c.want))
	}
}

// stallTimeout is how long a client benchmark may make no progress before
// its watchdog steps in.
const stallTimeout = 30 * time.Second

// watchdog unsticks a benchmark whose connection or call never returns (a
// lost request or response): the calls go out with context.Background(), as
// most client code does, and go test's -timeout does not apply to
// benchmarks, so nothing else would. When there has been no progress
// (connected, a call completed) for stallTimeout, it prints this process's
// goroutines to stderr and sends SIGQUIT to this process's child processes
// (the server under test; Go servers then print their goroutines on their
// stderr, which the benchmark logs, and exit), so the pending call fails
// instead of hanging.
type watchdog struct {
	calls atomic.Int64
	stop  chan struct{}
	done  chan struct{}
}

func startWatchdog(name string) *watchdog {
	w := &watchdog{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		tick := time.NewTicker(stallTimeout / 10)
		defer tick.Stop()
		last, since := w.calls.Load(), time.Now()
		for {
			select {
			case <-w.stop:
				return
			case <-tick.C:
			}
			if n := w.calls.Load(); n != last {
				last, since = n, time.Now()
				continue
			}
			if time.Since(since) < stallTimeout {
				continue
			}
			buf := make([]byte, 1<<20)
			fmt.Fprintf(os.Stderr, "%s: no progress for %s; goroutines:\n%s\n", name, stallTimeout, buf[:runtime.Stack(buf, true)])
			for _, pid := range childPIDs() {
				fmt.Fprintf(os.Stderr, "%s: sending SIGQUIT to server pid %d\n", name, pid)
				syscall.Kill(pid, syscall.SIGQUIT)
			}
			since = time.Now()
		}
	}()
	return w
}

// progress records that the benchmark moved on.
func (w *watchdog) progress() { w.calls.Add(1) }

func (w *watchdog) close() {
	close(w.stop)
	<-w.done
}

// clientSequential times sequential calls through sess, recording
// latencies; allocations are the client's (the server is another process).
func clientSequential(b *testing.B, sess clientSession, c *toolCall, w *watchdog) {
	ctx := context.Background()
	lat := make([]time.Duration, 0, 1<<14)
	b.ReportAllocs()
	for b.Loop() {
		t0 := time.Now()
		if _, err := sess.call(ctx, c); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
		w.progress()
	}
	reportLatency(b, lat)
}

func benchClientStdio(b *testing.B, call *toolCall, bytes int) {
	forEachCombo(b, func(b *testing.B, c clientSpec, s serverSpec, w *watchdog) {
		sess, stderr := connectClientStdio(b, c, s)
		w.progress()
		defer func() {
			if err := sess.close(); err != nil && !b.Failed() {
				b.Errorf("close: %v\nstderr:\n%s", err, stderr)
			}
			if b.Failed() {
				b.Logf("server stderr:\n%s", stderr)
			}
		}()
		checkClientCall(b, sess, call)
		b.SetBytes(int64(bytes))
		clientSequential(b, sess, call, w)
	})
}

func benchClientHTTP(b *testing.B, call *toolCall, bytes int) {
	forEachCombo(b, func(b *testing.B, c clientSpec, s serverSpec, w *watchdog) {
		sess, srv := connectClientHTTP(b, c, s)
		w.progress()
		defer srv.stop()
		defer func() {
			if err := sess.close(); err != nil && !b.Failed() {
				b.Errorf("close: %v", err)
			}
			if b.Failed() {
				b.Logf("server stderr:\n%s", srv.stderr)
			}
		}()
		checkClientCall(b, sess, call)
		b.SetBytes(int64(bytes))
		clientSequential(b, sess, call, w)
	})
}

// BenchmarkClientStdioEcho: client C spawns server S and makes sequential
// echo("hello") calls through its CallTool API.
func BenchmarkClientStdioEcho(b *testing.B) { benchClientStdio(b, clientEcho, 0) }

// BenchmarkClientStdioEchoLarge: like BenchmarkClientStdioEcho with 100 KiB
// of text (which comes back too).
func BenchmarkClientStdioEchoLarge(b *testing.B) {
	b.Run("size="+largeSizes[0].name, func(b *testing.B) {
		benchClientStdio(b, clientEchoLarge, len(clientEchoLarge.want))
	})
}

// BenchmarkClientHTTPEcho: client C on one Streamable HTTP session with
// server S (started by the harness with -http), sequential echo("hello").
func BenchmarkClientHTTPEcho(b *testing.B) { benchClientHTTP(b, clientEcho, 0) }

// childProcesses lists this process's children (zombies included) as
// "pid (comm) state".
func childProcesses() []string {
	kids, _ := children()
	return kids
}

// childPIDs returns the process IDs of this process's live children.
func childPIDs() []int {
	_, pids := children()
	return pids
}

func children() (desc []string, live []int) {
	self := strconv.Itoa(os.Getpid())
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...; comm may contain spaces.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) >= 2 && f[1] == self {
			desc = append(desc, s[:i+1]+" "+f[0])
			if f[0] != "Z" {
				live = append(live, pid)
			}
		}
	}
	return desc, live
}

// checkCleanup waits until no child process and no goroutine beyond before
// remain.
func checkCleanup(t *testing.T, before int) {
	t.Helper()
	http.DefaultTransport.(*http.Transport).CloseIdleConnections() // every client here uses it
	deadline := time.Now().Add(5 * time.Second)
	for (len(childProcesses()) > 0 || runtime.NumGoroutine() > before) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
		http.DefaultTransport.(*http.Transport).CloseIdleConnections()
	}
	if kids := childProcesses(); len(kids) > 0 {
		t.Errorf("child processes left behind: %v", kids)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<16)
		t.Errorf("%d goroutines left behind (was %d):\n%s", n-before, before, buf[:runtime.Stack(buf, true)])
	}
}

// TestClients checks every client/server combination of the client
// benchmarks over both transports (echo, add, a 100 KiB echo), and that
// closing leaves no process or goroutine behind.
func TestClients(t *testing.T) {
	calls := []*toolCall{clientEcho, clientAdd, clientEchoLarge, clientEcho}
	for _, cc := range clientCombos {
		c, okc := findClient(cc.client)
		s, oks := findServer(cc.server)
		if !okc || !oks {
			t.Fatalf("no client %q or server %q", cc.client, cc.server)
		}
		t.Run("client="+c.name+"/server="+s.Name+"/stdio", func(t *testing.T) {
			before := runtime.NumGoroutine()
			sess, stderr := connectClientStdio(t, c, s)
			for _, call := range calls {
				got, err := sess.call(context.Background(), call)
				if err != nil || got != call.want {
					t.Errorf("%s: got %.40q (%d bytes), %v; want %.40q (%d bytes)", call.name, got, len(got), err, call.want, len(call.want))
				}
			}
			if err := sess.close(); err != nil {
				t.Errorf("close: %v\nstderr:\n%s", err, stderr)
			}
			checkCleanup(t, before)
		})
		t.Run("client="+c.name+"/server="+s.Name+"/http", func(t *testing.T) {
			before := runtime.NumGoroutine()
			sess, srv := connectClientHTTP(t, c, s)
			for _, call := range calls {
				got, err := sess.call(context.Background(), call)
				if err != nil || got != call.want {
					t.Errorf("%s: got %.40q (%d bytes), %v; want %.40q (%d bytes)", call.name, got, len(got), err, call.want, len(call.want))
				}
			}
			if err := sess.close(); err != nil {
				t.Errorf("close: %v\nstderr:\n%s", err, srv.stderr)
			}
			srv.stop()
			checkCleanup(t, before)
		})
	}
}
