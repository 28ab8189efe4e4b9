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
	lines := make(chan []byte)
	readErr := make(chan error, 1)
	go func() {
		lr := jsonrpc.NewLineReader(r, s.MaxMessageSize)
		for {
			line, err := lr.ReadLine()
			if err != nil && !errors.Is(err, jsonrpc.ErrTooLarge) {
				readErr <- err
				return
			}
			if err != nil {
				_ = lw.Write(errorMessage(jsonrpc.ID{}, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "invalid request: %v", err)))
				continue
			}
			// The line's buffer is reused by the next read; hand over a copy.
			select {
			case lines <- append([]byte(nil), line...):
			case <-ctx.Done():
				return
			}
		}
	}()
	for {
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
		case line := <-lines:
			msg, err := jsonrpc.Decode(line)
			if err != nil {
				var rpcErr *jsonrpc.Error
				errors.As(err, &rpcErr)
				_ = lw.Write(errorMessage(msg.ID, rpcErr))
				continue
			}
			c.receive(ctx, msg, out, true)
		}
	}
}
