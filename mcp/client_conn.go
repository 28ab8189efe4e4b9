package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/toolwire/toolwire/jsonrpc"
)

// streamConn runs a session over the ClientConn of a program's own
// transport: one goroutine reads every message, handing each response to
// the request waiting for it and the rest to the session.
type streamConn struct {
	conn    ClientConn
	pending pendingSet
	inbound inboundRunner
	ctx     context.Context // ends on close
	cancel  context.CancelFunc
	done    chan struct{} // closed when reading has ended

	mu  sync.Mutex
	err error // why reading ended
}

func newStreamConn(cc ClientConn, in inboundFunc) *streamConn {
	ctx, cancel := context.WithCancel(context.Background())
	c := &streamConn{conn: cc, ctx: ctx, cancel: cancel, done: make(chan struct{})}
	c.inbound = inboundRunner{in: in, ctx: ctx}
	c.pending.init()
	go c.read()
	return c
}

// read delivers the server's messages until the connection ends, then
// fails every request still waiting.
func (c *streamConn) read() {
	defer close(c.done)
	var err error
	for {
		var m *jsonrpc.Message
		if m, err = c.conn.Read(c.ctx); err != nil {
			break
		}
		if m.IsResponse() {
			c.pending.deliver(m)
			continue
		}
		c.inbound.handle(m)
	}
	switch {
	case c.ctx.Err() != nil:
		err = errClientClosed
	case errors.Is(err, io.EOF):
		err = errors.New("the MCP server closed the connection")
	default:
		err = fmt.Errorf("the connection to the MCP server broke: %w", err)
	}
	c.mu.Lock()
	c.err = err
	c.mu.Unlock()
	c.pending.fail(err)
	c.cancel()
}

func (c *streamConn) roundTrip(ctx context.Context, m *jsonrpc.Message, _ callHeaders) (*jsonrpc.Message, error) {
	key := m.ID.String()
	ch, err := c.pending.add(key)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", m.Method, err)
	}
	defer c.pending.remove(key)
	if err := c.conn.Write(ctx, m); err != nil {
		return nil, fmt.Errorf("%s: writing to the MCP server: %w", m.Method, err)
	}
	select {
	case resp, ok := <-ch:
		if !ok {
			return nil, fmt.Errorf("%s: %w", m.Method, c.endErr())
		}
		return resp, nil
	case <-ctx.Done():
		if m.Method != MethodInitialize { // which may not be cancelled
			if n, err := jsonrpc.NewNotification(NotificationCancelled, CancelledParams{RequestID: m.ID, Reason: context.Cause(ctx).Error()}); err == nil {
				_ = c.conn.Write(c.ctx, n)
			}
		}
		return nil, fmt.Errorf("%s: %w", m.Method, context.Cause(ctx))
	}
}

func (c *streamConn) send(ctx context.Context, m *jsonrpc.Message) error {
	return c.conn.Write(ctx, m)
}

func (c *streamConn) setLegacy(string) {}

// close closes the ClientConn, which ends reading, and waits for the
// client's handlers of server requests.
func (c *streamConn) close() error {
	c.cancel()
	err := c.conn.Close()
	<-c.done
	c.inbound.wait(inboundWaitTimeout)
	return err
}

// doneChan is closed once the connection has ended (endedConn).
func (c *streamConn) doneChan() <-chan struct{} { return c.done }

// endErr says why the connection ended (endedConn).
func (c *streamConn) endErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// messageConn presents the connection of a transport of this package as a
// ClientConn, for a program that exchanges messages itself rather than
// through a ClientSession.
type messageConn struct {
	conn   clientConn
	ctx    context.Context // ends on Close
	cancel context.CancelFunc
	calls  sync.WaitGroup // requests in flight

	mu    sync.Mutex
	queue []*jsonrpc.Message // received, not yet read
	ready chan struct{}      // signalled when queue grows
}

