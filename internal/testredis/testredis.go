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
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
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
	opts Options
	cmd  *exec.Cmd
}

// Options are what a test asks of the server beyond the defaults.
type Options struct {
	// Password, when set, is required of clients (requirepass).
	Password string
	// CertFile and KeyFile, when set, make the server speak TLS only,
	// with this certificate and key (PEM files), asking clients for no
	// certificate.
	CertFile, KeyFile string
}

// Start starts a redis-server and stops it when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	return StartWith(t, Options{})
}

// StartWith starts a redis-server with options and stops it when the
// test ends.
func StartWith(t testing.TB, o Options) *Server {
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
	s := &Server{t: t, bin: bin, dir: t.TempDir(), port: port, opts: o, Addr: "127.0.0.1:" + strconv.Itoa(port)}
	s.start()
	t.Cleanup(s.Stop)
	return s
}

func (s *Server) start() {
	s.t.Helper()
	args := []string{"--port", strconv.Itoa(s.port), "--bind", "127.0.0.1", "--dir", s.dir,
		"--save", "", "--appendonly", "yes", "--appendfsync", "everysec", "--protected-mode", "yes"}
	if s.opts.Password != "" {
		args = append(args, "--requirepass", s.opts.Password)
	}
	if s.opts.CertFile != "" {
		args = append(args, "--port", "0", "--tls-port", strconv.Itoa(s.port),
			"--tls-cert-file", s.opts.CertFile, "--tls-key-file", s.opts.KeyFile, "--tls-auth-clients", "no")
	}
	s.cmd = exec.Command(s.bin, args...)
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

// ping reports whether the server answers (a server with a password
// answers that it wants one).
func (s *Server) ping() bool {
	reply, err := s.Do("PING")
	return err == nil && reply == "PONG" || err != nil && strings.HasPrefix(err.Error(), "NOAUTH")
}

// Do sends one command, authenticated when the server has a password,
// and returns its reply: a status or a string as it is, a number in
// decimal, nil as "" with no error, and an error reply as an error.
func (s *Server) Do(args ...string) (string, error) {
	var c net.Conn
	var err error
	d := &net.Dialer{Timeout: time.Second}
	if s.opts.CertFile != "" {
		// The test's own server: its certificate needs no checking.
		c, err = tls.DialWithDialer(d, "tcp", s.Addr, &tls.Config{InsecureSkipVerify: true})
	} else {
		c, err = d.Dial("tcp", s.Addr)
	}
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	r := bufio.NewReader(c)
	if s.opts.Password != "" && args[0] != "PING" {
		if _, err := command(c, r, "AUTH", s.opts.Password); err != nil {
			return "", err
		}
	}
	return command(c, r, args...)
}

// command writes one command in RESP and reads its reply.
func command(w io.Writer, r *bufio.Reader, args ...string) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return "", err
	}
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimSuffix(line, "\r\n")
	switch {
	case line == "":
		return "", fmt.Errorf("empty reply")
	case line[0] == '+' || line[0] == ':':
		return line[1:], nil
	case line[0] == '-':
		return "", errors.New(line[1:])
	case line[0] == '$':
		n, err := strconv.Atoi(line[1:])
		if err != nil || n < 0 {
			return "", err
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return "", err
		}
		return string(buf[:n]), nil
	}
	return "", fmt.Errorf("reply %q: only statuses, numbers and strings are read", line)
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

// Certificates writes, in a temporary directory, a certificate authority
// and a server certificate it signed for 127.0.0.1 and localhost, as PEM
// files, for a server started with TLS; a client trusts the server by
// trusting caFile.
func Certificates(t testing.TB) (caFile, certFile, keyFile string) {
	t.Helper()
	dir := t.TempDir()
	newKey := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	caKey, srvKey := newKey(), newKey()
	now := time.Now()
	ca := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "toolwire test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	srv := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	srvDER, err := x509.CreateCertificate(rand.Reader, srv, ca, &srvKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(srvKey)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, typ string, der []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	return write("ca.pem", "CERTIFICATE", caDER), write("server.pem", "CERTIFICATE", srvDER), write("server.key", "EC PRIVATE KEY", keyDER)
}
