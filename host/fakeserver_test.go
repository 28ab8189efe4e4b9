package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/tool"
)

// The test binary doubles as a misbehaving MCP server: with
// TOOLWIRE_FAKE_SERVER set it serves over stdio in the named way.
func TestMain(m *testing.M) {
	if mode := os.Getenv("TOOLWIRE_FAKE_SERVER"); mode != "" {
		os.Exit(fakeServer(mode))
	}
	os.Exit(m.Run())
}

// newFakeServer returns the fake server of a mode: "live" (liveTools),
// "wind" (remoteWindTool), else ping and a weather tool whose result
// violates its output schema.
func newFakeServer(mode string) *mcp.Server {
	srv := &mcp.Server{Info: mcp.Implementation{Name: "fake", Version: "1"}}
	switch mode {
	case "live":
		_ = srv.AddTools(liveTools(srv)...)
	case "wind":
		_ = srv.AddTools(remoteWindTool())
	default:
		_ = srv.AddTools(
			tool.NewFunc(tool.Info{Name: "ping"}, func(context.Context, json.RawMessage) (*tool.Result, error) { return tool.Text("pong"), nil }),
			tool.NewFunc(
				tool.Info{Name: "weather", OutputSchema: json.RawMessage(`{"type":"object","properties":{"celsius":{"type":"number"}},"required":["celsius"]}`)},
				func(context.Context, json.RawMessage) (*tool.Result, error) {
					return &tool.Result{Content: []tool.Content{tool.TextContent("warm")}, StructuredContent: map[string]any{"celsius": "warm"}}, nil
				}),
		)
	}
	return srv
}

// memHost returns a host whose servers are served in memory, with no
// process: for tests that only talk to servers. Each configuration gets
// its Name from its key and, unless it has a Command or URL, the server
// of its key in servers.
func memHost(t *testing.T, servers map[string]*mcp.Server, cfgs map[string]*ServerConfig) *Host {
	t.Helper()
	for name, sc := range cfgs {
		sc.Name = name
		if sc.Command == "" && sc.URL == "" && sc.Transport == nil {
			sc.Transport = &mcp.InMemoryTransport{Server: servers[name]}
		}
	}
	h := &Host{Config: &Config{Path: "mem.json", Servers: cfgs}}
	h.Client.ProbeTimeout = 300 * time.Millisecond
	t.Cleanup(func() { h.Close() })
	return h
}

func fakeServer(mode string) int {
	srv := newFakeServer(mode)
	var out io.Writer = os.Stdout
	switch mode {
	case "silent":
		_, _ = io.Copy(io.Discard, os.Stdin) // reads everything, answers nothing
		return 0
	case "garbage":
		out = &noisyWriter{w: os.Stdout, noise: "Loading plugins... done\n"}
	case "unknown-id":
		out = &noisyWriter{w: os.Stdout, noise: `{"jsonrpc":"2.0","id":"nobody-asked","result":{}}` + "\n"}
	}
	if err := srv.ServeStream(context.Background(), os.Stdin, out); err != nil {
		return 1
	}
	return 0
}

// noisyWriter writes a line of noise before every message.
type noisyWriter struct {
	w     io.Writer
	noise string
}

func (n *noisyWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(n.w, n.noise); err != nil {
		return 0, err
	}
	return n.w.Write(p)
}

func fakeHost(t *testing.T, mode string) (*Host, *bytes.Buffer) {
	t.Helper()
	return fakeHostWith(t, mode, "")
}

// fakeHostWith is fakeHost with more keys for the server's configuration
// (JSON members, e.g. `"timeout": "1s"`).
func fakeHostWith(t *testing.T, mode, keys string) (*Host, *bytes.Buffer) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if keys != "" {
		keys = ", " + keys
	}
	cfg, err := ParseConfig("fake.json", fmt.Appendf(nil, `{"mcpServers": {"fake": {"command": %q, "env": {"TOOLWIRE_FAKE_SERVER": %q}%s}}}`, self, mode, keys),
		func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	h := &Host{Config: cfg}
	var stderr bytes.Buffer
	h.Stderr = &stderr
	h.Client.ProbeTimeout = 300 * time.Millisecond
	t.Cleanup(func() { h.Close() })
	return h, &stderr
}