// connectMessages connects t and presents its connection as a ClientConn.
func connectMessages(ctx context.Context, t builtinTransport) (ClientConn, error) {
	c := &messageConn{ready: make(chan struct{}, 1)}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	conn, err := t.connect(ctx, func(_ context.Context, m *jsonrpc.Message) { c.push(m) })
	if err != nil {
		c.cancel()
		return nil, err
	}
	c.conn = conn
	return c, nil
}

func (c *messageConn) push(m *jsonrpc.Message) {
	c.mu.Lock()
	c.queue = append(c.queue, m)
	c.mu.Unlock()
	select {
	case c.ready <- struct{}{}:
	default:
	}
}

// Read returns the next message from the server: a response to a request
// written, or a message the server sent of its own.
func (c *messageConn) Read(ctx context.Context) (*jsonrpc.Message, error) {
	var ended <-chan struct{}
	if e, ok := c.conn.(endedConn); ok {
		ended = e.doneChan()
	}
	for {
		c.mu.Lock()
		if len(c.queue) > 0 {
			m := c.queue[0]
			c.queue[0] = nil
			c.queue = c.queue[1:]
			c.mu.Unlock()
			return m, nil
		}
		c.mu.Unlock()
		select {
		case <-c.ready:
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		case <-c.ctx.Done():
			return nil, errClientClosed
		case <-ended:
			c.mu.Lock()
			n := len(c.queue)
			c.mu.Unlock()
			if n == 0 {
				return nil, c.conn.(endedConn).endErr()
			}
		}
	}
}

// Write sends m. A request's response (or an error response saying why
// none came) arrives through Read; over Streamable HTTP, the request's
// method, name and protocol version (from its _meta) go into headers, but
// no tool arguments (Mcp-Param-*): Client.Connect mirrors those.
func (c *messageConn) Write(ctx context.Context, m *jsonrpc.Message) error {
	if !m.IsRequest() {
		return c.conn.send(ctx, m)
	}
	if c.ctx.Err() != nil {
		return errClientClosed
	}
	c.calls.Add(1)
	go func() {
		defer c.calls.Done()
		resp, err := c.conn.roundTrip(c.ctx, m, messageHeaders(m))
		if err != nil {
			var rpcErr *jsonrpc.Error
			if !errors.As(err, &rpcErr) {
				rpcErr = jsonrpc.NewError(jsonrpc.CodeInternalError, "%v", err)
			}
			resp = errorMessage(m.ID, rpcErr)
		} else if m.Method == MethodInitialize && resp.Error == nil {
			var res struct {
				ProtocolVersion string `json:"protocolVersion"`
			}
			if json.Unmarshal(resp.Result, &res) == nil {
				c.conn.setLegacy(res.ProtocolVersion)
			}
		}
		c.push(resp)
	}()
	return nil
}

// messageHeaders reads from a request what HTTP mirrors into headers.
func messageHeaders(m *jsonrpc.Message) callHeaders {
	var p struct {
		Name string `json:"name"`
		URI  string `json:"uri"`
		Meta struct {
			ProtocolVersion string `json:"io.modelcontextprotocol/protocolVersion"`
		} `json:"_meta"`
	}
	_ = json.Unmarshal(m.Params, &p)
	h := callHeaders{method: m.Method, name: p.Name, modern: p.Meta.ProtocolVersion}
	if m.Method == MethodResourcesRead {
		h.name = p.URI
	}
	return h
}

// Close ends the connection and the requests in flight.
func (c *messageConn) Close() error {
	c.cancel()
	err := c.conn.close()
	c.calls.Wait()
	return err
}

// Connect starts the server process and returns its connection, for a
// program that exchanges messages itself; Client.Connect opens a session.
func (t *CommandTransport) Connect(ctx context.Context) (ClientConn, error) {
	return connectMessages(ctx, t)
}

// Connect returns a connection to the server, for a program that
// exchanges messages itself; Client.Connect opens a session.
func (t *HTTPTransport) Connect(ctx context.Context) (ClientConn, error) {
	return connectMessages(ctx, t)
}

// Connect opens the event stream and returns the connection, for a
// program that exchanges messages itself; Client.Connect opens a session.
func (t *SSETransport) Connect(ctx context.Context) (ClientConn, error) {
	return connectMessages(ctx, t)
}
