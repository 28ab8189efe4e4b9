package bench

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"testing"
	"time"

	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"

	mcpgoclient "github.com/mark3labs/mcp-go/client"
	mcpgotransport "github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpgoserver "github.com/mark3labs/mcp-go/server"

	"github.com/toolwire/toolwire/bench/driver"
	"github.com/toolwire/toolwire/bench/peers/gosdkpeer"
	"github.com/toolwire/toolwire/bench/peers/mcpgopeer"
)

// inProcessPeer connects a library's own client to its own server inside
// this process. connect returns a function making one add(2, 3) call
// through the client (returning the result text) and a function that tears
// everything down, leaving no goroutine behind.
type inProcessPeer struct {
	name    string
	connect func(ctx context.Context) (call func() (string, error), closeAll func(), err error)
}

// inMemoryPeers use each library's in-memory transport. To add toolwire,
// add {"toolwire", toolwireInMemory}.
var inMemoryPeers = []inProcessPeer{
	// go-sdk: mcp.NewInMemoryTransports (net.Pipe, newline-delimited JSON).
	{"gosdk", gosdkConnect(func() (gosdk.Transport, gosdk.Transport, func()) {
		st, ct := gosdk.NewInMemoryTransports()
		return st, ct, func() {}
	})},
	// mcp-go: client.NewInProcessClient (direct calls, no JSON encoding).
	{"mcpgo", mcpgoInProcess},
}

// pipePeers run each library's stdio transports over in-process io.Pipes:
// every message is JSON-encoded and decoded on both sides, as over real
// stdio, but without a process boundary.
var pipePeers = []inProcessPeer{
	{"gosdk", gosdkConnect(func() (gosdk.Transport, gosdk.Transport, func()) {
		c2sR, c2sW := io.Pipe()
		s2cR, s2cW := io.Pipe()
		return &gosdk.IOTransport{Reader: c2sR, Writer: s2cW},
			&gosdk.IOTransport{Reader: s2cR, Writer: c2sW},
			func() { c2sW.Close(); s2cW.Close(); c2sR.Close(); s2cR.Close() }
	})},
	{"mcpgo", mcpgoPipe},
}

var addArgs = map[string]any{"a": 2, "b": 3}

// gosdkConnect returns a connector running gosdkpeer's server and a go-sdk
// client over the transports made by newTransports.
func gosdkConnect(newTransports func() (server, client gosdk.Transport, closeT func())) func(ctx context.Context) (func() (string, error), func(), error) {
	return func(ctx context.Context) (func() (string, error), func(), error) {
		st, ct, closeT := newTransports()
		ss, err := gosdkpeer.NewServer().Connect(ctx, st, nil)
		if err != nil {
			closeT()
			return nil, nil, err
		}
		client := gosdk.NewClient(&gosdk.Implementation{Name: "bench", Version: "v0.0.1"}, nil)
		cs, err := client.Connect(ctx, ct, &gosdk.ClientSessionOptions{ProtocolVersion: driver.ProtocolVersion})
		if err != nil {
			ss.Close()
			closeT()
			return nil, nil, err
		}
		params := &gosdk.CallToolParams{Name: "add", Arguments: addArgs}
		call := func() (string, error) {
			return gosdkText(cs.CallTool(ctx, params))
		}
		closeAll := func() {
			cs.Close()
			ss.Wait()
			closeT()
		}
		return call, closeAll, nil
	}
}

func mcpgoCall(ctx context.Context, c *mcpgoclient.Client) func() (string, error) {
	var req mcpgo.CallToolRequest
	req.Params.Name = "add"
	req.Params.Arguments = addArgs
	return func() (string, error) {
		return mcpgoText(c.CallTool(ctx, req))
	}
}

// gosdkText returns the text of a go-sdk tool result of one text block.
func gosdkText(res *gosdk.CallToolResult, err error) (string, error) {
	if err != nil {
		return "", err
	}
	if res.IsError || len(res.Content) != 1 {
		return "", fmt.Errorf("bad result %+v", res)
	}
	tc, ok := res.Content[0].(*gosdk.TextContent)
	if !ok {
		return "", fmt.Errorf("bad content %T", res.Content[0])
	}
	return tc.Text, nil
}

