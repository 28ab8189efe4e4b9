package mcp

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/toolwire/toolwire/internal/sse"
	"github.com/toolwire/toolwire/jsonrpc"
)

// Streamable HTTP client defaults.
const (
	// defaultSSERetry is the reconnection delay when the server names none.
	defaultSSERetry = time.Second
	// maxStreamResumes bounds the reconnections of one response stream that
	// bring no message.
	maxStreamResumes = 10
	// sessionDeleteTimeout bounds the DELETE that ends a legacy session.
	sessionDeleteTimeout = 2 * time.Second
	// inboundWaitTimeout bounds how long close waits for the client's
	// handlers of server requests to return.
	inboundWaitTimeout = 5 * time.Second
	// standaloneWait bounds how long setLegacy waits for the server to
	// answer the GET that opens the standalone stream.
	standaloneWait = 3 * time.Second
	// errorExcerptLen bounds the part of an error body quoted in errors.
	errorExcerptLen = 300
)

// errSessionExpired reports that a legacy server no longer knows the
// session a request carried (HTTP 404): the client starts a new one.
var errSessionExpired = errors.New("the server no longer knows this session (HTTP 404)")

// HTTPTransport connects to an MCP server over Streamable HTTP, in either
// protocol era: 2026-07-28 (one independent POST per request) or the legacy
// revisions 2025-03-26 to 2025-11-25 (a session opened by initialize, a
// standalone GET stream for server messages, resumable streams).
//
// The zero value is not usable: set URL.
type HTTPTransport struct {
	// URL is the server's MCP endpoint, e.g. http://127.0.0.1:3001/mcp.
	URL string
	// Header holds headers added to every HTTP request, e.g.
	// Authorization. The transport's own headers take precedence.
	Header http.Header
	// HTTPClient sends the requests; nil means http.DefaultClient. It must
	// not set a Timeout, which would cut long event streams: every request
	// is bounded by its context instead.
	HTTPClient *http.Client
	// MaxMessageSize bounds a message from the server (default
	// jsonrpc.DefaultMaxMessageSize).
	MaxMessageSize int
}

// parseEndpoint parses the URL of a server endpoint, which must be http or
// https and name a host.
func parseEndpoint(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("invalid URL %q: %w", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("invalid URL %q: want http:// or https:// and a host", raw)
	}
	return u, nil
}

func (t *HTTPTransport) connect(_ context.Context, in inboundFunc) (clientConn, error) {
	if _, err := parseEndpoint(t.URL); err != nil {
		return nil, fmt.Errorf("streamable HTTP transport: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &httpConn{
		url:    t.URL,
		header: t.Header,
		client: t.HTTPClient,
		limit:  t.MaxMessageSize,
		ctx:    ctx,
		cancel: cancel,
	}
	if c.client == nil {
		c.client = http.DefaultClient
	}
	if c.limit <= 0 {
		c.limit = jsonrpc.DefaultMaxMessageSize
	}
	c.inbound = inboundRunner{in: in, ctx: ctx}
	c.pending.init()
	return c, nil
}

// httpConn is one Streamable HTTP connection.
type httpConn struct {
	url    string
	header http.Header
	client *http.Client
	limit  int
	// ctx ends on close; every HTTP request is bounded by it too.
	ctx     context.Context
	cancel  context.CancelFunc
	pending pendingSet
	inbound inboundRunner

	mu        sync.Mutex
	sessionID string // legacy: from the initialize response
	version   string // legacy: the negotiated version, after initialize
	getCancel context.CancelFunc
	closed    bool
	streams   sync.WaitGroup // the standalone GET stream

	// proto is the HTTP version of the last response, major<<8 | minor
	// (for the telemetry's network.protocol.version).
	proto atomic.Uint32
}

// newRequest makes an HTTP request to the endpoint with the custom headers
// and the content negotiation headers.
func (c *httpConn) newRequest(ctx context.Context, method string, body []byte) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.url, rd)
	if err != nil {
		return nil, err
	}
	for k, vs := range c.header {
		req.Header[http.CanonicalHeaderKey(k)] = append([]string(nil), vs...)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
	} else if method == http.MethodGet {
		req.Header.Set("Accept", "text/event-stream")
	}
	return req, nil
}

