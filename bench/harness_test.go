package bench

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/toolwire/toolwire/bench/driver"
)

// serverSpec is one MCP server under test: a command line that serves MCP
// over stdio when run as is, and Streamable HTTP at /mcp when run with
// "-http 127.0.0.1:0" appended, printing "LISTENING host:port" on stdout
// once bound (see internal/serve).
type serverSpec struct {
	Name string
	// Pkg, if set, is a main package of this module built once in TestMain;
	// the binary becomes Cmd[0].
	Pkg string
	// Cmd is the command line (filled in from Pkg when Pkg is set).
	Cmd []string
}

// servers is the table of servers every benchmark runs against, in order
// (benchstat -col /server takes the first as its base). To add one, add a
// line. More can be given at run time without editing this file through
// MCPBENCH_SERVERS="name=command arg...;name2=command2 ...".
var servers = []serverSpec{
	{Name: "gosdk", Pkg: "./servers/gosdk"},
	{Name: "mcpgo", Pkg: "./servers/mcpgo"},
	{Name: "toolwire", Pkg: "./servers/toolwire"},
}

func TestMain(m *testing.M) {
	flag.Parse()
	if err := setup(); err != nil {
		fmt.Fprintln(os.Stderr, "bench setup:", err)
		os.Exit(1)
	}
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

var buildDir string

func setup() error {
	if env := os.Getenv("MCPBENCH_SERVERS"); env != "" {
		for _, ent := range strings.Split(env, ";") {
			name, cmd, ok := strings.Cut(strings.TrimSpace(ent), "=")
			if !ok || name == "" || len(strings.Fields(cmd)) == 0 {
				return fmt.Errorf("bad MCPBENCH_SERVERS entry %q (want name=command args...)", ent)
			}
			servers = append(servers, serverSpec{Name: name, Cmd: strings.Fields(cmd)})
		}
	}
	var pkgs []string
	for _, s := range servers {
		if s.Pkg != "" {
			pkgs = append(pkgs, s.Pkg)
		}
	}
	if len(pkgs) == 0 {
		return nil
	}
	dir, err := os.MkdirTemp("", "mcpbench-")
	if err != nil {
		return err
	}
	buildDir = dir
	for i := range servers {
		s := &servers[i]
		if s.Pkg == "" {
			continue
		}
		bin := filepath.Join(dir, s.Name)
		cmd := exec.Command("go", "build", "-o", bin, s.Pkg)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			os.RemoveAll(dir)
			return fmt.Errorf("go build %s: %w", s.Pkg, err)
		}
		s.Cmd = []string{bin}
	}
	return nil
}

// cappedBuffer keeps the last max bytes written to it (server stderr).
type cappedBuffer struct {
	mu  sync.Mutex
	buf []byte
	max int
}

func newCappedBuffer() *cappedBuffer { return &cappedBuffer{max: 64 << 10} }

func (c *cappedBuffer) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.buf = append(c.buf, p...)
	if len(c.buf) > c.max {
		c.buf = append(c.buf[:0], c.buf[len(c.buf)-c.max:]...)
	}
	return len(p), nil
}

func (c *cappedBuffer) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return string(c.buf)
}

// stdioServer spawns s over stdio and initializes a session.
func stdioServer(tb testing.TB, s serverSpec) (*driver.Stdio, *cappedBuffer) {
	tb.Helper()
	stderr := newCappedBuffer()
	conn, err := driver.StartStdio(s.Cmd, stderr)
	if err != nil {
		tb.Fatalf("%s: starting stdio server: %v\nstderr:\n%s", s.Name, err, stderr)
	}
	return conn, stderr
}

// httpServer is a spawned server serving Streamable HTTP on 127.0.0.1.
type httpServer struct {
	cmd    *exec.Cmd
	URL    string
	stderr *cappedBuffer
	done   chan struct{} // closed when stdout is drained
}

