package bench

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/bench/driver"
)

// gatewaySlice is how many calls BenchmarkGatewayPaired makes on one side
// before it turns to the other.
const gatewaySlice = 2000

// gatewaySide is one side of BenchmarkGatewayPaired: a client's way to the
// upstream, and the processes whose CPU it costs.
type gatewaySide struct {
	conn driver.Conn
	pids []int // the processes that serve the calls: the relay (gateway or floor) and its upstream, or the upstream

	calls   int
	elapsed time.Duration
	cpu     time.Duration   // of pids
	ownCPU  time.Duration   // of pids[0], when it is a relay
	lat     []time.Duration // per call, for the percentiles
}

// run makes n sequential calls and adds what they took.
func (s *gatewaySide) run(b *testing.B, n int) {
	c0 := make([]time.Duration, len(s.pids))
	for i, p := range s.pids {
		c0[i], _ = processCPU(p)
	}
	start := time.Now()
	for range n {
		t0 := time.Now()
		if _, err := s.conn.Call(addSmall); err != nil {
			b.Fatal(err)
		}
		s.lat = append(s.lat, time.Since(t0))
	}
	s.elapsed += time.Since(start)
	for i, p := range s.pids {
		c1, _ := processCPU(p)
		s.cpu += c1 - c0[i]
		if len(s.pids) > 1 && i == 0 {
			s.ownCPU += c1 - c0[i]
		}
	}
	s.calls += n
}

// buildRelays builds servers/gateway and servers/relay once per benchmark
// run and returns their paths.
func buildRelays(b *testing.B) (gateway, floor string) {
	b.Helper()
	dir := b.TempDir()
	for _, prog := range []string{"gateway", "relay"} {
		cmd := exec.Command("go", "build", "-o", filepath.Join(dir, prog), "./servers/"+prog)
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			b.Fatalf("go build ./servers/%s: %v", prog, err)
		}
	}
	return filepath.Join(dir, "gateway"), filepath.Join(dir, "relay")
}

// childOf returns the one child process of pid (the gateway's upstream),
// waiting a little for it to start.
func childOf(b *testing.B, pid int) int {
	b.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		matches, _ := filepath.Glob("/proc/[0-9]*/stat")
		for _, m := range matches {
			data, err := os.ReadFile(m)
			if err != nil {
				continue
			}
			// pid (comm) state ppid ...: comm may hold spaces, so split after
			// its closing parenthesis.
			rest := string(data[strings.LastIndexByte(string(data), ')')+1:])
			f := strings.Fields(rest)
			if len(f) > 1 && f[1] == strconv.Itoa(pid) {
				child, _ := strconv.Atoi(filepath.Base(filepath.Dir(m)))
				return child
			}
		}
	}
	b.Fatalf("the gateway (pid %d) started no upstream", pid)
	return 0
}

