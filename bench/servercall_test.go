package bench

import (
	"context"
	"io"
	"runtime"
	"testing"
	"time"

	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"

	mcpgoserver "github.com/mark3labs/mcp-go/server"

	"github.com/toolwire/toolwire/bench/driver"
	"github.com/toolwire/toolwire/bench/peers/gosdkpeer"
	"github.com/toolwire/toolwire/bench/peers/mcpgopeer"
	"github.com/toolwire/toolwire/bench/peers/toolwirepeer"
)

// pipeServer is a library's server run in this process on its stream
// (stdio-style, newline-delimited JSON) transport over io.Pipes. serve
// reads requests from r and writes responses to w until r ends or ctx is
// cancelled.
type pipeServer struct {
	name  string
	serve func(ctx context.Context, r *io.PipeReader, w *io.PipeWriter) error
}

// pipeServers are measured by BenchmarkServerCall, with the same raw
// client (driver.Stream) for all, so that B/op and allocs/op are the
// server's (the client allocates nothing per call).
var pipeServers = []pipeServer{
	// go-sdk: Server.Run on an IOTransport (what StdioTransport wraps).
	{"gosdk", func(ctx context.Context, r *io.PipeReader, w *io.PipeWriter) error {
		return gosdkpeer.NewServer().Run(ctx, &gosdk.IOTransport{Reader: r, Writer: w})
	}},
	// mcp-go: StdioServer.Listen (what ServeStdio calls with os.Stdin/Stdout).
	{"mcpgo", func(ctx context.Context, r *io.PipeReader, w *io.PipeWriter) error {
		return mcpgoserver.NewStdioServer(mcpgopeer.NewServer()).Listen(ctx, r, w)
	}},
	// toolwire: Server.ServeStream (what ServeStdio calls with os.Stdin/Stdout).
	{"toolwire", func(ctx context.Context, r *io.PipeReader, w *io.PipeWriter) error {
		return toolwirepeer.NewServer().ServeStream(ctx, r, w)
	}},
}

// connectPipe starts p's server on a pair of io.Pipes and initializes a raw
// driver session with it. closeAll stops every goroutine involved.
func connectPipe(ctx context.Context, p pipeServer) (conn *driver.Stream, closeAll func(), err error) {
	c2sR, c2sW := io.Pipe()
	s2cR, s2cW := io.Pipe()
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.serve(ctx, c2sR, s2cW)
	}()
	closeAll = func() {
		c2sW.Close() // the server sees the end of its input
		drained := make(chan struct{})
		go func() { // never leave the server blocked writing
			io.Copy(io.Discard, s2cR)
			close(drained)
		}()
		cancel()
		c2sR.Close()
		<-done
		s2cW.Close()
		<-drained
	}
	conn, err = driver.NewStream(s2cR, c2sW)
	if err != nil {
		closeAll()
		return nil, nil, err
	}
	return conn, closeAll, nil
}

// BenchmarkServerCall: one add(2, 3) tools/call pushed through each
// library's server, in this process, over io.Pipes, by a raw client that
// only writes the request line and reads the response line. This is the
// like-for-like allocation comparison: allocs/op and B/op are the
// server's (plus a negligible share for the pipes), whatever client the
// library has or lacks.
func BenchmarkServerCall(b *testing.B) {
	for _, p := range pipeServers {
		b.Run("server="+p.name, func(b *testing.B) {
			conn, closeAll, err := connectPipe(context.Background(), p)
			if err != nil {
				b.Fatalf("%s: %v", p.name, err)
			}
			defer closeAll()
			check(b, p.name, conn, addSmall, addWant)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := conn.Call(addSmall); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestPipeServers checks the in-process servers of BenchmarkServerCall and
// that they stop cleanly.
func TestPipeServers(t *testing.T) {
	for _, p := range pipeServers {
		t.Run(p.name, func(t *testing.T) {
			before := runtime.NumGoroutine()
			conn, closeAll, err := connectPipe(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			for range 3 {
				check(t, p.name, conn, addSmall, addWant)
			}
			check(t, p.name, conn, echoSmall, echoText)
			check(t, p.name, conn, largeCalls[0], largeSizes[0].text)
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
