// Package serve holds the command-line contract shared by every benchmark
// server program in bench/servers:
//
//   - no flags: serve MCP over stdio (newline-delimited JSON on stdin/stdout);
//   - -http ADDR: listen on ADDR (port 0 allowed), print exactly
//     "LISTENING <bound host:port>" on stdout once the listener is bound,
//     and serve Streamable HTTP at path /mcp until killed.
//
// A new server (for example servers/toolwire) may use this package or
// implement the same contract by hand.
//
// Profiling: with MCPBENCH_PROFILE=DIR in the environment, a server built on
// Main writes a CPU profile and an allocation profile of itself to
// DIR/PROG-PID.cpu.pprof and DIR/PROG-PID.allocs.pprof, covering its first
// MCPBENCH_PROFILE_SECONDS seconds (default 10) or its whole life if it
// returns sooner. The benchmarks kill servers with SIGKILL, so give the
// benchmark a -benchtime longer than that. See bench/README.md.
package serve

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/toolwire/toolwire/mcp"
)

// Path is the HTTP path the Streamable HTTP endpoint is mounted at.
const Path = "/mcp"

// Main parses the flags and runs the server. stdio serves MCP over
// os.Stdin/os.Stdout until the input is closed or ctx is cancelled;
// newHandler returns the Streamable HTTP handler to mount at Path, served
// by net/http's http.Server as mcp.NewHTTPServer configures it for
// `toolwire serve --http` (its read, write and idle timeouts and header
// bound). Every server measured runs on that same HTTP server, so that
// what differs between them is the library.
func Main(stdio func(ctx context.Context) error, newHandler func() http.Handler) {
	httpAddr := flag.String("http", "", "serve Streamable HTTP at `addr` (path "+Path+") instead of stdio")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix(os.Args[0] + ": ")
	stopProfile := startProfile()
	defer stopProfile()

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()

	if *httpAddr == "" {
		if err := stdio(ctx); err != nil && !errors.Is(err, context.Canceled) {
			log.Fatal(err)
		}
		return
	}

	ln, err := net.Listen("tcp", *httpAddr)
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle(Path, newHandler())
	// os.Stdout is unbuffered: the line is visible to the harness at once.
	fmt.Printf("LISTENING %s\n", ln.Addr())
	if err := mcp.RunHTTPServer(ctx, mcp.NewHTTPServer(mux, nil), ln); err != nil {
		log.Fatal(err)
	}
}

// startProfile starts profiling as MCPBENCH_PROFILE asks; the returned
// function (also run by a timer) writes the profiles once.
func startProfile() func() {
	dir := os.Getenv("MCPBENCH_PROFILE")
	if dir == "" {
		return func() {}
	}
	secs := 10.0
	if v := os.Getenv("MCPBENCH_PROFILE_SECONDS"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f <= 0 {
			log.Fatalf("bad MCPBENCH_PROFILE_SECONDS %q", v)
		}
		secs = f
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		log.Fatal(err)
	}
	base := filepath.Join(dir, filepath.Base(os.Args[0])+"-"+strconv.Itoa(os.Getpid()))
	runtime.MemProfileRate = 16 << 10
	cpu, err := os.Create(base + ".cpu.pprof")
	if err != nil {
		log.Fatal(err)
	}
	if err := pprof.StartCPUProfile(cpu); err != nil {
		log.Fatal(err)
	}
	var once sync.Once
	stop := func() {
		once.Do(func() {
			pprof.StopCPUProfile()
			cpu.Close()
			f, err := os.Create(base + ".allocs.pprof")
			if err != nil {
				log.Print(err)
				return
			}
			defer f.Close()
			if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
				log.Print(err)
			}
		})
	}
	time.AfterFunc(time.Duration(secs*float64(time.Second)), stop)
	return stop
}