// legacyHeaders sets the session id and version of a legacy session; it
// returns the session id sent.
func (c *httpConn) legacyHeaders(req *http.Request) string {
	c.mu.Lock()
	sid, v := c.sessionID, c.version
	c.mu.Unlock()
	if sid != "" {
		req.Header.Set(HeaderSessionID, sid)
	}
	if v != "" {
		req.Header.Set(HeaderProtocolVersion, v)
	}
	return sid
}

// bound returns a context that ends with ctx or with the connection.
func (c *httpConn) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	rctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(c.ctx, func() { cancel(errClientClosed) })
	return rctx, func() { stop(); cancel(context.Canceled) }
}

var errClientClosed = errors.New("the client session is closed")

func (c *httpConn) roundTrip(ctx context.Context, m *jsonrpc.Message, h callHeaders) (*jsonrpc.Message, error) {
	key := m.ID.String()
	ch, err := c.pending.add(key)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", m.Method, err)
	}
	defer c.pending.remove(key)
	rctx, cancel := c.bound(ctx)
	defer cancel()

	req, err := c.newRequest(rctx, http.MethodPost, m.Append(nil))
	if err != nil {
		return nil, err
	}
	sid := ""
	legacy := h.modern == ""
	if !legacy {
		setModernHeaders(req.Header, m.Method, h)
	} else if m.Method != MethodInitialize {
		sid = c.legacyHeaders(req)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		err = transportError(rctx, c.url, err)
		if legacy && ctx.Err() != nil {
			c.cancelRequest(m)
		}
		return nil, fmt.Errorf("%s: %w", m.Method, err)
	}
	defer resp.Body.Close()
	if v := uint32(resp.ProtoMajor)<<8 | uint32(resp.ProtoMinor); c.proto.Load() != v {
		c.proto.Store(v)
	}
	switch {
	case resp.StatusCode == http.StatusNotFound && sid != "":
		drain(resp.Body)
		c.mu.Lock()
		if c.sessionID == sid {
			c.sessionID = ""
		}
		c.mu.Unlock()
		return nil, fmt.Errorf("%s: %w", m.Method, errSessionExpired)
	case resp.StatusCode == http.StatusAccepted:
		drain(resp.Body)
		return nil, fmt.Errorf("%s: the MCP server at %s answered the request with 202 Accepted and no response", m.Method, c.url)
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		return nil, fmt.Errorf("%s: %w", m.Method, statusError(c.url, resp, c.limit))
	}
	if legacy && m.Method == MethodInitialize {
		c.mu.Lock()
		c.sessionID = resp.Header.Get(HeaderSessionID)
		c.mu.Unlock()
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch mt {
	case "application/json":
		body, err := jsonrpc.ReadBody(resp.Body, resp.ContentLength, c.limit)
		if err != nil {
			return nil, fmt.Errorf("%s: reading the response from %s: %w", m.Method, c.url, transportError(rctx, c.url, err))
		}
		r, err := decodeOwned(body)
		if err != nil || !r.IsResponse() {
			return nil, fmt.Errorf("%s: the MCP server at %s sent something other than a JSON-RPC response: %s", m.Method, c.url, excerpt(body, mt))
		}
		return r, nil
	case "text/event-stream":
		r, err := c.awaitStream(rctx, resp.Body, m, ch, legacy)
		if err != nil && legacy && ctx.Err() != nil {
			c.cancelRequest(m)
		}
		return r, err
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	return nil, fmt.Errorf("%s: the MCP server at %s answered with Content-Type %q, want application/json or text/event-stream: %s", m.Method, c.url, resp.Header.Get("Content-Type"), excerpt(body, mt))
}

// setModernHeaders mirrors a modern request's method, name and annotated
// arguments into headers.
func setModernHeaders(hdr http.Header, method string, h callHeaders) {
	hdr.Set(HeaderProtocolVersion, h.modern)
	hdr.Set(HeaderMethod, method)
	switch method {
	case MethodToolsCall, MethodPromptsGet, MethodResourcesRead, MethodTasksGet, MethodTasksUpdate, MethodTasksCancel:
		hdr.Set(HeaderName, encodeHeaderValue(h.name))
	}
	for name, v := range h.params {
		hdr.Set(HeaderParamPrefix+name, encodeHeaderValue(v))
	}
}

// encodeHeaderValue returns v as a header value: unchanged when it is plain
// visible ASCII (spaces inside allowed), else in the =?base64?…?= sentinel
// form, which also wraps values that look like the sentinel.
func encodeHeaderValue(v string) string {
	plain := !strings.HasPrefix(v, " ") && !strings.HasSuffix(v, " ") &&
		!(strings.HasPrefix(v, "=?base64?") && strings.HasSuffix(v, "?="))
	for i := 0; plain && i < len(v); i++ {
		if c := v[i]; c < 0x20 || c > 0x7e {
			plain = false
		}
	}
	if plain {
		return v
	}
	return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(v)) + "?="
}