func TestMisbehavingServers(t *testing.T) {
	t.Run("garbage on stdout", func(t *testing.T) {
		h, _ := fakeHost(t, "garbage")
		reg := registry(t, h)
		if res := call(t, reg, "fake__ping", `{}`); res.IsError || res.Content[0].Text != "pong" {
			t.Errorf("ping = %+v", res)
		}
	})
	t.Run("unknown response ids", func(t *testing.T) {
		h, _ := fakeHost(t, "unknown-id")
		reg := registry(t, h)
		if res := call(t, reg, "fake__ping", `{}`); res.IsError || res.Content[0].Text != "pong" {
			t.Errorf("ping = %+v", res)
		}
	})
	t.Run("never answers initialize", func(t *testing.T) {
		h, _ := fakeHost(t, "silent")
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		start := time.Now()
		_, err := h.Tools(ctx)
		if err == nil || !strings.Contains(err.Error(), `"fake"`) || !strings.Contains(err.Error(), "initialize") {
			t.Errorf("error = %v; want one naming the server and the handshake", err)
		}
		if took := time.Since(start); took > 10*time.Second { // a hang check, not a speed test
			t.Errorf("took %v", took)
		}
	})
	t.Run("timeout applies to the handshake", func(t *testing.T) {
		h, _ := fakeHostWith(t, "silent", `"timeout": "1s"`)
		h.Client.ProbeTimeout = 0 // the default, cut to fit the timeout
		var events []State
		h.Observe = func(e Event) { events = append(events, e.State) }
		start := time.Now()
		_, err := h.Tools(context.Background())
		took := time.Since(start)
		var ce *ConnectError
		if !errors.As(err, &ce) || ce.Server != "fake" || ce.Step != mcp.MethodInitialize || !ce.TimedOut {
			t.Fatalf("error = %#v; want a ConnectError for the initialize step that timed out", err)
		}
		msg := err.Error()
		for _, want := range []string{`server "fake"`, "no answer to initialize within 1s", `its "timeout" in fake.json`} {
			if !strings.Contains(msg, want) {
				t.Errorf("error %q lacks %q", msg, want)
			}
		}
		if strings.Contains(msg, "initialize: initialize") {
			t.Errorf("error %q names the step twice", msg)
		}
		if took > 3*time.Second { // the configured 1s, plus closing the process
			t.Errorf("took %v with a 1s timeout", took)
		}
		if fmt.Sprint(events) != "[connecting failed]" {
			t.Errorf("events = %v", events)
		}
	})
	t.Run("result violates outputSchema", func(t *testing.T) {
		h := memHost(t, map[string]*mcp.Server{"fake": newFakeServer("plain")}, map[string]*ServerConfig{"fake": {}})
		reg := registry(t, h)
		res := call(t, reg, "fake__weather", `{}`)
		if !res.IsError || !strings.Contains(res.Content[0].Text, "outputSchema") || !strings.Contains(res.Content[0].Text, "celsius") {
			t.Errorf("result = %+v; want an error naming the output schema and the bad field", res)
		}
	})
}

// dottedServer is a minimal legacy MCP server of its own, for a tool name
// that toolwire's server refuses but MCP allows: files.read/v2.
func dottedServer(r io.Reader, w io.Writer) int {
	dec := json.NewDecoder(r)
	enc := json.NewEncoder(w)
	for {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name      string         `json:"name"`
				Arguments map[string]any `json:"arguments"`
			} `json:"params"`
		}
		if err := dec.Decode(&req); err != nil {
			return 0
		}
		if req.ID == nil {
			continue // a notification
		}
		var result any
		switch req.Method {
		case "initialize":
			result = map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{"tools": map[string]any{}}, "serverInfo": map[string]any{"name": "dotted", "version": "1"}}
		case "tools/list":
			result = map[string]any{"tools": []any{map[string]any{"name": "files.read/v2", "inputSchema": map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}}}}}
		case "tools/call":
			result = map[string]any{"content": []any{map[string]any{"type": "text", "text": fmt.Sprintf("%s read %v", req.Params.Name, req.Params.Arguments["path"])}}}
		default:
			_ = enc.Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": map[string]any{"code": -32601, "message": "method not found"}})
			continue
		}
		_ = enc.Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
	}
}

// pipeTransport is a test's own mcp.ClientTransport: each Connect runs
// serve on a goroutine over a pair of in-memory pipes of newline-delimited
// JSON, for a server that is not an mcp.Server (dottedServer).
type pipeTransport struct {
	serve func(r io.Reader, w io.Writer) int
}

func (p pipeTransport) Connect(context.Context) (mcp.ClientConn, error) {
	fromServer, toClient := io.Pipe()
	fromClient, toServer := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.serve(fromClient, toClient)
		toClient.Close()
	}()
	return &pipeConn{r: fromServer, w: toServer, lr: jsonrpc.NewLineReader(fromServer, 0), lw: jsonrpc.NewLineWriter(toServer), done: done}, nil
}

type pipeConn struct {
	r    *io.PipeReader
	w    *io.PipeWriter
	lr   *jsonrpc.LineReader
	lw   *jsonrpc.LineWriter
	done chan struct{}
}

func (c *pipeConn) Read(ctx context.Context) (*jsonrpc.Message, error) {
	defer context.AfterFunc(ctx, func() { c.r.Close() })()
	line, err := c.lr.ReadLine()
	if err != nil {
		return nil, err
	}
	return c.lr.Decode(line)
}

func (c *pipeConn) Write(_ context.Context, m *jsonrpc.Message) error { return c.lw.Write(m) }

func (c *pipeConn) Close() error {
	c.w.Close() // the server reads the end of its input and returns
	<-c.done
	c.r.Close()
	return nil
}
