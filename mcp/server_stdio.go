package mcp

import (
	"context"
	"errors"
	"io"
	"os"
	"sync/atomic"
	"time"

	"github.com/toolwire/toolwire/jsonrpc"
)

// lineSender writes every message of a stream connection to one writer.
type lineSender struct{ w *jsonrpc.LineWriter }

func (l lineSender) send(m *jsonrpc.Message) error { return l.w.Write(m) }

func (l lineSender) finish(m *jsonrpc.Message) error {
	if m == nil {
		return nil
	}
	return l.w.Write(m)
}

// ServeStdio serves one client over standard input and output, as MCP's
// stdio transport: newline-delimited JSON-RPC, nothing else on stdout. It
// returns when stdin ends (after finishing the requests in flight) or ctx
// is cancelled. Log to stderr, never stdout.
func (s *Server) ServeStdio(ctx context.Context) error {
	growPipes(os.Stdin, os.Stdout)
	return s.ServeStream(ctx, os.Stdin, os.Stdout)
}

// ServeStream serves one client over a pair of byte streams carrying
// newline-delimited JSON-RPC messages. A malformed or oversized message is
// answered with an error and skipped; the connection stays up.
func (s *Server) ServeStream(ctx context.Context, r io.Reader, w io.Writer) error {
	lw := jsonrpc.NewLineWriter(w)
	out := lineSender{lw}
	c := newConn(s, out)
	c.openSession(randomID())
	s.track(c)
	defer c.close()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	lr := jsonrpc.NewLineReader(r, s.MaxMessageSize)
	readErr := make(chan error, 1)
	go (&reader{c: c, ctx: ctx, lr: lr, lw: lw, out: out, readErr: readErr}).loop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case err := <-readErr:
		// The client closed its end: stop subscriptions, then let the
		// requests in flight finish and write their responses.
		c.stopListeners()
		c.wg.Wait()
		if err == io.EOF {
			return nil
		}
		return err
	}
}

// relayDelay is how long a request is served on the goroutine that read
// it before a fresh goroutine takes over the reading.
const relayDelay = time.Millisecond

// Reader states: reading, serving a request inline, or handed on.
const (
	relayReading int32 = iota
	relayServing
	relayHanded
)

// reader is one goroutine's turn at reading a stream connection. A request
// is served on the goroutine that read it, so a quick response goes out
// with no hand-off between goroutines (each costs a thread wake-up). When a
// request takes longer than relayDelay, a fresh reader takes over and the
// serving goroutine ends with its request, so requests still run
// concurrently and cancellations are read.
type reader struct {
	c       *conn
	ctx     context.Context
	lr      *jsonrpc.LineReader
	lw      *jsonrpc.LineWriter
	out     sender
	readErr chan<- error
	state   atomic.Int32
	timer   *time.Timer
}

// handOn starts a fresh reader if the request being served inline is still
// running; it runs when the relay timer fires.
func (r *reader) handOn() {
	if r.state.CompareAndSwap(relayServing, relayHanded) {
		next := &reader{c: r.c, ctx: r.ctx, lr: r.lr, lw: r.lw, out: r.out, readErr: r.readErr}
		next.loop()
	}
}

// loop reads and handles messages until the input ends or the reading is
// handed on.
func (r *reader) loop() {
	c := r.c
	for {
		line, err := r.lr.ReadLine()
		if r.ctx.Err() != nil {
			return
		}
		if errors.Is(err, jsonrpc.ErrTooLarge) {
			_ = r.lw.Write(errorMessage(jsonrpc.ID{}, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "invalid request: %v", err)))
			continue
		}
		if err != nil {
			r.readErr <- err
			return
		}
		// The message owns what it keeps of the line from here on.
		msg, derr := r.lr.Decode(line)
		if derr != nil {
			var rpcErr *jsonrpc.Error
			errors.As(derr, &rpcErr)
			_ = r.lw.Write(errorMessage(msg.ID, rpcErr))
			continue
		}
		if !msg.IsRequest() || msg.Method == MethodInitialize { // initialize is ordered before what follows
			c.receive(r.ctx, msg, r.out, false)
			continue
		}
		c.wg.Add(1)
		r.state.Store(relayServing)
		if r.timer == nil {
			r.timer = time.AfterFunc(relayDelay, r.handOn)
		} else {
			r.timer.Reset(relayDelay)
		}
		c.serve(r.ctx, msg, r.out, time.Now())
		c.wg.Done()
		r.timer.Stop()
		// The state, not Stop, settles who reads on: a timer that fired
		// during an earlier request may still hand on now.
		if !r.state.CompareAndSwap(relayServing, relayReading) {
			return // a fresh reader has taken over
		}
	}
}