// awaitStream reads a POST's event stream until the response to m arrives.
// A legacy stream that ends first is resumed with GET and Last-Event-ID.
func (c *httpConn) awaitStream(ctx context.Context, body io.ReadCloser, m *jsonrpc.Message, ch <-chan *jsonrpc.Message, legacy bool) (*jsonrpc.Message, error) {
	r := newSSEReader(body, c.limit)
	key := m.ID.String()
	for resumes := 0; ; {
		n, found, err := c.readEvents(r, key)
		_ = body.Close()
		if n > 0 {
			resumes = 0
		}
		select {
		case resp, ok := <-ch:
			if ok {
				return resp, nil
			}
			return nil, fmt.Errorf("%s: %w", m.Method, errClientClosed)
		default:
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s: %w", m.Method, context.Cause(ctx))
		}
		if found {
			// Delivered to a waiter that left: cannot happen for our own
			// key, which stays registered until we return.
			return nil, fmt.Errorf("%s: response lost", m.Method)
		}
		why := "the server closed the response stream before sending the response"
		if errors.Is(err, sse.ErrTruncated) {
			why = "the server closed the response stream in the middle of an event, before sending the response"
		} else if err != nil && !errors.Is(err, io.EOF) {
			why = fmt.Sprintf("the response stream broke before the response arrived: %v", transportError(ctx, c.url, err))
		}
		if !legacy || r.LastID() == "" {
			return nil, fmt.Errorf("%s: %s (MCP server at %s)", m.Method, why, c.url)
		}
		if resumes >= maxStreamResumes {
			return nil, fmt.Errorf("%s: %s, and %d reconnections brought nothing (MCP server at %s)", m.Method, why, resumes, c.url)
		}
		resumes++
		t := time.NewTimer(r.retryDelay())
		select {
		case resp, ok := <-ch:
			t.Stop()
			if ok {
				return resp, nil
			}
			return nil, fmt.Errorf("%s: %w", m.Method, errClientClosed)
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("%s: %w", m.Method, context.Cause(ctx))
		case <-t.C:
		}
		resp, err := c.get(ctx, r.LastID())
		if err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("%s: %w", m.Method, context.Cause(ctx))
			}
			var se *httpStatusError
			if errors.As(err, &se) {
				return nil, fmt.Errorf("%s: %s, and resuming it failed: %w", m.Method, why, err)
			}
			continue // a transient failure: try again after the delay
		}
		body = resp.Body
		r.Reset(body)
	}
}

