package mcp

import (
	"context"
	"errors"
	"io"
	"sync"

	"github.com/toolwire/toolwire/jsonrpc"
)

// InMemoryTransport connects a client to a Server in the same process,
// with no process, socket or port: each Connect serves a new connection of
// Server, as ServeStream does, over a pair of in-memory pipes carrying the
// same newline-delimited JSON as stdio. Use it to test a server, or an
// agent using its tools, without starting anything.
type InMemoryTransport struct {
	Server *Server
}

// Connect starts serving a connection of t.Server and returns the
// client's end. The server serves until Close; ctx gives it its values.
func (t *InMemoryTransport) Connect(ctx context.Context) (ClientConn, error) {
	if t.Server == nil {
		return nil, errors.New("in-memory transport: no Server to connect to (set InMemoryTransport.Server)")
	}
	fromServer, toClient := io.Pipe()
	fromClient, toServer := io.Pipe()
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	c := &pipeConn{r: fromServer, w: toServer, lr: jsonrpc.NewLineReader(fromServer, t.Server.MaxMessageSize),
		lw: jsonrpc.NewLineWriter(toServer), cancel: cancel, served: make(chan struct{})}
	go func() {
		defer close(c.served)
		_ = t.Server.ServeStream(sctx, fromClient, toClient)
		// The client reads the end of the stream; what the server still
		// writes fails.
		toClient.Close()
		fromClient.Close()
	}()
	return c, nil
}

// pipeConn is the client's end of an in-memory connection.
type pipeConn struct {
	r      *io.PipeReader
	w      *io.PipeWriter
	lr     *jsonrpc.LineReader
	lw     *jsonrpc.LineWriter
	cancel context.CancelFunc // ends the serving
	served chan struct{}      // closed when the server is done
	once   sync.Once
}

// Read returns the next message from the server; a done ctx ends the
// connection's reading, as a closed pipe does.
func (c *pipeConn) Read(ctx context.Context) (*jsonrpc.Message, error) {
	stop := context.AfterFunc(ctx, func() { c.r.CloseWithError(context.Cause(ctx)) })
	defer stop()
	for {
		line, err := c.lr.ReadLine()
		if errors.Is(err, jsonrpc.ErrTooLarge) {
			continue
		}
		if err != nil {
			return nil, err
		}
		m, err := c.lr.Decode(line)
		if err != nil {
			continue // the server writes only messages
		}
		return m, nil
	}
}

// Write sends m to the server.
func (c *pipeConn) Write(_ context.Context, m *jsonrpc.Message) error {
	return c.lw.Write(m)
}

// Close ends the connection: the server sees its input end, and stops
// serving it.
func (c *pipeConn) Close() error {
	c.once.Do(func() {
		c.w.Close()
		c.cancel()
		<-c.served
		c.r.Close()
	})
	return nil
}
