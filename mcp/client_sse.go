package mcp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"

	"github.com/toolwire/toolwire/internal/sse"
	"github.com/toolwire/toolwire/jsonrpc"
)

// SSETransport connects to an MCP server over the deprecated HTTP+SSE
// transport of protocol 2024-11-05: a GET opens an event stream whose first
// event names the endpoint to POST messages to, and every response and
// server message arrives on that stream. Sessions over it always use the
// legacy handshake. Use it only for servers that offer nothing newer; see
// HTTPTransport.
type SSETransport struct {
	// URL is the server's event stream endpoint, e.g.
	// http://127.0.0.1:3001/sse.
	URL string
	// Header holds headers added to every HTTP request, e.g.
	// Authorization.
	Header http.Header
	// HTTPClient sends the requests; nil means http.DefaultClient. It must
	// not set a Timeout, which would cut the event stream.
	HTTPClient *http.Client
	// MaxMessageSize bounds a message from the server (default
	// jsonrpc.DefaultMaxMessageSize).
	MaxMessageSize int
}

type sseConn struct {
	url      string
	endpoint string // where messages are POSTed
	header   http.Header
	client   *http.Client
	limit    int
	ctx      context.Context // ends on close or when the stream does
	cancel   context.CancelFunc
	pending  pendingSet
	inbound  inboundRunner
	done     chan struct{} // closed when the stream has ended

	mu      sync.Mutex
	exitErr error
}

func (t *SSETransport) connect(ctx context.Context, in inboundFunc) (clientConn, error) {
	base, err := parseEndpoint(t.URL)
	if err != nil {
		return nil, fmt.Errorf("HTTP+SSE transport: %w", err)
	}
	cctx, cancel := context.WithCancel(context.Background())
	c := &sseConn{url: t.URL, header: t.Header, client: t.HTTPClient, limit: t.MaxMessageSize, ctx: cctx, cancel: cancel, done: make(chan struct{})}
	if c.client == nil {
		c.client = http.DefaultClient
	}
	if c.limit <= 0 {
		c.limit = jsonrpc.DefaultMaxMessageSize
	}
	c.inbound = inboundRunner{in: in, ctx: cctx}
	c.pending.init()

	// The stream outlives ctx, which bounds only the wait for the endpoint.
	stop := context.AfterFunc(ctx, cancel)
	fail := func(err error) (clientConn, error) {
		stop()
		cancel()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("HTTP+SSE transport: %w", context.Cause(ctx))
		}
		return nil, fmt.Errorf("HTTP+SSE transport: %w", err)
	}
	req, err := http.NewRequestWithContext(cctx, http.MethodGet, t.URL, nil)
	if err != nil {
		return fail(err)
	}
	c.setHeaders(req)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := c.client.Do(req)
	if err != nil {
		return fail(transportError(cctx, t.URL, err))
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		return fail(statusError(t.URL, resp, c.limit))
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		resp.Body.Close()
		return fail(fmt.Errorf("the server at %s did not open an event stream (Content-Type %q): is it an HTTP+SSE (2024-11-05) endpoint? For Streamable HTTP use HTTPTransport", t.URL, resp.Header.Get("Content-Type")))
	}
	r := newSSEReader(resp.Body, c.limit)
	for {
		ev, err := r.next()
		if err != nil {
			resp.Body.Close()
			if errors.Is(err, io.EOF) {
				err = fmt.Errorf("the server at %s closed the event stream before naming its message endpoint", t.URL)
			} else {
				err = transportError(cctx, t.URL, err)
			}
			return fail(err)
		}
		if ev.Name != "endpoint" {
			continue
		}
		ep, err := base.Parse(strings.TrimSpace(string(ev.Data)))
		if err != nil {
			resp.Body.Close()
			return fail(fmt.Errorf("the server at %s named an invalid message endpoint %q: %w", t.URL, ev.Data, err))
		}
		if ep.Scheme != base.Scheme || ep.Host != base.Host {
			resp.Body.Close()
			return fail(fmt.Errorf("the server at %s named a message endpoint on another origin (%s); refusing it", t.URL, ep.Redacted()))
		}
		c.endpoint = ep.String()
		break
	}
	if !stop() {
		resp.Body.Close()
		return fail(context.Cause(ctx))
	}
	go c.read(r, resp.Body)
	return c, nil
}

