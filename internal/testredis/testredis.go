// Package testredis runs a real redis-server for tests, on a free
// loopback port, with its data in a temporary directory (append-only
// file, so a restart keeps what was written).
//
// Start skips the test where redis-server is not installed, and fails it
// instead when the CI environment variable is set (scripts/
// install-test-deps.sh installs it there).
package testredis

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Server is a redis-server process the test started.
type Server struct {
	// Addr is its address, 127.0.0.1:port.
	Addr string

	t    testing.TB
	bin  string
	dir  string
	port int
	cmd  *exec.Cmd
}

// Start starts a redis-server and stops it when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("redis-server is not installed: scripts/install-test-deps.sh installs it (apt-get install redis-server)")
		}
		t.Skip("redis-server is not installed (apt-get install redis-server, or run scripts/install-test-deps.sh)")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	s := &Server{t: t, bin: bin, dir: t.TempDir(), port: port, Addr: "127.0.0.1:" + strconv.Itoa(port)}
	s.start()
	t.Cleanup(s.Stop)
	return s
}

func (s *Server) start() {
	s.t.Helper()
	s.cmd = exec.Command(s.bin, "--port", strconv.Itoa(s.port), "--bind", "127.0.0.1", "--dir", s.dir,
		"--save", "", "--appendonly", "yes", "--appendfsync", "everysec", "--protected-mode", "yes")
	if err := s.cmd.Start(); err != nil {
		s.t.Fatalf("starting redis-server: %v", err)
	}
	// Bounded wait for it to answer: at most 20 s.
	for range 400 {
		if s.ping() {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	s.Stop()
	s.t.Fatalf("redis-server on %s did not answer PING", s.Addr)
}

func (s *Server) ping() bool {
	c, err := net.DialTimeout("tcp", s.Addr, time.Second)
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := fmt.Fprint(c, "PING\r\n"); err != nil {
		return false
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && strings.HasPrefix(line, "+PONG")
}

// Stop stops the server (SIGTERM: it writes its data out first) and waits
// for it to exit. Stopping a stopped server does nothing.
func (s *Server) Stop() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	_ = s.cmd.Wait()
	s.cmd = nil
}

// Restart starts the stopped server again on the same port and data.
func (s *Server) Restart() {
	s.t.Helper()
	s.Stop()
	s.start()
}
