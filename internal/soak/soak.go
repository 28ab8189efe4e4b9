// Package soak runs many MCP clients of both eras against one toolwire
// HTTP server, in this process, over a real loopback listener, and reports
// what was lost, mismatched or failed, and whether goroutines and memory
// came back to where they were once the clients left. The main module's
// tests run a reduced soak; bench/ runs the full one (see bench/README.md).
package soak

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolwire/toolwire/internal/procmem"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/tool"
)

// Config sizes a soak run.
type Config struct {
	// Legacy and Modern are the clients of each era, all connected at once:
	// legacy ones (protocol 2025-11-25) hold an HTTP session each, modern
	// ones (2026-07-28) are stateless.
	Legacy, Modern int
	// Calls is the number of tools/call requests, shared among the clients.
	Calls int
	// LargeEvery makes every LargeEvery-th call carry LargeSize bytes of
	// text each way; the others carry a few dozen.
	LargeEvery, LargeSize int
	// Timeout bounds the whole run, settling included.
	Timeout time.Duration
	// RSSSlack is how far above its level before the run the RSS may
	// settle after it (0 means DefaultRSSSlack; < 0 leaves it unchecked,
	// as under the race detector, whose shadow memory stays).
	RSSSlack int64
}

// Report is what a run found.
type Report struct {
	Calls      int // calls answered with the text they sent
	Errors     int // calls or connections that failed
	Mismatched int // calls answered with another call's text, or none
	FirstError string
	Elapsed    time.Duration // from the first connection to the last call

	// Goroutines and resident memory (after the runtime returned freed
	// memory to the OS) with the server up and no client, before the run
	// and once the clients left and the server settled; and the peak RSS
	// of the run.
	GoroutinesBefore, GoroutinesAfter int
	RSSBefore, RSSAfter, RSSPeak      int64
	// HeapBefore and HeapAfter are the bytes of live heap objects.
	HeapBefore, HeapAfter uint64
}

// String summarizes the report on one line.
func (r *Report) String() string {
	return fmt.Sprintf("%d calls in %v (%.0f/s), %d errors, %d mismatched; goroutines %d → %d; RSS %d MiB → peak %d MiB → %d MiB; live heap %d MiB → %d MiB",
		r.Calls, r.Elapsed.Round(time.Millisecond), float64(r.Calls)/r.Elapsed.Seconds(), r.Errors, r.Mismatched,
		r.GoroutinesBefore, r.GoroutinesAfter, r.RSSBefore>>20, r.RSSPeak>>20, r.RSSAfter>>20, r.HeapBefore>>20, r.HeapAfter>>20)
}

// DefaultRSSSlack is how far above its level before the run the RSS may
// settle after it: the heap the runtime keeps for its next cycles, and
// pages the allocator and the kernel do not give back at once.
const DefaultRSSSlack = 48 << 20

// Check returns an error listing what in r falls short of a clean run of
// cfg: every call answered with its own text, no error, the goroutines
// back to their number before the run and the RSS within cfg.RSSSlack of
// it.
func (r *Report) Check(cfg Config) error {
	var errs []error
	if r.Calls != cfg.Calls {
		errs = append(errs, fmt.Errorf("%d of %d calls answered correctly", r.Calls, cfg.Calls))
	}
	if r.Errors > 0 {
		errs = append(errs, fmt.Errorf("%d errors, the first: %s", r.Errors, r.FirstError))
	}
	if r.Mismatched > 0 {
		errs = append(errs, fmt.Errorf("%d calls answered with another text", r.Mismatched))
	}
	if r.GoroutinesAfter > r.GoroutinesBefore {
		errs = append(errs, fmt.Errorf("%d goroutines after the run, %d before", r.GoroutinesAfter, r.GoroutinesBefore))
	}
	slack := cfg.RSSSlack
	if slack == 0 {
		slack = DefaultRSSSlack
	}
	if slack > 0 && r.RSSAfter > r.RSSBefore+slack {
		errs = append(errs, fmt.Errorf("RSS %d MiB after the run, %d MiB before (more than %d MiB above)", r.RSSAfter>>20, r.RSSBefore>>20, slack>>20))
	}
	return errors.Join(errs...)
}

type echoArgs struct {
	Text string `json:"text" description:"the text to echo back"`
}