// readEvents delivers the messages of an event stream until it ends or the
// response with id want arrives. It returns the number of messages read.
func (c *httpConn) readEvents(r sseReader, want string) (n int, found bool, err error) {
	for {
		ev, err := r.next()
		if err != nil {
			return n, false, err
		}
		if ev.Name != "" && ev.Name != "message" {
			continue
		}
		m, derr := jsonrpc.Decode(ev.Data)
		if derr != nil {
			continue
		}
		n++
		if m.IsResponse() {
			c.pending.deliver(m)
			if want != "" && m.ID.String() == want {
				return n, true, nil
			}
			continue
		}
		c.inbound.handle(m)
	}
}

// get opens an event stream with GET: the standalone stream, or a resumed
// one when lastID is set. Only a 200 event stream is a success.
func (c *httpConn) get(ctx context.Context, lastID string) (*http.Response, error) {
	req, err := c.newRequest(ctx, http.MethodGet, nil)
	if err != nil {
		return nil, err
	}
	c.legacyHeaders(req)
	if lastID != "" {
		req.Header.Set(HeaderLastEventID, lastID)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, transportError(ctx, c.url, err)
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if resp.StatusCode != http.StatusOK || mt != "text/event-stream" {
		defer resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			drain(resp.Body)
			return nil, &httpStatusError{url: c.url, status: resp.Status, excerpt: "GET did not return an event stream (Content-Type " + strconv.Quote(resp.Header.Get("Content-Type")) + ")"}
		}
		return nil, statusError(c.url, resp, c.limit)
	}
	return resp, nil
}

// cancelRequest tells a legacy server that the client gave up on m.
func (c *httpConn) cancelRequest(m *jsonrpc.Message) {
	if m.Method == MethodInitialize {
		return
	}
	n, err := jsonrpc.NewNotification(NotificationCancelled, CancelledParams{RequestID: m.ID, Reason: "the client stopped waiting"})
	if err != nil {
		return
	}
	c.inbound.goRun(func() {
		ctx, cancel := context.WithTimeout(c.ctx, sessionDeleteTimeout)
		defer cancel()
		_ = c.send(ctx, n)
	})
}

func (c *httpConn) send(ctx context.Context, m *jsonrpc.Message) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultCallTimeout)
		defer cancel()
	}
	rctx, cancel := c.bound(ctx)
	defer cancel()
	req, err := c.newRequest(rctx, http.MethodPost, m.Append(nil))
	if err != nil {
		return err
	}
	sid := c.legacyHeaders(req)
	resp, err := c.client.Do(req)
	if err != nil {
		return transportError(rctx, c.url, err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound && sid != "":
		drain(resp.Body)
		return errSessionExpired
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		return statusError(c.url, resp, c.limit)
	}
	drain(resp.Body)
	return nil
}

// setLegacy records the negotiated version and opens the standalone GET
// stream, waiting briefly for the server to answer it so that messages
// sent on it right after are not lost.
func (c *httpConn) setLegacy(version string) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.version = version
	if c.getCancel != nil {
		c.getCancel()
	}
	ctx, cancel := context.WithCancel(c.ctx)
	c.getCancel = cancel
	c.streams.Add(1)
	c.mu.Unlock()
	ready := make(chan struct{})
	go c.standalone(ctx, ready)
	t := time.NewTimer(standaloneWait)
	defer t.Stop()
	select {
	case <-ready:
	case <-t.C:
	case <-ctx.Done():
	}
}

