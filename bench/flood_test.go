package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/toolwire/toolwire/bench/driver"
)

// The flood tests attack a `toolwire serve --http` process (issue 20,
// acceptance 3 and the "3,000 idle SSE streams" input) over 127.0.0.1 and
// report what it holds. They run when MCPBENCH_FLOOD names a toolwire
// binary, built from the main module:
//
//	go build -trimpath -o /tmp/toolwire ./cmd/toolwire
//	cd bench && MCPBENCH_FLOOD=/tmp/toolwire go test -run 'TestSessionFlood|TestStreamFlood' -v
//
// A binary from before the bounds (no --max-streams) runs TestSessionFlood
// only. Every run is bounded in count and time and stops by itself; the
// figures are reported, not asserted, apart from the caps themselves.
const (
	floodSessions = 20_000           // initializes sent, none ended with DELETE
	floodWorkers  = 8                // connections they are sent on
	floodPings    = 2_000            // bystander pings per quiet phase
	floodStreams  = 3_000            // SSE streams opened and left idle
	floodTimeout  = 10 * time.Minute // bounds each test
)

// floodBinary returns the toolwire binary to attack, or skips.
func floodBinary(t *testing.T) string {
	bin := os.Getenv("MCPBENCH_FLOOD")
	if bin == "" {
		t.Skip("set MCPBENCH_FLOOD to a toolwire binary to run the flood tests")
	}
	return bin
}

// cliServer is a `toolwire serve --http` process on 127.0.0.1.
type cliServer struct {
	cmd    *exec.Cmd
	base   string // http://127.0.0.1:port
	stderr *cappedBuffer
}

func startCLI(t *testing.T, bin string, args ...string) *cliServer {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "--http", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), "GOTRACEBACK=all") // for goroutines
	s := &cliServer{cmd: cmd, stderr: newCappedBuffer()}
	cmd.Stderr = s.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.stop)
	line, err := bufio.NewReader(out).ReadString('\n')
	m := regexp.MustCompile(`http://([0-9.:]+)/mcp`).FindStringSubmatch(line)
	if err != nil || m == nil {
		t.Fatalf("toolwire serve printed %q (%v); stderr: %s", line, err, s.stderr)
	}
	s.base = "http://" + m[1]
	return s
}

// stop kills the server by its PID and reaps it (once).
func (s *cliServer) stop() {
	if s.cmd.ProcessState == nil {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
	}
}

// status returns a field of /proc/PID/status in KiB (VmRSS, VmHWM) or as
// a count (Threads).
func (s *cliServer) status(field string) int {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(s.cmd.Process.Pid) + "/status")
	for _, line := range bytes.Split(b, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte(field+":")); ok {
			n, _ := strconv.Atoi(strings.Fields(string(v))[0])
			return n
		}
	}
	return -1
}

// goroutines makes the server dump its goroutines (SIGQUIT, which ends
// it) and counts them.
func (s *cliServer) goroutines(t *testing.T) int {
	t.Helper()
	var dump bytes.Buffer
	s.stderr.mu.Lock()
	s.stderr.max = 1 << 30 // the whole dump
	s.stderr.mu.Unlock()
	_ = s.cmd.Process.Signal(syscall.SIGQUIT)
	_ = s.cmd.Wait()
	dump.WriteString(s.stderr.String())
	return len(regexp.MustCompile(`(?m)^goroutine \d+ `).FindAllIndex(dump.Bytes(), -1))
}

// latencies summarizes ping round trips.
type latencies []time.Duration

func (l latencies) String() string {
	if len(l) == 0 {
		return "no pings"
	}
	s := slices.Clone(l)
	slices.Sort(s)
	pct := func(p float64) time.Duration {
		i := int(p*float64(len(s))+0.999999) - 1 // nearest rank
		return s[max(0, min(i, len(s)-1))]
	}
	return fmt.Sprintf("%d pings: p50 %v, p99 %v", len(s), pct(0.50).Round(time.Microsecond), pct(0.99).Round(time.Microsecond))
}

// bystander pings the server over its own session until stop is closed
// or n pings are done (n 0: no bound).
func bystander(t *testing.T, s *driver.HTTPSession, n int, stop <-chan struct{}) latencies {
	t.Helper()
	ping, err := driver.NewCall("ping", nil)
	if err != nil {
		t.Fatal(err)
	}
	var lat latencies
	for n == 0 || len(lat) < n {
		select {
		case <-stop:
			return lat
		default:
		}
		start := time.Now()
		if _, err := s.Call(ping); err != nil {
			t.Fatalf("bystander ping: %v", err)
		}
		lat = append(lat, time.Since(start))
	}
	return lat
}

// TestSessionFlood opens floodSessions legacy sessions without DELETE,
// from floodWorkers connections, while a bystander session pings the
// server; it reports the bystander's ping before, during and after the
// flood, how many sessions were accepted and refused, and the server's
// RSS. The flood runs as fast as the connections go (the server and the
// flood share the machine's two cores, so the bystander waits for CPU
// too), and paced at 2,000 initializes a second, which leaves CPU to
// spare: what the bystander waits for there is the server's own work.
func TestSessionFlood(t *testing.T) {
	bin := floodBinary(t)
	for _, rate := range []int{0, 2000} {
		name := "saturating"
		if rate > 0 {
			name = fmt.Sprintf("paced at %d per second", rate)
		}
		t.Run(name, func(t *testing.T) { sessionFlood(t, bin, rate) })
	}
}