// BenchmarkGatewayPaired: what toolwire's gateway costs per call. The same
// client (the raw driver, one session, sequential add(2,3) calls) calls the
// toolwire benchmark server directly; through a relay that knows nothing
// of MCP (servers/relay: bytes copied, or net/http/httputil's
// ReverseProxy), the floor of any gateway in a process of its own; and
// through the gateway (servers/gateway: package gateway, as toolwire serve
// --servers runs it), each relay in front of an instance of the server of
// its own, alternating in slices of gatewaySlice calls (A B C C B A ...);
// b.N calls go to each.
//
//   - transport=stdio: the driver runs the server, or the relay, which
//     runs the server as its stdio upstream.
//   - transport=http: one server over Streamable HTTP; the driver calls
//     it, or a relay over Streamable HTTP, whose upstream it is, over
//     Streamable HTTP too.
//
// Reports the CPU per call of the processes serving each side
// (direct-cpu-µs/call: the upstream; floor- and gateway-cpu-µs/call: the
// relay and its upstream), the difference from direct
// (floor-overhead-cpu-µs/call; overhead-cpu-µs/call for the gateway, the
// goal being at most 15), each relay process's own CPU, and each side's
// p50 latency. Run it with a fixed count:
//
//	go test -run '^$' -bench GatewayPaired -benchtime 40000x -count 5
func BenchmarkGatewayPaired(b *testing.B) {
	up := servers[slices.IndexFunc(servers, func(s serverSpec) bool { return s.Name == "toolwire" })]
	gw, floor := buildRelays(b)
	era := os.Getenv("MCPBENCH_UPSTREAM_VERSION") // the gateway's era with its upstream (default: the newest)
	b.Run("transport=stdio", func(b *testing.B) {
		direct, _ := stdioServer(b, up)
		defer direct.Kill()
		relay := func(name, prog string) *gatewaySide {
			c, _ := stdioServer(b, serverSpec{Name: name, Cmd: []string{prog, "-upstream-version", era, "-upstream-cmd", up.Cmd[0]}})
			b.Cleanup(func() { c.Kill() })
			check(b, name, c, addSmall, addWant)
			return &gatewaySide{conn: c, pids: []int{c.Pid(), childOf(b, c.Pid())}}
		}
		gatewayPaired(b, &gatewaySide{conn: direct, pids: []int{direct.Pid()}}, relay("floor", floor), relay("gateway", gw))
	})
	b.Run("transport=http", func(b *testing.B) {
		session := func(url string) driver.Conn {
			hc, err := driver.NewHTTPClient(url)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(hc.CloseIdleConnections)
			s, err := hc.Connect()
			if err != nil {
				b.Fatalf("%s: %v", url, err)
			}
			return s
		}
		upstream := func() *httpServer {
			u := startHTTPServer(b, up)
			b.Cleanup(u.stop)
			return u
		}
		relay := func(name, prog string) *gatewaySide {
			u := upstream()
			r := startHTTPServer(b, serverSpec{Name: name, Cmd: []string{prog, "-upstream-version", era, "-upstream-url", u.URL}})
			b.Cleanup(r.stop)
			s := session(r.URL)
			check(b, name, s, addSmall, addWant)
			return &gatewaySide{conn: s, pids: []int{r.cmd.Process.Pid, u.cmd.Process.Pid}}
		}
		u := upstream()
		gatewayPaired(b, &gatewaySide{conn: session(u.URL), pids: []int{u.cmd.Process.Pid}}, relay("floor", floor), relay("gateway", gw))
	})
}

// gatewayPaired makes b.N calls on each side, alternating, and reports.
func gatewayPaired(b *testing.B, direct, floor, via *gatewaySide) {
	sides := []*gatewaySide{direct, floor, via}
	// Warm each up (connections, caches) before timing.
	for _, s := range sides {
		s.run(b, 200)
		*s = gatewaySide{conn: s.conn, pids: s.pids}
	}
	b.ResetTimer()
	order := []*gatewaySide{direct, floor, via, via, floor, direct}
	for i := 0; direct.calls < b.N || floor.calls < b.N || via.calls < b.N; i++ {
		s := order[i%len(order)]
		if n := min(gatewaySlice, b.N-s.calls); n > 0 {
			s.run(b, n)
		}
	}
	b.StopTimer()
	perCall := func(d time.Duration, n int) float64 { return float64(d.Microseconds()) / float64(n) }
	d := perCall(direct.cpu, direct.calls)
	b.ReportMetric(d, "direct-cpu-µs/call")
	b.ReportMetric(perCall(floor.cpu, floor.calls), "floor-cpu-µs/call")
	b.ReportMetric(perCall(via.cpu, via.calls), "gateway-cpu-µs/call")
	b.ReportMetric(perCall(floor.cpu, floor.calls)-d, "floor-overhead-cpu-µs/call")
	b.ReportMetric(perCall(via.cpu, via.calls)-d, "overhead-cpu-µs/call")
	b.ReportMetric(perCall(floor.ownCPU, floor.calls), "floor-process-cpu-µs/call")
	b.ReportMetric(perCall(via.ownCPU, via.calls), "gateway-process-cpu-µs/call")
	b.ReportMetric(p50(direct.lat), "direct-p50-µs")
	b.ReportMetric(p50(floor.lat), "floor-p50-µs")
	b.ReportMetric(p50(via.lat), "gateway-p50-µs")
	b.ReportMetric(0, "ns/op")
}

func p50(lat []time.Duration) float64 {
	if len(lat) == 0 {
		return 0
	}
	s := slices.Clone(lat)
	slices.Sort(s)
	return float64(s[len(s)/2].Nanoseconds()) / 1e3
}
