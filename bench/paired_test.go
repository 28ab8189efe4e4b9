package bench

import (
	"cmp"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/bench/driver"
)

// pairedSlice is how many calls BenchmarkHTTPPaired makes to one server
// before it turns to the other: a few tenths of a second, long enough for
// the servers' CPU clocks (10 ms ticks) and short enough that the
// machine's speed changes little from one slice to the next.
const pairedSlice = 5000

// pairedSide is one server of BenchmarkHTTPPaired and what it was
// measured at so far.
type pairedSide struct {
	spec     serverSpec
	srv      *httpServer
	hc       *driver.HTTPClient
	sessions []*driver.HTTPSession

	calls     int
	elapsed   time.Duration
	serverCPU time.Duration
	driverCPU time.Duration
}

// run makes n calls to the side's server with all its sessions at once
// and adds what they took.
func (p *pairedSide) run(n int) error {
	pid := p.srv.cmd.Process.Pid
	s0, _ := processCPU(pid)
	d0 := selfCPU()
	start := time.Now()
	_, err := callConcurrently(p.sessions, n, addSmall)
	p.elapsed += time.Since(start)
	s1, _ := processCPU(pid)
	p.serverCPU += s1 - s0
	p.driverCPU += selfCPU() - d0
	p.calls += n
	return err
}

// BenchmarkHTTPPaired: the load of BenchmarkHTTPCalls at 64 clients on two
// servers started side by side, alternating between them in slices of
// pairedSlice calls (A B B A A B ...) while the other waits with its
// sessions open, so that the machine's drifting speed falls on both alike;
// b.N calls go to each.
// The pair is MCPBENCH_PAIR ("base,other", default "mcpgo,toolwire").
// Reports each server's calls/s and server CPU per call and the ratios
// of other to base, as BenchmarkHTTPCalls measures them. Run it with a
// fixed count, not the default calibration, which starts both servers for
// every trial:
//
//	go test -run '^$' -bench HTTPPaired -benchtime 200000x -count 5
func BenchmarkHTTPPaired(b *testing.B) {
	names := strings.Split(cmp.Or(os.Getenv("MCPBENCH_PAIR"), "mcpgo,toolwire"), ",")
	if len(names) != 2 {
		b.Fatalf("MCPBENCH_PAIR=%q: want two server names, base first, separated by a comma", os.Getenv("MCPBENCH_PAIR"))
	}
	var sides [2]*pairedSide
	for i, name := range names {
		j := slices.IndexFunc(servers, func(s serverSpec) bool { return s.Name == name })
		if j < 0 {
			b.Fatalf("MCPBENCH_PAIR: no server named %q (have %s)", name, serverNames())
		}
		sides[i] = &pairedSide{spec: servers[j]}
	}
	b.Run("clients=64/pair="+names[0]+"-"+names[1], func(b *testing.B) {
		for _, p := range sides {
			*p = pairedSide{spec: p.spec}
			p.srv, p.hc, p.sessions = connectHTTPClients(b, p.spec, 64, addSmall, addWant)
			defer p.srv.stop()
			defer p.hc.CloseIdleConnections()
			defer closeAll(p.sessions)
		}
		b.ResetTimer()
		for round := 0; sides[0].calls < b.N || sides[1].calls < b.N; round++ {
			order := sides // A B, then B A: a drift within a round falls on both
			if round%2 == 1 {
				order[0], order[1] = sides[1], sides[0]
			}
			for _, p := range order {
				if n := min(pairedSlice, b.N-p.calls); n > 0 {
					if err := p.run(n); err != nil {
						b.Fatalf("%s: %v\nstderr:\n%s", p.spec.Name, err, p.srv.stderr)
					}
				}
			}
		}
		b.StopTimer()
		var rate, cpu [2]float64
		for i, p := range sides {
			rate[i] = float64(p.calls) / p.elapsed.Seconds()
			cpu[i] = float64(p.serverCPU) / float64(time.Microsecond) / float64(p.calls)
			b.ReportMetric(rate[i], p.spec.Name+"-calls/s")
			b.ReportMetric(cpu[i], p.spec.Name+"-server-cpu-µs/call")
			b.ReportMetric(float64(p.driverCPU)/float64(time.Microsecond)/float64(p.calls), p.spec.Name+"-driver-cpu-µs/call")
		}
		b.ReportMetric(rate[1]/rate[0], "calls/s-ratio")
		b.ReportMetric(cpu[1]/cpu[0], "server-cpu-ratio")
	})
}

// serverNames lists the names of the servers table, for error messages.
func serverNames() string {
	var names []string
	for _, s := range servers {
		names = append(names, s.Name)
	}
	return strings.Join(names, ", ")
}
