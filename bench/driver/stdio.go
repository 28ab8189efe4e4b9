package driver

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"time"
)

// Stdio is an MCP session with a spawned server process over its
// stdin/stdout (newline-delimited JSON). Call is [Stream.Call].
type Stdio struct {
	*Stream
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout io.ReadCloser
	closed bool
}

// StartStdio spawns argv, with the server's stderr going to stderr (nil
// discards it), and performs the initialize handshake.
func StartStdio(argv []string, stderr io.Writer) (*Stdio, error) {
	return startStdio(argv, stderr, true)
}

func startStdio(argv []string, stderr io.Writer, initialize bool) (*Stdio, error) {
	if len(argv) == 0 {
		return nil, errors.New("driver: empty command")
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &Stdio{Stream: newStream(stdout, stdin), cmd: cmd, stdin: stdin, stdout: stdout}
	if !initialize {
		return s, nil
	}
	if err := s.initialize(); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// StartStdioModern spawns argv like [StartStdio] but performs no
// handshake: the session speaks the stateless ModernVersion, so send it
// calls from [NewModernToolCall].
func StartStdioModern(argv []string, stderr io.Writer) (*Stdio, error) {
	return startStdio(argv, stderr, false)
}

// Pid is the server's process id.
func (s *Stdio) Pid() int { return s.cmd.Process.Pid }

// Close closes the server's stdin, waits up to two seconds for it to exit,
// then kills it by PID. It always reaps the process.
func (s *Stdio) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	s.stdin.Close()
	done := make(chan error, 1)
	go func() {
		// Drain whatever is left so the server is not blocked writing.
		io.Copy(io.Discard, s.stdout)
		done <- s.cmd.Wait()
	}()
	select {
	case err := <-done:
		return exitErr(err)
	case <-time.After(2 * time.Second):
		s.cmd.Process.Kill()
		return exitErr(<-done)
	}
}

// Kill kills the server by PID at once and reaps it.
func (s *Stdio) Kill() error {
	if s.closed {
		return nil
	}
	s.closed = true
	s.cmd.Process.Kill()
	s.stdin.Close()
	io.Copy(io.Discard, s.stdout)
	return exitErr(s.cmd.Wait())
}

// exitErr ignores the exit status of a process we stopped ourselves.
func exitErr(err error) error {
	var ee *exec.ExitError
	if errors.As(err, &ee) || errors.Is(err, os.ErrProcessDone) {
		return nil
	}
	return err
}
