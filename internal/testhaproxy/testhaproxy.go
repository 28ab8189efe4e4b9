// Package testhaproxy runs a real haproxy (Debian's) for tests, on a free
// loopback port, in front of replicas that the test started, with the
// configuration in haproxy.cfg (round-robin per request, TCP health checks
// every 200 ms, retries of connection failures only). bench/scaleout.sh
// uses the same file.
//
// Start skips the test where haproxy is not installed, and fails it
// instead when the CI environment variable is set (scripts/
// install-haproxy.sh installs it there).
package testhaproxy

import (
	_ "embed"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

//go:embed haproxy.cfg
var template string

// Config returns the configuration of a haproxy listening on bind
// (host:port) in front of the servers (host:port each), named r1, r2, ...
func Config(bind string, servers []string) string {
	var lines []string
	for i, s := range servers {
		lines = append(lines, fmt.Sprintf("    server r%d %s", i+1, s))
	}
	return strings.NewReplacer("@BIND@", bind, "@SERVERS@", strings.Join(lines, "\n")).Replace(template)
}

// Proxy is a haproxy process the test started.
type Proxy struct {
	// Addr is its address, 127.0.0.1:port.
	Addr string

	cmd    *exec.Cmd
	exited chan error // cmd.Wait's result
}

// Start starts haproxy in front of servers (host:port each) and stops it
// when the test ends. It returns once haproxy accepts connections.
func Start(t testing.TB, servers []string) *Proxy {
	t.Helper()
	bin, err := exec.LookPath("haproxy")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("haproxy is not installed: scripts/install-haproxy.sh installs it (apt-get install haproxy)")
		}
		t.Skip("haproxy is not installed (apt-get install haproxy, or run scripts/install-haproxy.sh)")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cfg := filepath.Join(t.TempDir(), "haproxy.cfg")
	if err := os.WriteFile(cfg, []byte(Config(addr, servers)), 0o644); err != nil {
		t.Fatal(err)
	}
	// -db: in the foreground, one process (no master), so that the test
	// owns it.
	cmd := exec.Command(bin, "-db", "-f", cfg)
	out := &output{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting haproxy: %v", err)
	}
	p := &Proxy{Addr: addr, cmd: cmd, exited: make(chan error, 1)}
	go func() { p.exited <- cmd.Wait() }()
	t.Cleanup(p.stop)
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return p
		}
		select {
		case werr := <-p.exited:
			p.exited <- werr // for stop
			t.Fatalf("haproxy exited (%v); its output: %s", werr, out)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("haproxy did not listen on %s within 10s: %v; its output: %s", addr, err, out)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop kills the process the test started and reaps it.
func (p *Proxy) stop() {
	_ = p.cmd.Process.Kill()
	<-p.exited
}

// output is what haproxy printed, written by exec's copying goroutine.
type output struct {
	mu sync.Mutex
	b  []byte
}

func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.b = append(o.b, p...)
	return len(p), nil
}

func (o *output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return string(o.b)
}
