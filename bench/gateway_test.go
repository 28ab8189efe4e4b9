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
	pids []int // the processes that serve the calls: the gateway and its upstream, or the upstream

	calls   int
	elapsed time.Duration
	cpu     time.Duration   // of pids
	gwCPU   time.Duration   // of pids[0], when it is the gateway
	lat     []time.Duration // per call, for the percentiles
}

// run makes n sequential calls and adds what they took.
func (s *gatewaySide) run(b *testing.B, n int, gateway bool) {
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
		if gateway && i == 0 {
			s.gwCPU += c1 - c0[i]
		}
	}
	s.calls += n
}

// buildGateway builds servers/gateway once per benchmark run.
func buildGateway(b *testing.B) string {
	b.Helper()
	bin := filepath.Join(b.TempDir(), "gateway")
	cmd := exec.Command("go", "build", "-o", bin, "./servers/gateway")
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		b.Fatalf("go build ./servers/gateway: %v", err)
	}
	return bin
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
// toolwire benchmark server directly, and through the gateway
// (servers/gateway: package gateway, as toolwire serve --servers runs it)
// in front of another instance of it, alternating in slices of
// gatewaySlice calls (A B B A ...); b.N calls go to each.
//
//   - transport=stdio: the driver runs the server, or the gateway, which
//     runs the server as its stdio upstream.
//   - transport=http: one server over Streamable HTTP; the driver calls
//     it, or the gateway over Streamable HTTP, whose upstream it is, over
//     Streamable HTTP too.
//
// Reports the CPU per call of the processes serving each side
// (direct-cpu-µs/call: the upstream; gateway-cpu-µs/call: the gateway and
// its upstream), their difference (overhead-cpu-µs/call, the goal being
// at most 15), the gateway process's own CPU, and each side's p50
// latency. Run it with a fixed count:
//
//	go test -run '^$' -bench GatewayPaired -benchtime 40000x -count 5
func BenchmarkGatewayPaired(b *testing.B) {
	up := servers[slices.IndexFunc(servers, func(s serverSpec) bool { return s.Name == "toolwire" })]
	gw := buildGateway(b)
	era := os.Getenv("MCPBENCH_UPSTREAM_VERSION") // the gateway's era with its upstream (default: the newest)
	b.Run("transport=stdio", func(b *testing.B) {
		direct, _ := stdioServer(b, up)
		defer direct.Kill()
		via, stderr := stdioServer(b, serverSpec{Name: "gateway", Cmd: []string{gw, "-upstream-version", era, "-upstream-cmd", up.Cmd[0]}})
		defer via.Kill()
		check(b, "gateway", via, addSmall, addWant)
		_ = stderr
		gatewayPaired(b, &gatewaySide{conn: direct, pids: []int{direct.Pid()}},
			&gatewaySide{conn: via, pids: []int{via.Pid(), childOf(b, via.Pid())}})
	})
	b.Run("transport=http", func(b *testing.B) {
		upstream := startHTTPServer(b, up)
		defer upstream.stop()
		gateway := startHTTPServer(b, serverSpec{Name: "gateway", Cmd: []string{gw, "-upstream-version", era, "-upstream-url", upstream.URL}})
		defer gateway.stop()
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
		direct, via := session(upstream.URL), session(gateway.URL)
		check(b, "gateway", via, addSmall, addWant)
		gatewayPaired(b, &gatewaySide{conn: direct, pids: []int{upstream.cmd.Process.Pid}},
			&gatewaySide{conn: via, pids: []int{gateway.cmd.Process.Pid, upstream.cmd.Process.Pid}})
	})
}

// gatewayPaired makes b.N calls on each side, alternating, and reports.
func gatewayPaired(b *testing.B, direct, via *gatewaySide) {
	// Warm both up (connections, caches) before timing.
	direct.run(b, 200, false)
	via.run(b, 200, true)
	*direct = gatewaySide{conn: direct.conn, pids: direct.pids}
	*via = gatewaySide{conn: via.conn, pids: via.pids}
	b.ResetTimer()
	order := []*gatewaySide{direct, via, via, direct}
	for i := 0; direct.calls < b.N || via.calls < b.N; i++ {
		s := order[i%4]
		if n := min(gatewaySlice, b.N-s.calls); n > 0 {
			s.run(b, n, s == via)
		}
	}
	b.StopTimer()
	perCall := func(d time.Duration, n int) float64 { return float64(d.Microseconds()) / float64(n) }
	b.ReportMetric(perCall(direct.cpu, direct.calls), "direct-cpu-µs/call")
	b.ReportMetric(perCall(via.cpu, via.calls), "gateway-cpu-µs/call")
	b.ReportMetric(perCall(via.cpu, via.calls)-perCall(direct.cpu, direct.calls), "overhead-cpu-µs/call")
	b.ReportMetric(perCall(via.gwCPU, via.calls), "gateway-process-cpu-µs/call")
	b.ReportMetric(p50(direct.lat), "direct-p50-µs")
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
