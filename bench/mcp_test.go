package bench

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolwire/toolwire/bench/driver"
)

// The calls every server is measured with. They are marshalled once.
var (
	echoText  = "hello"
	echoSmall = mustToolCall("echo", map[string]any{"text": echoText})
	addSmall  = mustToolCall("add", map[string]any{"a": 2, "b": 3})
	addWant   = "5"

	largeSizes = []struct {
		name string
		text string
	}{
		{"100KiB", payload(100 << 10)},
		{"1MiB", payload(1 << 20)},
	}
	largeCalls = func() []*driver.Call {
		var cs []*driver.Call
		for _, s := range largeSizes {
			cs = append(cs, mustToolCall("echo", map[string]any{"text": s.text}))
		}
		return cs
	}()

	// httpClients are the concurrency levels of BenchmarkHTTPCalls.
	httpClients = []int{8, 64}
)

func mustToolCall(name string, args map[string]any) *driver.Call {
	c, err := driver.NewToolCall(name, args)
	if err != nil {
		panic(err)
	}
	return c
}

// payload returns n deterministic ASCII letters (nothing JSON must escape).
func payload(n int) string {
	const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, n)
	for i := range b {
		b[i] = letters[r.IntN(len(letters))]
	}
	return string(b)
}

// reportLatency reports the p50 and p99 of the recorded call latencies.
func reportLatency(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	pct := func(p float64) float64 {
		i := int(p*float64(len(lat))+0.999999) - 1 // nearest rank
		i = max(0, min(i, len(lat)-1))
		return float64(lat[i]) / float64(time.Microsecond)
	}
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
}

// forEachServer runs f as the sub-benchmark server=NAME for every server in
// turn, so one -bench run interleaves the servers benchmark by benchmark.
func forEachServer(b *testing.B, f func(b *testing.B, s serverSpec)) {
	for _, s := range servers {
		b.Run("server="+s.Name, func(b *testing.B) { f(b, s) })
	}
}