// sessionFlood floods a fresh server at rate initializes a second (0: as
// fast as the connections go).
func sessionFlood(t *testing.T, bin string, rate int) {
	ctx, cancel := context.WithTimeout(context.Background(), floodTimeout)
	defer cancel()
	srv := startCLI(t, bin)
	hc, err := driver.NewHTTPClient(srv.base + "/mcp")
	if err != nil {
		t.Fatal(err)
	}
	defer hc.CloseIdleConnections()
	by, err := hc.Connect()
	if err != nil {
		t.Fatal(err)
	}
	rssBefore := srv.status("VmRSS")
	quiet := bystander(t, by, floodPings, nil)

	tr := &http.Transport{MaxIdleConnsPerHost: floodWorkers, MaxConnsPerHost: floodWorkers}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	const init = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"flood","version":"1"}}}`
	var (
		next            atomic.Int64
		accepted, other atomic.Int64
		mu              sync.Mutex
		refused         = map[int]int{}
		refusal         string
		wg              sync.WaitGroup
		start           = time.Now()
	)
	for range floodWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := next.Add(1); n <= floodSessions && ctx.Err() == nil; n = next.Add(1) {
				if rate > 0 {
					time.Sleep(time.Until(start.Add(time.Duration(n) * time.Second / time.Duration(rate))))
				}
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.base+"/mcp", strings.NewReader(init))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				resp, err := client.Do(req)
				if err != nil {
					other.Add(1)
					continue
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				switch resp.StatusCode {
				case http.StatusOK:
					accepted.Add(1)
				default:
					mu.Lock()
					refused[resp.StatusCode]++
					if refusal == "" {
						refusal = "Retry-After " + resp.Header.Get("Retry-After") + ": " + string(b)
					}
					mu.Unlock()
				}
			}
		}()
	}
	flooded := make(chan struct{})
	go func() { wg.Wait(); close(flooded) }()
	during := bystander(t, by, 0, flooded)
	<-flooded
	took := time.Since(start)
	after := bystander(t, by, floodPings, nil)

	t.Logf("server %s", bin)
	t.Logf("flood: %d initializes from %d connections in %v: %d accepted, refused %v, %d failed", floodSessions, floodWorkers, took.Round(time.Millisecond), accepted.Load(), refused, other.Load())
	if refusal != "" {
		t.Logf("first refusal: %s", refusal)
	}
	t.Logf("bystander ping, no other session: %v", quiet)
	t.Logf("bystander ping, during the flood: %v", during)
	t.Logf("bystander ping, after the flood:  %v", after)
	rssAfter := srv.status("VmRSS")
	t.Logf("server RSS: %d MiB before, %d MiB after, peak %d MiB; %.1f KiB per accepted session", rssBefore>>10, rssAfter>>10, srv.status("VmHWM")>>10, float64(rssAfter-rssBefore)/float64(max(1, accepted.Load())))
	if strings.Contains(srv.stderr.String(), "panic") {
		t.Errorf("server stderr: %s", srv.stderr)
	}
}

// TestStreamFlood opens floodStreams SSE streams (GET /sse) and leaves them
// idle, against a server with its default stream cap and an idle limit of
// 20s; it reports how many were accepted and refused, the server's RSS
// and goroutines, and how many are still open once the idle limit passed.
func TestStreamFlood(t *testing.T) {
	bin := floodBinary(t)
	const idle = 20 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), floodTimeout)
	defer cancel()
	tr := &http.Transport{MaxIdleConnsPerHost: 1}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}

	for _, phase := range []string{"open", "after the idle limit"} {
		srv := startCLI(t, bin, "--stream-idle-timeout", idle.String())
		rssBefore := srv.status("VmRSS")
		var open, refused, failed atomic.Int64
		var wg sync.WaitGroup
		sem := make(chan struct{}, 64) // streams being opened at once
		for range floodStreams {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.base+"/sse", nil)
				req.Header.Set("Accept", "text/event-stream")
				resp, err := client.Do(req)
				<-sem
				if err != nil {
					failed.Add(1)
					return
				}
				defer resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					refused.Add(1)
					_, _ = io.Copy(io.Discard, resp.Body)
					return
				}
				open.Add(1)
				defer open.Add(-1)
				_, _ = io.Copy(io.Discard, resp.Body) // until the server ends it
			}()
		}
		for len(sem) > 0 || open.Load()+refused.Load()+failed.Load() < floodStreams && ctx.Err() == nil {
			time.Sleep(50 * time.Millisecond)
		}
		opened := time.Now()
		t.Logf("%d SSE streams sent: %d open, %d refused, %d failed; server RSS %d MiB → %d MiB, threads %d",
			floodStreams, open.Load(), refused.Load(), failed.Load(), rssBefore>>10, srv.status("VmRSS")>>10, srv.status("Threads"))
		if phase == "after the idle limit" {
			for open.Load() > 0 && time.Since(opened) < idle+30*time.Second {
				time.Sleep(100 * time.Millisecond)
			}
			t.Logf("%v later: %d streams still open; server RSS %d MiB", time.Since(opened).Round(time.Second), open.Load(), srv.status("VmRSS")>>10)
		}
		t.Logf("%s: the server's goroutines: %d", phase, srv.goroutines(t))
		wg.Wait() // the server is gone: every stream ends
	}
}
