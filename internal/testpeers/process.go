package testpeers

import (
	"net"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// Process is a server process a test started (a peer built into
// .cache/bin: Hydra, Jaeger).
type Process struct {
	cmd    *exec.Cmd
	exited chan struct{} // closed when it has exited
}

// StartProcess starts cmd, which the kernel kills when the test process
// ends without stopping it, where it can (see dieWithParent).
func StartProcess(cmd *exec.Cmd) (*Process, error) {
	dieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &Process{cmd: cmd, exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.exited) }()
	return p, nil
}

// Exited is closed when the process has exited.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Stop asks the process to end (SIGTERM) and kills it if it has not
// within 5 seconds.
func (p *Process) Stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(5 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// FreePorts picks n free loopback ports: free now, so a caller retries
// with new ones if another process takes one before its server listens.
func FreePorts(n int) ([]int, error) {
	ports := make([]int, n)
	for i := range ports {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer ln.Close()
		ports[i] = ln.Addr().(*net.TCPAddr).Port
	}
	return ports, nil
}

// Tail returns up to n bytes of the end of a file (a server's log), or
// why it cannot.
func Tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}