// sequential times one client calling conn in a loop, recording latencies.
func sequential(b *testing.B, conn driver.Conn, call *driver.Call) {
	lat := make([]time.Duration, 0, 1<<14)
	for b.Loop() {
		t0 := time.Now()
		if _, err := conn.Call(call); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	reportLatency(b, lat)
}

// BenchmarkStdioEcho: one client, sequential echo("hello") round trips over
// the server's stdin/stdout.
func BenchmarkStdioEcho(b *testing.B) {
	forEachServer(b, func(b *testing.B, s serverSpec) {
		conn, _ := stdioServer(b, s)
		defer conn.Kill()
		check(b, s.Name, conn, echoSmall, echoText)
		sequential(b, conn, echoSmall)
		reportPeakRSS(b, conn.Pid())
	})
}

// BenchmarkStdioEchoLarge: like BenchmarkStdioEcho with 100 KiB and 1 MiB of
// text (the same text comes back, so twice that crosses the pipes).
func BenchmarkStdioEchoLarge(b *testing.B) {
	for i, size := range largeSizes {
		b.Run("size="+size.name, func(b *testing.B) {
			forEachServer(b, func(b *testing.B, s serverSpec) {
				conn, _ := stdioServer(b, s)
				defer conn.Kill()
				check(b, s.Name, conn, largeCalls[i], size.text)
				b.SetBytes(int64(len(size.text)))
				sequential(b, conn, largeCalls[i])
				reportPeakRSS(b, conn.Pid())
			})
		})
	}
}

// httpSession starts s over HTTP and opens one session.
func httpSession(b *testing.B, s serverSpec) (*httpServer, *driver.HTTPClient, *driver.HTTPSession) {
	b.Helper()
	srv := startHTTPServer(b, s)
	hc, err := driver.NewHTTPClient(srv.URL)
	if err != nil {
		srv.stop()
		b.Fatal(err)
	}
	sess, err := hc.Connect()
	if err != nil {
		srv.stop()
		b.Fatalf("%s: %v\nstderr:\n%s", s.Name, err, srv.stderr)
	}
	return srv, hc, sess
}

// BenchmarkHTTPEcho: one Streamable HTTP session, sequential echo("hello").
func BenchmarkHTTPEcho(b *testing.B) {
	forEachServer(b, func(b *testing.B, s serverSpec) {
		srv, hc, sess := httpSession(b, s)
		defer srv.stop()
		defer hc.CloseIdleConnections()
		defer sess.Close()
		check(b, s.Name, sess, echoSmall, echoText)
		sequential(b, sess, echoSmall)
		reportPeakRSS(b, srv.cmd.Process.Pid)
	})
}

// BenchmarkHTTPEchoLarge: one Streamable HTTP session, sequential echo of
// 100 KiB and 1 MiB of text.
func BenchmarkHTTPEchoLarge(b *testing.B) {
	for i, size := range largeSizes {
		b.Run("size="+size.name, func(b *testing.B) {
			forEachServer(b, func(b *testing.B, s serverSpec) {
				srv, hc, sess := httpSession(b, s)
				defer srv.stop()
				defer hc.CloseIdleConnections()
				defer sess.Close()
				check(b, s.Name, sess, largeCalls[i], size.text)
				b.SetBytes(int64(len(size.text)))
				sequential(b, sess, largeCalls[i])
				reportPeakRSS(b, srv.cmd.Process.Pid)
			})
		})
	}
}

// BenchmarkHTTPCalls: N concurrent clients, each with its own session and
// keep-alive connection, calling add(2, 3) as fast as they can; b.N calls in
// total are shared among them. Reports calls/s (ns/op is wall time per call).
func BenchmarkHTTPCalls(b *testing.B) {
	for _, clients := range httpClients {
		b.Run("clients="+strconv.Itoa(clients), func(b *testing.B) {
			forEachServer(b, func(b *testing.B, s serverSpec) {
				benchHTTPConcurrent(b, s, clients, addSmall, addWant)
			})
		})
	}
}

func benchHTTPConcurrent(b *testing.B, s serverSpec, clients int, call *driver.Call, want string) {
	srv, hc, sessions := connectHTTPClients(b, s, clients, call, want)
	defer srv.stop()
	defer hc.CloseIdleConnections()
	defer closeAll(sessions)

	b.ResetTimer()
	cpu := startCPU(srv.cmd.Process.Pid)
	start := time.Now()
	lats, err := callConcurrently(sessions, b.N, call)
	elapsed := time.Since(start)
	cpu.report(b, b.N)
	b.StopTimer()
	if err != nil {
		b.Fatalf("%s: %v\nstderr:\n%s", s.Name, err, srv.stderr)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "calls/s")
	reportLatency(b, slices.Concat(lats...))
	reportPeakRSS(b, srv.cmd.Process.Pid)
}

// connectHTTPClients starts server s on HTTP and opens clients sessions
// to it, each on its own keep-alive connection, checking call on each.
// The caller stops the server, the client and the sessions.
func connectHTTPClients(b *testing.B, s serverSpec, clients int, call *driver.Call, want string) (*httpServer, *driver.HTTPClient, []*driver.HTTPSession) {
	srv := startHTTPServer(b, s)
	hc, err := driver.NewHTTPClient(srv.URL)
	if err != nil {
		srv.stop()
		b.Fatal(err)
	}
	sessions := make([]*driver.HTTPSession, 0, clients)
	for range clients {
		sess, err := hc.Connect()
		if err != nil {
			closeAll(sessions)
			srv.stop()
			b.Fatalf("%s: %v\nstderr:\n%s", s.Name, err, srv.stderr)
		}
		sessions = append(sessions, sess)
		check(b, s.Name, sess, call, want)
	}
	return srv, hc, sessions
}

func closeAll(sessions []*driver.HTTPSession) {
	for _, sess := range sessions {
		sess.Close()
	}
}

// callConcurrently makes n calls in all, each session calling as fast as
// it can on its own goroutine, and returns each session's latencies. The
// first error stops every session.
func callConcurrently(sessions []*driver.HTTPSession, n int, call *driver.Call) ([][]time.Duration, error) {
	var (
		next    atomic.Int64
		errOnce sync.Once
		callErr error
		wg      sync.WaitGroup
		lats    = make([][]time.Duration, len(sessions))
	)
	for i, sess := range sessions {
		wg.Go(func() {
			lat := make([]time.Duration, 0, n/len(sessions)+1)
			for next.Add(1) <= int64(n) {
				t0 := time.Now()
				if _, err := sess.Call(call); err != nil {
					errOnce.Do(func() { callErr = err })
					next.Store(1 << 62) // stop the others
					return
				}
				lat = append(lat, time.Since(t0))
			}
			lats[i] = lat
		})
	}
	wg.Wait()
	return lats, callErr
}

// TestServers checks every server's tools over both transports, so a broken
// server fails fast instead of producing numbers.
func TestServers(t *testing.T) {
	add01 := mustToolCall("add", map[string]any{"a": 0.1, "b": 0.2})
	addNeg := mustToolCall("add", map[string]any{"a": -1.5, "b": 1e21})
	cases := []struct {
		name string
		call *driver.Call
		want string
	}{
		{"echo", echoSmall, echoText},
		{"add", addSmall, addWant},
		{"add-frac", add01, "0.30000000000000004"},
		{"add-big", addNeg, "1000000000000000000000"},
		{"echo-100KiB", largeCalls[0], largeSizes[0].text},
		{"echo-1MiB", largeCalls[1], largeSizes[1].text},
	}
	// Invalid arguments must be refused: a JSON-RPC error or an isError
	// result, as the library chooses.
	bad := []struct {
		name string
		call *driver.Call
	}{
		{"echo-missing-text", mustToolCall("echo", map[string]any{})},
		{"add-missing-b", mustToolCall("add", map[string]any{"a": 1})},
	}
	checkRefused := func(t *testing.T, conn driver.Conn) {
		for _, c := range bad {
			res, err := conn.Call(c.call)
			var rpcErr *driver.RPCError
			if errors.As(err, &rpcErr) {
				continue
			}
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
				continue
			}
			var r struct {
				IsError bool `json:"isError"`
			}
			if err := json.Unmarshal(res, &r); err != nil || !r.IsError {
				t.Errorf("%s: not refused: %.200s", c.name, res)
			}
		}
	}
	for _, s := range servers {
		t.Run(s.Name+"/stdio", func(t *testing.T) {
			conn, stderr := stdioServer(t, s)
			defer conn.Kill()
			for _, c := range cases {
				res, err := conn.Call(c.call)
				if err == nil {
					err = driver.CheckText(res, c.want)
				}
				if err != nil {
					t.Errorf("%s: %v\nstderr:\n%s", c.name, err, stderr)
				}
			}
			checkRefused(t, conn)
			if _, ok := peakRSSKiB(conn.Pid()); !ok {
				t.Errorf("cannot read VmHWM of pid %d", conn.Pid())
			}
			if err := conn.Close(); err != nil {
				t.Errorf("close: %v", err)
			}
		})
		t.Run(s.Name+"/http", func(t *testing.T) {
			srv := startHTTPServer(t, s)
			defer srv.stop()
			hc, err := driver.NewHTTPClient(srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			defer hc.CloseIdleConnections()
			for range 2 { // two sessions, one after the other
				sess, err := hc.Connect()
				if err != nil {
					t.Fatalf("%v\nstderr:\n%s", err, srv.stderr)
				}
				for _, c := range cases {
					res, err := sess.Call(c.call)
					if err == nil {
						err = driver.CheckText(res, c.want)
					}
					if err != nil {
						t.Errorf("%s: %v\nstderr:\n%s", c.name, err, srv.stderr)
					}
				}
				checkRefused(t, sess)
				if err := sess.Close(); err != nil {
					t.Errorf("close session: %v", err)
				}
			}
		})
	}
}