// standalone keeps the legacy session's GET stream open until close,
// reconnecting (with Last-Event-ID) when it drops. A server that does not
// offer the stream (any status but 200) is left alone.
func (c *httpConn) standalone(ctx context.Context, ready chan struct{}) {
	defer c.streams.Done()
	var once sync.Once
	signal := func() { once.Do(func() { close(ready) }) }
	defer signal()
	r := newSSEReader(nil, c.limit)
	for failures := 0; failures < maxStreamResumes; {
		resp, err := c.get(ctx, r.LastID())
		signal()
		if ctx.Err() != nil {
			if resp != nil {
				resp.Body.Close()
			}
			return
		}
		if err != nil {
			var se *httpStatusError
			if errors.As(err, &se) {
				return // no standalone stream here
			}
			failures++
		} else {
			r.Reset(resp.Body)
			n, _, _ := c.readEvents(r, "")
			resp.Body.Close()
			if n > 0 {
				failures = 0
			} else {
				failures++
			}
		}
		t := time.NewTimer(r.retryDelay())
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// close ends the standalone stream and every request in flight, and ends
// a legacy session with DELETE.
func (c *httpConn) close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	sid := c.sessionID
	c.mu.Unlock()
	c.cancel()
	c.pending.fail(errClientClosed)
	if sid != "" {
		ctx, cancel := context.WithTimeout(context.Background(), sessionDeleteTimeout)
		if req, err := c.newRequest(ctx, http.MethodDelete, nil); err == nil {
			req.Header.Set(HeaderSessionID, sid)
			c.mu.Lock()
			if c.version != "" {
				req.Header.Set(HeaderProtocolVersion, c.version)
			}
			c.mu.Unlock()
			if resp, err := c.client.Do(req); err == nil {
				drain(resp.Body)
				resp.Body.Close()
			}
		}
		cancel()
	}
	c.streams.Wait()
	c.inbound.wait(inboundWaitTimeout)
	return nil
}

// isHTTP marks connections whose requests mirror tool arguments into
// headers, and so must refuse tools with invalid x-mcp-header annotations.
func (c *httpConn) isHTTP() {}

// protocolVersion is the HTTP version of the last response; "" before
// the first.
func (c *httpConn) protocolVersion() string {
	v := c.proto.Load()
	if v == 0 {
		return ""
	}
	return httpVersion(int(v>>8), int(v&0xff))
}

// legacySession is the id of the legacy session; "" for none.
func (c *httpConn) legacySession() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sessionID
}

// pendingSet holds the requests awaiting a response, by id.
type pendingSet struct {
	mu  sync.Mutex
	m   map[string]chan *jsonrpc.Message
	err error // set when no more requests are accepted
}

func (p *pendingSet) init() { p.m = map[string]chan *jsonrpc.Message{} }

func (p *pendingSet) add(key string) (<-chan *jsonrpc.Message, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		return nil, p.err
	}
	ch := make(chan *jsonrpc.Message, 1)
	p.m[key] = ch
	return ch, nil
}

func (p *pendingSet) remove(key string) {
	p.mu.Lock()
	delete(p.m, key)
	p.mu.Unlock()
}

// deliver hands a response to its waiter, if any.
func (p *pendingSet) deliver(m *jsonrpc.Message) {
	key := m.ID.String()
	p.mu.Lock()
	ch := p.m[key]
	delete(p.m, key)
	p.mu.Unlock()
	if ch != nil {
		ch <- m
	}
}

// fail closes every waiter's channel and refuses new requests with err.
func (p *pendingSet) fail(err error) {
	p.mu.Lock()
	m := p.m
	p.m = map[string]chan *jsonrpc.Message{}
	if p.err == nil {
		p.err = err
	}
	p.mu.Unlock()
	for _, ch := range m {
		close(ch)
	}
}

// inboundRunner passes the server's notifications and requests to the
// session: notifications in order, requests each on its own goroutine (the
// session answers them through send).
type inboundRunner struct {
	in  inboundFunc
	ctx context.Context

	mu      sync.Mutex
	waiting bool // wait began: nothing new starts (a WaitGroup must not grow from zero during Wait)
	wg      sync.WaitGroup
}

func (r *inboundRunner) handle(m *jsonrpc.Message) {
	if m.IsNotification() {
		r.in(r.ctx, m)
		return
	}
	r.goRun(func() { r.in(r.ctx, m) })
}

// goRun runs f on a goroutine of its own, unless wait began: the
// connection is closing, and f would find it closed.
func (r *inboundRunner) goRun(f func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.waiting {
		return
	}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		f()
	}()
}