func (c *sseConn) setHeaders(req *http.Request) {
	for k, vs := range c.header {
		req.Header[http.CanonicalHeaderKey(k)] = append([]string(nil), vs...)
	}
}

// read delivers the stream's messages until it ends, then fails every
// request still waiting.
func (c *sseConn) read(r sseReader, body io.ReadCloser) {
	defer close(c.done)
	var err error
	for {
		var ev sse.Event
		ev, err = r.next()
		if err != nil {
			break
		}
		if ev.Name != "" && ev.Name != "message" {
			continue
		}
		m, derr := jsonrpc.Decode(ev.Data)
		if derr != nil {
			continue
		}
		if m.IsResponse() {
			c.pending.deliver(m)
			continue
		}
		c.inbound.handle(m)
	}
	body.Close()
	if c.ctx.Err() != nil {
		err = errClientClosed
	} else if errors.Is(err, io.EOF) {
		err = fmt.Errorf("the MCP server at %s closed the event stream", c.url)
	} else {
		err = fmt.Errorf("the event stream from the MCP server at %s broke: %w", c.url, err)
	}
	c.mu.Lock()
	c.exitErr = err
	c.mu.Unlock()
	c.pending.fail(err)
	c.cancel()
}

func (c *sseConn) streamErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.exitErr != nil {
		return c.exitErr
	}
	return errClientClosed
}

func (c *sseConn) post(ctx context.Context, m *jsonrpc.Message) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(m.Append(nil)))
	if err != nil {
		return err
	}
	c.setHeaders(req)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.client.Do(req)
	if err != nil {
		if c.ctx.Err() != nil && ctx.Err() == nil {
			return c.streamErr()
		}
		return transportError(ctx, c.endpoint, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return statusError(c.endpoint, resp, c.limit)
	}
	drain(resp.Body)
	return nil
}

func (c *sseConn) roundTrip(ctx context.Context, m *jsonrpc.Message, _ callHeaders) (*jsonrpc.Message, error) {
	key := m.ID.String()
	ch, err := c.pending.add(key)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", m.Method, err)
	}
	defer c.pending.remove(key)
	pctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(c.ctx, cancel)
	err = c.post(pctx, m)
	stop()
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s: %w", m.Method, context.Cause(ctx))
		}
		return nil, fmt.Errorf("%s: %w", m.Method, err)
	}
	select {
	case resp, ok := <-ch:
		if !ok {
			return nil, fmt.Errorf("%s: %w", m.Method, c.streamErr())
		}
		return resp, nil
	case <-ctx.Done():
		if m.Method != MethodInitialize {
			if n, err := jsonrpc.NewNotification(NotificationCancelled, CancelledParams{RequestID: m.ID, Reason: context.Cause(ctx).Error()}); err == nil {
				c.inbound.goRun(func() {
					sctx, cancel := context.WithTimeout(c.ctx, sessionDeleteTimeout)
					defer cancel()
					_ = c.post(sctx, n)
				})
			}
		}
		return nil, fmt.Errorf("%s: %w", m.Method, context.Cause(ctx))
	}
}

func (c *sseConn) send(ctx context.Context, m *jsonrpc.Message) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultCallTimeout)
		defer cancel()
	}
	return c.post(ctx, m)
}

func (c *sseConn) setLegacy(string) {}

// legacyOnly tells the session to skip the server/discover probe: this
// transport predates the modern revision.
func (c *sseConn) legacyOnly() {}

func (c *sseConn) close() error {
	c.cancel()
	<-c.done
	c.inbound.wait(inboundWaitTimeout)
	return nil
}