// mcpgoText returns the text of an mcp-go tool result of one text block.
func mcpgoText(res *mcpgo.CallToolResult, err error) (string, error) {
	if err != nil {
		return "", err
	}
	if res.IsError || len(res.Content) != 1 {
		return "", fmt.Errorf("bad result %+v", res)
	}
	tc, ok := res.Content[0].(mcpgo.TextContent)
	if !ok {
		return "", fmt.Errorf("bad content %T", res.Content[0])
	}
	return tc.Text, nil
}

func mcpgoInitialize(ctx context.Context, c *mcpgoclient.Client) error {
	if err := c.Start(ctx); err != nil {
		return err
	}
	var init mcpgo.InitializeRequest
	init.Params.ProtocolVersion = driver.ProtocolVersion
	init.Params.ClientInfo = mcpgo.Implementation{Name: "bench", Version: "v0.0.1"}
	_, err := c.Initialize(ctx, init)
	return err
}

func mcpgoInProcess(ctx context.Context) (func() (string, error), func(), error) {
	c, err := mcpgoclient.NewInProcessClient(mcpgopeer.NewServer())
	if err != nil {
		return nil, nil, err
	}
	if err := mcpgoInitialize(ctx, c); err != nil {
		c.Close()
		return nil, nil, err
	}
	return mcpgoCall(ctx, c), func() { c.Close() }, nil
}

func mcpgoPipe(ctx context.Context) (func() (string, error), func(), error) {
	c2sR, c2sW := io.Pipe()
	s2cR, s2cW := io.Pipe()
	srvCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		mcpgoserver.NewStdioServer(mcpgopeer.NewServer()).Listen(srvCtx, c2sR, s2cW)
	}()
	c := mcpgoclient.NewClient(mcpgotransport.NewIO(s2cR, c2sW, nil))
	closeAll := func() {
		c.Close() // closes c2sW: the server sees EOF
		cancel()
		c2sR.Close()
		<-done
		s2cW.Close() // the client's reader sees EOF and exits
	}
	if err := mcpgoInitialize(ctx, c); err != nil {
		closeAll()
		return nil, nil, err
	}
	return mcpgoCall(ctx, c), closeAll, nil
}

func benchInProcess(b *testing.B, peers []inProcessPeer) {
	for _, p := range peers {
		b.Run("server="+p.name, func(b *testing.B) {
			ctx := context.Background()
			call, closeAll, err := p.connect(ctx)
			if err != nil {
				b.Fatalf("%s: %v", p.name, err)
			}
			defer closeAll()
			if got, err := call(); err != nil || got != addWant {
				b.Fatalf("%s: add(2, 3) = %q, %v; want %q", p.name, got, err, addWant)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := call(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkInMemoryCall: add(2, 3) through each library's own client and
// server connected by the library's in-memory transport. allocs/op and
// B/op count client and server together.
func BenchmarkInMemoryCall(b *testing.B) { benchInProcess(b, inMemoryPeers) }

// BenchmarkPipeCall: add(2, 3) through each library's own client and server
// connected by its stdio transports over io.Pipe (full JSON encoding both
// ways). allocs/op and B/op count client and server together.
func BenchmarkPipeCall(b *testing.B) { benchInProcess(b, pipePeers) }

// TestInProcessPeers checks the in-process set-ups and that they stop
// cleanly.
func TestInProcessPeers(t *testing.T) {
	for _, set := range []struct {
		name  string
		peers []inProcessPeer
	}{{"inmemory", inMemoryPeers}, {"pipe", pipePeers}} {
		for _, p := range set.peers {
			t.Run(set.name+"/"+p.name, func(t *testing.T) {
				before := runtime.NumGoroutine()
				call, closeAll, err := p.connect(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				for range 3 {
					if got, err := call(); err != nil || got != addWant {
						t.Errorf("add(2, 3) = %q, %v; want %q", got, err, addWant)
					}
				}
				closeAll()
				deadline := time.Now().Add(5 * time.Second)
				for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
					time.Sleep(10 * time.Millisecond)
				}
				if n := runtime.NumGoroutine(); n > before {
					buf := make([]byte, 1<<16)
					t.Errorf("%d goroutines left behind (was %d):\n%s", n-before, before, buf[:runtime.Stack(buf, true)])
				}
			})
		}
	}
}
