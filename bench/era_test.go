package bench

import (
	"slices"
	"testing"
	"time"

	"github.com/toolwire/toolwire/bench/driver"
)

// The modern (2026-07-28, stateless) forms of the calls in mcp_test.go.
var (
	addModern        = mustModernToolCall("add", map[string]any{"a": 2, "b": 3})
	echoModern       = mustModernToolCall("echo", map[string]any{"text": echoText})
	largeModernCalls = func() []*driver.Call {
		var cs []*driver.Call
		for _, s := range largeSizes {
			cs = append(cs, mustModernToolCall("echo", map[string]any{"text": s.text}))
		}
		return cs
	}()
)

func mustModernToolCall(name string, args map[string]any) *driver.Call {
	c, err := driver.NewModernToolCall(name, args)
	if err != nil {
		panic(err)
	}
	return c
}

// eraSide is one protocol era of BenchmarkEraPaired and what it was
// measured at so far.
type eraSide struct {
	name string
	pid  int               // the server process whose CPU the side is charged
	run  func(n int) error // makes n calls

	calls     int
	elapsed   time.Duration
	serverCPU time.Duration
}

// measure makes n calls and adds what they took.
func (e *eraSide) measure(n int) error {
	c0, _ := processCPU(e.pid)
	start := time.Now()
	err := e.run(n)
	e.elapsed += time.Since(start)
	c1, _ := processCPU(e.pid)
	e.serverCPU += c1 - c0
	e.calls += n
	return err
}

// pairEras gives b.N calls to each of legacy and modern, alternating in
// slices of slice calls (legacy modern, modern legacy, ...), and reports
// each era's calls/s and server CPU per call and the ratios of modern to
// legacy: time per call and server CPU per call (above 1: modern costs
// more).
func pairEras(b *testing.B, slice int, legacy, modern *eraSide) {
	b.ResetTimer()
	sides := [2]*eraSide{legacy, modern}
	for round := 0; legacy.calls < b.N || modern.calls < b.N; round++ {
		order := sides
		if round%2 == 1 {
			order[0], order[1] = sides[1], sides[0]
		}
		for _, e := range order {
			if n := min(slice, b.N-e.calls); n > 0 {
				if err := e.measure(n); err != nil {
					b.Fatalf("%s: %v", e.name, err)
				}
			}
		}
	}
	b.StopTimer()
	var perCall, cpu [2]float64
	for i, e := range sides {
		perCall[i] = float64(e.elapsed) / float64(time.Microsecond) / float64(e.calls)
		cpu[i] = float64(e.serverCPU) / float64(time.Microsecond) / float64(e.calls)
		b.ReportMetric(float64(e.calls)/e.elapsed.Seconds(), e.name+"-calls/s")
		b.ReportMetric(cpu[i], e.name+"-server-cpu-µs/call")
	}
	b.ReportMetric(perCall[1]/perCall[0], "time-ratio")
	if cpu[0] > 0 {
		b.ReportMetric(cpu[1]/cpu[0], "server-cpu-ratio")
	}
}

// toolwireSpec is the toolwire server of the servers table: the only one
// that speaks both eras.
func toolwireSpec(b *testing.B) serverSpec {
	i := slices.IndexFunc(servers, func(s serverSpec) bool { return s.Name == "toolwire" })
	if i < 0 {
		b.Fatal("no toolwire server in the servers table")
	}
	return servers[i]
}

// sequentialCalls returns a run function making n calls one after the
// other on conn.
func sequentialCalls(conn driver.Conn, call *driver.Call) func(n int) error {
	return func(n int) error {
		for range n {
			if _, err := conn.Call(call); err != nil {
				return err
			}
		}
		return nil
	}
}