// Run serves an echo tool on a fresh server and runs cfg's clients
// against it until every call is answered or ctx or cfg.Timeout ends. The
// error reports a run that could not be made (no listener, no memory
// figures); what went wrong with calls is in the Report.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	srv := &mcp.Server{Info: mcp.Implementation{Name: "soak", Version: "1"}}
	echo := tool.Must(tool.New("echo", "Echo the text back", func(_ context.Context, in echoArgs) (string, error) { return in.Text, nil }))
	if err := srv.AddTools(echo); err != nil {
		return nil, err
	}
	h := &mcp.HTTPHandler{Server: srv}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("soak: %w", err)
	}
	hs := mcp.NewHTTPServer(h, nil)
	go hs.Serve(ln)
	defer hs.Close()
	defer h.Close()

	rep := &Report{}
	if rep.GoroutinesBefore, rep.RSSBefore, rep.HeapBefore, err = settled(ctx, -1); err != nil {
		return nil, err
	}
	if err := procmem.ResetPeak(); err != nil {
		return nil, fmt.Errorf("soak: %w", err)
	}
	rep.run(ctx, cfg, "http://"+ln.Addr().String())
	if rep.RSSPeak, err = procmem.PeakRSS(); err != nil {
		return nil, err
	}
	rep.GoroutinesAfter, rep.RSSAfter, rep.HeapAfter, err = settled(ctx, rep.GoroutinesBefore)
	return rep, err
}

// run connects the clients, shares the calls among them, and closes them.
func (r *Report) run(ctx context.Context, cfg Config, url string) {
	// One transport for all: a connection per client at most, kept.
	tr := &http.Transport{MaxIdleConnsPerHost: 2*(cfg.Legacy+cfg.Modern) + 16, IdleConnTimeout: 30 * time.Second}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr}
	var (
		mu     sync.Mutex
		next   atomic.Int64
		wg     sync.WaitGroup
		start  = time.Now()
		failed = func(err error) {
			mu.Lock()
			defer mu.Unlock()
			r.Errors++
			if r.FirstError == "" {
				r.FirstError = err.Error()
			}
		}
	)
	large := strings.Repeat("x", cfg.LargeSize)
	client := func(version string) {
		defer wg.Done()
		c := &mcp.Client{Info: mcp.Implementation{Name: "soak", Version: "1"}, ProtocolVersion: version, CallTimeout: cfg.Timeout}
		s, err := c.Connect(ctx, &mcp.HTTPTransport{URL: url, HTTPClient: hc})
		if err != nil {
			failed(fmt.Errorf("connecting (%s): %w", version, err))
			return
		}
		defer s.Close()
		for {
			i := int(next.Add(1)) - 1
			if i >= cfg.Calls || ctx.Err() != nil {
				return
			}
			text := "call " + strconv.Itoa(i) + " from a " + version + " client"
			if cfg.LargeEvery > 0 && i%cfg.LargeEvery == 0 {
				text += large
			}
			args, _ := json.Marshal(echoArgs{Text: text})
			res, err := s.CallTool(ctx, "echo", args)
			switch {
			case err != nil:
				failed(fmt.Errorf("call %d (%s): %w", i, version, err))
			case res.IsError || len(res.Content) != 1 || res.Content[0].Text != text:
				mu.Lock()
				r.Mismatched++
				mu.Unlock()
			default:
				mu.Lock()
				r.Calls++
				mu.Unlock()
			}
		}
	}
	wg.Add(cfg.Legacy + cfg.Modern)
	for i := range max(cfg.Legacy, cfg.Modern) { // the eras interleaved
		if i < cfg.Legacy {
			go client(mcp.LatestLegacyVersion)
		}
		if i < cfg.Modern {
			go client(mcp.LatestVersion)
		}
	}
	wg.Wait()
	r.Elapsed = time.Since(start)
}

// settleWait bounds the wait for goroutines to come back to a baseline: the
// server's idle workers end after a few seconds.
const settleWait = 20 * time.Second

// settled waits until no more than want goroutines run (want < 0: until
// their number stops changing), returns the memory the runtime holds to
// the OS, and reports the goroutines, the RSS and the live heap.
func settled(ctx context.Context, want int) (int, int64, uint64, error) {
	deadline := time.Now().Add(settleWait)
	n := runtime.NumGoroutine()
	for time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(100 * time.Millisecond)
		m := runtime.NumGoroutine()
		if want >= 0 && m <= want || want < 0 && m == n {
			n = m
			break
		}
		n = m
	}
	runtime.GC() // sync.Pool's victims survive one collection
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	rss, err := procmem.RSS()
	return n, rss, ms.HeapAlloc, err
}