// wait waits for running handlers, at most d: a handler that ignores its
// cancelled context is left behind.
func (r *inboundRunner) wait(d time.Duration) {
	r.mu.Lock()
	r.waiting = true
	r.mu.Unlock()
	done := make(chan struct{})
	go func() {
		r.wg.Wait()
		close(done)
	}()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
}

// httpStatusError is an HTTP error answer that is not a JSON-RPC error.
type httpStatusError struct {
	url, status, excerpt string
}

func (e *httpStatusError) Error() string {
	if e.excerpt == "" {
		return fmt.Sprintf("the MCP server at %s answered %s", e.url, e.status)
	}
	return fmt.Sprintf("the MCP server at %s answered %s: %s", e.url, e.status, e.excerpt)
}

// statusError describes a non-2xx answer: the JSON-RPC error it carries,
// else the status and the start of the body.
func statusError(u string, resp *http.Response, limit int) error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, int64(min(limit, 64<<10))))
	if m, err := jsonrpc.Decode(body); err == nil && m.IsResponse() && m.Error != nil {
		return m.Error
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return &httpStatusError{url: u, status: resp.Status, excerpt: excerpt(body, mt)}
}

// excerpt returns the readable start of a body: HTML reduced to its text.
func excerpt(body []byte, mediaType string) string {
	s := string(body)
	if mediaType == "text/html" || strings.HasPrefix(strings.TrimSpace(s), "<") {
		s = htmlText(s)
	}
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > errorExcerptLen {
		cut := errorExcerptLen
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// htmlText drops the tags, scripts and styles of an HTML page.
func htmlText(s string) string {
	var b strings.Builder
	lower := strings.ToLower(s)
	for i := 0; i < len(s); {
		if s[i] != '<' {
			b.WriteByte(s[i])
			i++
			continue
		}
		skipTo := ""
		switch {
		case strings.HasPrefix(lower[i:], "<script"):
			skipTo = "</script>"
		case strings.HasPrefix(lower[i:], "<style"):
			skipTo = "</style>"
		}
		if skipTo != "" {
			if j := strings.Index(lower[i:], skipTo); j >= 0 {
				i += j + len(skipTo)
				continue
			}
			break
		}
		j := strings.IndexByte(s[i:], '>')
		if j < 0 {
			break
		}
		i += j + 1
		b.WriteByte(' ')
	}
	return b.String()
}

// transportError explains why an HTTP exchange failed: the context's
// cause, a server that cannot be reached, or the error itself.
func transportError(ctx context.Context, u string, err error) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Op == "dial" {
		return fmt.Errorf("cannot reach MCP server at %s: %w", u, err)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) {
		// The server (or a proxy in front of it) went away mid-request:
		// a replica killed, a process restarted.
		return fmt.Errorf("the connection to the MCP server at %s ended before its response was complete (%w): the request may or may not have run there; retry it only if running it twice is safe", u, err)
	}
	return fmt.Errorf("MCP server at %s: %w", u, err)
}

func drain(r io.Reader) { _, _ = io.Copy(io.Discard, io.LimitReader(r, 64<<10)) }

// sseReader reads a response or standalone event stream, keeping the
// last event id and the server's retry delay across reconnections.
type sseReader struct{ *sse.Reader }

func newSSEReader(r io.Reader, limit int) sseReader {
	return sseReader{sse.NewReader(r, limit, 64<<10)}
}

// next returns the next event with data; an event over the limit is a
// *jsonrpc.TooLargeError, and a stream cut in the middle of an event is
// sse.ErrTruncated.
func (s sseReader) next() (sse.Event, error) {
	ev, err := s.Next()
	var tl *sse.TooLargeError
	if errors.As(err, &tl) {
		err = &jsonrpc.TooLargeError{Size: tl.Size, Limit: tl.Limit}
	}
	return ev, err
}

// retryDelay is how long to wait before reconnecting: the server's retry
// field, else defaultSSERetry.
func (s sseReader) retryDelay() time.Duration {
	if d := s.Retry(); d > 0 {
		return d
	}
	return defaultSSERetry
}
