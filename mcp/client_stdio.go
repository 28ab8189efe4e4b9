package mcp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/toolwire/toolwire/jsonrpc"
)

// CommandTransport runs an MCP server as a child process and speaks to it
// over its stdin and stdout. The server's stderr is kept (the last few KiB,
// quoted in errors) and copied to Stderr when set; it never mixes with the
// protocol.
type CommandTransport struct {
	Command string
	Args    []string
	// Env is added to the client's own environment ("KEY=value").
	Env []string
	// Dir is the working directory; empty means the client's.
	Dir string
	// Stderr receives the server's stderr, when set.
	Stderr io.Writer
	// MaxMessageSize bounds a message from the server (default
	// jsonrpc.DefaultMaxMessageSize).
	MaxMessageSize int
}

// stderrTail keeps the last bytes a process wrote to stderr.
type stderrTail struct {
	mu  sync.Mutex
	buf []byte
	w   io.Writer
}

const stderrTailSize = 4 << 10

func (t *stderrTail) Write(p []byte) (int, error) {
	t.mu.Lock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > stderrTailSize {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-stderrTailSize:]...)
	}
	t.mu.Unlock()
	if t.w != nil {
		_, _ = t.w.Write(p)
	}
	return len(p), nil
}

func (t *stderrTail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(bytes.TrimSpace(t.buf))
}

type stdioConn struct {
	name   string
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	w      *jsonrpc.LineWriter
	tail   *stderrTail
	in     inboundFunc
	ctx    context.Context // ends when the process does
	cancel context.CancelFunc

	mu      sync.Mutex
	pending map[string]chan *jsonrpc.Message
	exitErr error // why the connection ended
	done    chan struct{}
}

func (t *CommandTransport) connect(ctx context.Context, in inboundFunc) (clientConn, error) {
	if t.Command == "" {
		return nil, errors.New("stdio transport: no command to run")
	}
	path, err := exec.LookPath(t.Command)
	if err != nil {
		return nil, fmt.Errorf("stdio transport: cannot run %q: %w (is it installed and on PATH?)", t.Command, err)
	}
	cmd := exec.Command(path, t.Args...)
	cmd.Dir = t.Dir
	cmd.Env = append(os.Environ(), t.Env...)
	tail := &stderrTail{w: t.Stderr}
	cmd.Stderr = tail
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("stdio transport: starting %q: %w", t.Command, err)
	}
	cctx, cancel := context.WithCancel(context.Background())
	c := &stdioConn{name: t.Command, cmd: cmd, stdin: stdin, w: jsonrpc.NewLineWriter(stdin), tail: tail, in: in,
		ctx: cctx, cancel: cancel, pending: map[string]chan *jsonrpc.Message{}, done: make(chan struct{})}
	go c.read(stdout, t.MaxMessageSize)
	return c, nil
}

// read delivers the server's messages until its stdout ends, then reaps the
// process and fails every request still waiting.
func (c *stdioConn) read(stdout io.Reader, limit int) {
	lr := jsonrpc.NewLineReader(stdout, limit)
	for {
		line, err := lr.ReadLine()
		if errors.Is(err, jsonrpc.ErrTooLarge) {
			continue
		}
		if err != nil {
			break
		}
		m, derr := jsonrpc.Decode(line)
		if derr != nil {
			// A server that prints something else on stdout breaks the
			// protocol; say so, and go on reading.
			fmt.Fprintf(c.tail, "\n[toolwire: ignored a line on stdout that is not MCP: %.200q: %v]\n", line, derr)
			continue
		}
		if m.IsResponse() {
			c.mu.Lock()
			ch := c.pending[m.ID.String()]
			delete(c.pending, m.ID.String())
			c.mu.Unlock()
			if ch != nil {
				ch <- m
			}
			continue
		}
		go c.in(c.ctx, m)
	}
	werr := c.cmd.Wait()
	c.mu.Lock()
	c.exitErr = c.describeExit(werr)
	pending := c.pending
	c.pending = nil
	c.mu.Unlock()
	for _, ch := range pending {
		close(ch)
	}
	c.cancel()
	close(c.done)
}

func (c *stdioConn) describeExit(werr error) error {
	status := "exited"
	var ee *exec.ExitError
	if errors.As(werr, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			status = "was killed by signal " + ws.Signal().String()
		} else {
			status = fmt.Sprintf("exited with status %d", ee.ExitCode())
		}
	} else if werr != nil {
		status = "failed: " + werr.Error()
	}
	msg := fmt.Sprintf("MCP server %q %s", c.name, status)
	if tail := c.tail.String(); tail != "" {
		msg += "; its stderr ends with:\n" + tail
	}
	return errors.New(msg)
}

func (c *stdioConn) roundTrip(ctx context.Context, m *jsonrpc.Message, _ callHeaders) (*jsonrpc.Message, error) {
	ch := make(chan *jsonrpc.Message, 1)
	key := m.ID.String()
	c.mu.Lock()
	if c.pending == nil {
		err := c.exitErr
		c.mu.Unlock()
		return nil, err
	}
	c.pending[key] = ch
	c.mu.Unlock()
	if err := c.w.Write(m); err != nil {
		c.forget(key)
		return nil, c.writeErr(err)
	}
	select {
	case resp, ok := <-ch:
		if !ok {
			c.mu.Lock()
			err := c.exitErr
			c.mu.Unlock()
			return nil, fmt.Errorf("%s: %w", m.Method, err)
		}
		return resp, nil
	case <-ctx.Done():
		c.forget(key)
		if n, err := jsonrpc.NewNotification(NotificationCancelled, CancelledParams{RequestID: m.ID, Reason: context.Cause(ctx).Error()}); err == nil {
			_ = c.w.Write(n)
		}
		return nil, fmt.Errorf("%s: %w", m.Method, context.Cause(ctx))
	}
}

func (c *stdioConn) forget(key string) {
	c.mu.Lock()
	if c.pending != nil {
		delete(c.pending, key)
	}
	c.mu.Unlock()
}

func (c *stdioConn) writeErr(err error) error {
	select {
	case <-c.done:
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.exitErr
	case <-time.After(100 * time.Millisecond):
		return fmt.Errorf("writing to MCP server %q: %w", c.name, err)
	}
}

func (c *stdioConn) send(_ context.Context, m *jsonrpc.Message) error {
	if err := c.w.Write(m); err != nil {
		return c.writeErr(err)
	}
	return nil
}

func (c *stdioConn) setLegacy(string) {}

// close ends the server as the stdio binding asks: close its stdin, wait,
// then SIGTERM, then SIGKILL.
func (c *stdioConn) close() error {
	_ = c.stdin.Close()
	for _, step := range []func(){
		func() {},
		func() { _ = c.cmd.Process.Signal(syscall.SIGTERM) },
		func() { _ = c.cmd.Process.Kill() },
	} {
		step()
		select {
		case <-c.done:
			return nil
		case <-time.After(2 * time.Second):
		}
	}
	<-c.done
	return nil
}
