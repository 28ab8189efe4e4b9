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
// protocol. On Unix, the server runs in a process group of its own: a
// Ctrl-C on the terminal reaches the client, which ends its calls (a task
// is cancelled on the server) and then closes the server.
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

// stdioConn is a client's connection to a server process. Whoever waits
// for a response reads the server's stdout itself when nobody else is
// reading: the response then reaches its caller without a hand-off between
// goroutines, each of which costs a thread wake-up. Calls that find someone
// else reading wait for that reader to deliver their response; a reader
// that leaves with calls still waiting starts a goroutine that reads for
// them. Between calls, an idle reader picks up what the server sends on its
// own (notifications, requests) after idleReadDelay.
type stdioConn struct {
	name    string
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	stdout  io.Reader
	lr      *jsonrpc.LineReader
	w       *jsonrpc.LineWriter
	tail    *stderrTail
	inbound inboundRunner
	ctx     context.Context // ends when the process does
	cancel  context.CancelFunc
	// deadline sets the read deadline of stdout; nil when stdout has
	// none, and then only background goroutines read.
	deadline func(time.Time) error

	mu      sync.Mutex
	pending map[string]chan *jsonrpc.Message
	reader  *readTurn // who reads stdout now; nil for nobody
	// The idle timer is not re-armed by every call (a timer reset can
	// cost a syscall): it stays armed while calls come, and when it fires
	// within idleReadDelay of the last release it waits out the rest.
	idle        *time.Timer
	idleArmed   bool
	lastRelease time.Time
	closing     bool
	exitErr     error // why the connection ended
	done        chan struct{}
}

// readTurn is one goroutine's turn at reading stdout.
type readTurn struct{ background bool }

// idleReadDelay is how long stdout goes unread between calls before a
// goroutine reads what the server sends on its own.
const idleReadDelay = 2 * time.Millisecond

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
	ownProcessGroup(cmd)
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
	c := &stdioConn{name: t.Command, cmd: cmd, stdin: stdin, stdout: stdout, lr: jsonrpc.NewLineReader(stdout, t.MaxMessageSize),
		w: jsonrpc.NewLineWriter(stdin), tail: tail, inbound: inboundRunner{in: in, ctx: cctx},
		ctx: cctx, cancel: cancel, pending: map[string]chan *jsonrpc.Message{}, done: make(chan struct{})}
	if f, ok := stdout.(*os.File); ok && f.SetReadDeadline(time.Time{}) == nil {
		c.deadline = f.SetReadDeadline
	}
	c.mu.Lock() // readIdle may run before connect returns
	c.idle = time.AfterFunc(idleReadDelay, c.readIdle)
	c.idleArmed = true
	c.mu.Unlock()
	return c, nil
}

// take makes t the reader if nobody reads; c.mu is held.
func (c *stdioConn) take(t *readTurn) bool {
	if c.reader != nil || c.pending == nil {
		return false
	}
	c.reader = t
	return true
}

// release ends t's turn at reading, clearing any read deadline it set,
// and hands the reading on: to a background reader when calls still wait
// for responses or the connection is closing, else to the idle timer.
func (c *stdioConn) release(t *readTurn) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.reader != t {
		return
	}
	c.reader = nil
	if c.deadline != nil && !t.background {
		_ = c.deadline(time.Time{})
	}
	if c.pending == nil {
		return // the connection has ended
	}
	if len(c.pending) > 0 || c.closing {
		bg := &readTurn{background: true}
		c.reader = bg
		go c.readBackground(bg)
		return
	}
	c.lastRelease = time.Now()
	if !c.idleArmed {
		c.idleArmed = true
		c.idle.Reset(idleReadDelay)
	}
}

// readIdle reads what the server sends between calls.
func (c *stdioConn) readIdle() {
	bg := &readTurn{background: true}
	c.mu.Lock()
	c.idleArmed = false
	if c.reader != nil || c.pending == nil {
		c.mu.Unlock()
		return // the reader re-arms the timer when it is done
	}
	if quiet := time.Since(c.lastRelease); quiet < idleReadDelay {
		c.idleArmed = true
		c.idle.Reset(idleReadDelay - quiet)
		c.mu.Unlock()
		return
	}
	ok := c.take(bg)
	c.mu.Unlock()
	if ok {
		c.readBackground(bg)
	}
}

// readBackground reads for others until no call waits (and the
// connection is not closing), or stdout ends.
func (c *stdioConn) readBackground(t *readTurn) {
	for {
		if !c.readOne() && !c.isOpen() {
			return
		}
		c.mu.Lock()
		more := len(c.pending) > 0 || c.closing
		c.mu.Unlock()
		if !more {
			c.release(t)
			return
		}
	}
}

// readOne reads and delivers one message. It reports false when stdout
// has ended (the connection is then torn down) or a read deadline cut the
// read short.
func (c *stdioConn) readOne() bool {
	for {
		line, err := c.lr.ReadLine()
		if errors.Is(err, jsonrpc.ErrTooLarge) {
			continue
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return false
		}
		if err != nil {
			c.end()
			return false
		}
		m, derr := c.lr.Decode(line)
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
			return true
		}
		c.inbound.handle(m) // notifications in the order sent
		return true
	}
}

// end reaps the process after its stdout has ended and fails every request
// still waiting.
func (c *stdioConn) end() {
	werr := c.cmd.Wait()
	c.mu.Lock()
	c.exitErr = c.describeExit(werr)
	pending := c.pending
	c.pending = nil
	c.idle.Stop()
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
	c.readFor(ctx, ch)
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

// readFor reads stdout on the caller's goroutine, if nobody else is
// reading, until ch has the caller's response, ctx ends (a read deadline
// then cuts the read short), or stdout ends.
func (c *stdioConn) readFor(ctx context.Context, ch chan *jsonrpc.Message) {
	if c.deadline == nil {
		// Without read deadlines a read cannot be cut short: read in the
		// background.
		c.mu.Lock()
		if bg := (&readTurn{background: true}); c.take(bg) {
			go c.readBackground(bg)
		}
		c.mu.Unlock()
		return
	}
	t := &readTurn{}
	c.mu.Lock()
	ok := c.take(t)
	c.mu.Unlock()
	if !ok {
		return
	}
	stop := context.AfterFunc(ctx, func() {
		c.mu.Lock()
		if c.reader == t {
			_ = c.deadline(time.Unix(1, 0))
		}
		c.mu.Unlock()
	})
	defer stop()
	for len(ch) == 0 && ctx.Err() == nil {
		if !c.readOne() {
			if ctx.Err() == nil && c.isOpen() {
				continue // a deadline meant for an earlier turn
			}
			break
		}
	}
	c.release(t)
}

func (c *stdioConn) isOpen() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pending != nil
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
	c.mu.Lock()
	c.closing = true
	if bg := (&readTurn{background: true}); c.take(bg) {
		go c.readBackground(bg)
	}
	c.mu.Unlock()
	_ = c.stdin.Close()
	for _, step := range []func(){
		func() {},
		func() { _ = c.cmd.Process.Signal(syscall.SIGTERM) },
		func() { _ = c.cmd.Process.Kill() },
	} {
		step()
		select {
		case <-c.done:
			c.inbound.wait(inboundWaitTimeout)
			return nil
		case <-time.After(2 * time.Second):
		}
	}
	<-c.done
	c.inbound.wait(inboundWaitTimeout)
	return nil
}

// doneChan is closed once the server process has ended (endedConn).
func (c *stdioConn) doneChan() <-chan struct{} { return c.done }

// endErr says how the server process ended (endedConn).
func (c *stdioConn) endErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.exitErr
}
