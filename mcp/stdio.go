package mcp

import (
	"context"
	"errors"
	"io"
	"os"

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
	return s.ServeStream(ctx, os.Stdin, os.Stdout)
}

// ServeStream serves one client over a pair of byte streams carrying
// newline-delimited JSON-RPC messages. A malformed or oversized message is
// answered with an error and skipped; the connection stays up.
func (s *Server) ServeStream(ctx context.Context, r io.Reader, w io.Writer) error {
	lw := jsonrpc.NewLineWriter(w)
	out := lineSender{lw}
	c := newConn(s, out)
	s.track(c)
	defer c.close()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	lr := jsonrpc.NewLineReader(r, s.MaxMessageSize)
	readErr := make(chan error, 1)
	go c.readLoop(ctx, lr, lw, out, readErr)
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

// readLoop reads and handles messages until the input ends. A request is
// served on the goroutine that read it, after handing the reading on to a
// fresh goroutine: the response goes out without a hand-off between
// goroutines (each costs a wake-up), and requests still run concurrently.
func (c *conn) readLoop(ctx context.Context, lr *jsonrpc.LineReader, lw *jsonrpc.LineWriter, out sender, readErr chan<- error) {
	for {
		line, err := lr.ReadLine()
		if ctx.Err() != nil {
			return
		}
		if errors.Is(err, jsonrpc.ErrTooLarge) {
			_ = lw.Write(errorMessage(jsonrpc.ID{}, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "invalid request: %v", err)))
			continue
		}
		if err != nil {
			readErr <- err
			return
		}
		// Decode copies what it keeps, so the line's buffer may be reused
		// by the next read from here on.
		msg, derr := jsonrpc.Decode(line)
		if derr != nil {
			var rpcErr *jsonrpc.Error
			errors.As(derr, &rpcErr)
			_ = lw.Write(errorMessage(msg.ID, rpcErr))
			continue
		}
		if msg.IsRequest() && msg.Method != MethodInitialize { // initialize is ordered before what follows
			c.wg.Add(1)
			go c.readLoop(ctx, lr, lw, out, readErr)
			c.serve(ctx, msg, out)
			c.wg.Done()
			return
		}
		c.receive(ctx, msg, out, false)
	}
}