func startHTTPServer(tb testing.TB, s serverSpec) *httpServer {
	tb.Helper()
	args := append(append([]string(nil), s.Cmd[1:]...), "-http", "127.0.0.1:0")
	cmd := exec.Command(s.Cmd[0], args...)
	stderr := newCappedBuffer()
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatalf("%s: %v", s.Name, err)
	}
	h := &httpServer{cmd: cmd, stderr: stderr, done: make(chan struct{})}
	addrc := make(chan string, 1)
	go func() {
		defer close(h.done)
		r := bufio.NewReader(stdout)
		sent := false
		for {
			line, err := r.ReadString('\n')
			if !sent {
				if addr, ok := strings.CutPrefix(strings.TrimSpace(line), "LISTENING "); ok {
					addrc <- addr
					sent = true
				}
			}
			if err != nil {
				if !sent {
					close(addrc)
				}
				return
			}
		}
	}()
	select {
	case addr, ok := <-addrc:
		if !ok {
			h.stop()
			tb.Fatalf("%s: server exited before printing LISTENING\nstderr:\n%s", s.Name, stderr)
		}
		h.URL = "http://" + addr + "/mcp"
	case <-time.After(15 * time.Second):
		h.stop()
		tb.Fatalf("%s: no LISTENING line within 15s\nstderr:\n%s", s.Name, stderr)
	}
	return h
}

// stop kills the server by PID and reaps it.
func (h *httpServer) stop() {
	h.cmd.Process.Kill()
	<-h.done
	h.cmd.Wait()
}

// peakRSSKiB returns VmHWM (peak resident set size) of a live process in KiB.
func peakRSSKiB(pid int) (float64, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, false
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("VmHWM:")); ok {
			f := strings.Fields(string(v)) // "1234 kB"
			if len(f) == 2 && f[1] == "kB" {
				n, err := strconv.ParseFloat(f[0], 64)
				return n, err == nil
			}
		}
	}
	return 0, false
}

// processCPU returns the CPU time (user + system, all threads) a live
// process has used, from /proc/PID/stat in clock ticks of 10 ms.
func processCPU(pid int) (time.Duration, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	// The command name (field 2) may hold spaces; the fields after its
	// closing parenthesis start with field 3 (state).
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, false
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64) // field 14
	stime, err2 := strconv.ParseInt(f[12], 10, 64) // field 15
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond, true
}

// selfCPU returns the CPU time this process (the driver) has used.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpuMeter reports the CPU time per call of a server process and of the
// driver over a timed loop.
type cpuMeter struct {
	pid            int
	server, driver time.Duration
	ok             bool
}

func startCPU(pid int) cpuMeter {
	s, ok := processCPU(pid)
	return cpuMeter{pid: pid, server: s, driver: selfCPU(), ok: ok}
}

// report adds server-cpu-µs/call and driver-cpu-µs/call to b's metrics.
func (m cpuMeter) report(b *testing.B, calls int) {
	s, ok := processCPU(m.pid)
	if !ok || !m.ok || calls == 0 {
		return
	}
	b.ReportMetric(float64(s-m.server)/float64(time.Microsecond)/float64(calls), "server-cpu-µs/call")
	b.ReportMetric(float64(selfCPU()-m.driver)/float64(time.Microsecond)/float64(calls), "driver-cpu-µs/call")
}

func reportPeakRSS(b *testing.B, pid int) {
	if kib, ok := peakRSSKiB(pid); ok {
		b.ReportMetric(kib, "peak-RSS-KiB")
	}
}

// check fails tb if a tool call did not return want.
func check(tb testing.TB, name string, conn driver.Conn, call *driver.Call, want string) {
	tb.Helper()
	res, err := conn.Call(call)
	if err != nil {
		tb.Fatalf("%s: %v", name, err)
	}
	if err := driver.CheckText(res, want); err != nil {
		tb.Fatalf("%s: %v", name, err)
	}
}