// BenchmarkEraPaired measures the toolwire server's 2026-07-28 (modern,
// stateless) path against its legacy (2025-11-25 session) path in the
// same run, alternating between them in slices (legacy modern, modern
// legacy, ...) so that the machine's drift falls on both alike; b.N calls
// go to each era.
//
//   - transport=http/load=add-64clients: 64 clients calling add(2,3), as
//     BenchmarkHTTPCalls, on one server: 64 legacy sessions and 64
//     modern connections, slices of 5,000 calls;
//   - transport=http/load=echo-1MiB: one client, sequential 1 MiB echoes;
//   - transport=stdio/load=echo-small and echo-1MiB: one client, sequential
//     echo("hello") or 1 MiB echoes, to two server processes (one
//     initialized, one spoken to in 2026-07-28).
//
// Reports each era's calls/s and server CPU per call (the server process's
// user+system time, 10 ms ticks) and time-ratio and server-cpu-ratio,
// modern over legacy. Run it with a fixed count of calls:
//
//	go test -run '^$' -bench EraPaired -benchtime 40000x   # the 1 MiB cases: -benchtime 400x
func BenchmarkEraPaired(b *testing.B) {
	spec := toolwireSpec(b)
	b.Run("transport=http/load=add-64clients", func(b *testing.B) {
		srv, hc, legacySessions := connectHTTPClients(b, spec, 64, addSmall, addWant)
		defer srv.stop()
		defer hc.CloseIdleConnections()
		defer closeAll(legacySessions)
		modernSessions := make([]*driver.HTTPSession, 64)
		for i := range modernSessions {
			modernSessions[i] = hc.ConnectModern()
			check(b, "toolwire (modern)", modernSessions[i], addModern, addWant)
		}
		defer closeAll(modernSessions)
		pid := srv.cmd.Process.Pid
		pairEras(b, pairedSlice,
			&eraSide{name: "legacy", pid: pid, run: func(n int) error { _, err := callConcurrently(legacySessions, n, addSmall); return err }},
			&eraSide{name: "modern", pid: pid, run: func(n int) error { _, err := callConcurrently(modernSessions, n, addModern); return err }})
	})
	b.Run("transport=http/load=echo-1MiB", func(b *testing.B) {
		srv := startHTTPServer(b, spec)
		defer srv.stop()
		hc, err := driver.NewHTTPClient(srv.URL)
		if err != nil {
			b.Fatal(err)
		}
		defer hc.CloseIdleConnections()
		legacy, err := hc.Connect()
		if err != nil {
			b.Fatal(err)
		}
		defer legacy.Close()
		modern := hc.ConnectModern()
		defer modern.Close()
		large, text := largeCalls[1], largeSizes[1].text
		check(b, "toolwire", legacy, large, text)
		check(b, "toolwire (modern)", modern, largeModernCalls[1], text)
		b.SetBytes(int64(len(text)))
		pid := srv.cmd.Process.Pid
		pairEras(b, 40,
			&eraSide{name: "legacy", pid: pid, run: sequentialCalls(legacy, large)},
			&eraSide{name: "modern", pid: pid, run: sequentialCalls(modern, largeModernCalls[1])})
	})
	stdio := func(b *testing.B, slice int, legacyCall, modernCall *driver.Call, want string) {
		legacy, stderr := stdioServer(b, spec)
		defer legacy.Kill()
		modern, err := driver.StartStdioModern(spec.Cmd, stderr)
		if err != nil {
			b.Fatalf("toolwire (modern): %v\nstderr:\n%s", err, stderr)
		}
		defer modern.Kill()
		check(b, "toolwire", legacy, legacyCall, want)
		check(b, "toolwire (modern)", modern, modernCall, want)
		pairEras(b, slice,
			&eraSide{name: "legacy", pid: legacy.Pid(), run: sequentialCalls(legacy, legacyCall)},
			&eraSide{name: "modern", pid: modern.Pid(), run: sequentialCalls(modern, modernCall)})
	}
	b.Run("transport=stdio/load=echo-small", func(b *testing.B) {
		stdio(b, pairedSlice, echoSmall, echoModern, echoText)
	})
	b.Run("transport=stdio/load=echo-1MiB", func(b *testing.B) {
		b.SetBytes(int64(len(largeSizes[1].text)))
		stdio(b, 40, largeCalls[1], largeModernCalls[1], largeSizes[1].text)
	})
}
