package http1

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/textproto"
	"net/url"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// relayDelay is how long a handler runs on the goroutine that read its
// request before another goroutine starts reading the connection behind
// it. It is long enough that a server busy with many connections seldom
// hands on a quick request (a hand-on costs a goroutine and a read), and
// short enough that a client going away is noticed, and a connection
// whose handler completed early moves on, without a noticeable wait.
const relayDelay = 20 * time.Millisecond

// Connection states: reading a request, running its handler inline, or
// handed on to another goroutine.
const (
	stateReading int32 = iota
	stateServing
	stateHanded
)

// conn is one client connection.
type conn struct {
	srv    *Server
	rwc    net.Conn
	br     *bufio.Reader
	bw     *bufio.Writer
	remote string
	ctx    context.Context // cancelled when the client goes away
	cancel context.CancelCauseFunc
	busy   atomic.Bool // a request is being read or served, its response not complete
	// base is what every request on the connection starts from: the
	// protocol, the client's address and the connection's context.
	base *http.Request
}

func (s *Server) newConn(rwc net.Conn) *conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	c := &conn{srv: s, rwc: rwc, remote: rwc.RemoteAddr().String()}
	c.ctx, c.cancel = context.WithCancelCause(s.ctx)
	c.base = (&http.Request{Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, RemoteAddr: c.remote}).WithContext(c.ctx)
	s.conns[c] = struct{}{}
	return c
}

// end closes the connection and forgets it.
func (c *conn) end() {
	c.cancel(errClientGone)
	c.rwc.Close()
	c.forget()
}

func (c *conn) forget() {
	c.srv.mu.Lock()
	delete(c.srv.conns, c)
	c.srv.mu.Unlock()
}

var errClientGone = errors.New("http1: the client closed the connection")

// serve reads and serves requests until the connection ends or is handed
// over.
func (c *conn) serve() {
	c.br = bufio.NewReaderSize(c.rwc, bufferSize)
	c.bw = bufio.NewWriterSize(c.rwc, bufferSize)
	(&turn{c: c}).loop()
}

// turn is one goroutine's turn at reading a connection. Its handlers run
// inline; when one outlasts relayDelay, a fresh turn reads on behind it
// and this one ends with the handler.
type turn struct {
	c     *conn
	state atomic.Int32
	timer *time.Timer
	resp  *response // the response being served; read by handOn
}

// loop serves requests until the connection ends or is handed on.
func (t *turn) loop() {
	c := t.c
	for {
		req, closeAfter, err := c.readRequest()
		if err != nil {
			if errors.Is(err, errUnusual) {
				c.forget()
				if !c.srv.handOver(&handedConn{Conn: c.rwc, br: c.br}) {
					c.end()
				}
				return
			}
			c.end()
			return
		}
		c.busy.Store(true)
		w := &response{c: c, req: req, header: make(http.Header, 4), closeAfter: closeAfter}
		t.resp = w
		t.state.Store(stateServing)
		if t.timer == nil {
			t.timer = time.AfterFunc(relayDelay, t.handOn)
		} else {
			t.timer.Reset(relayDelay)
		}
		c.run(w, req)
		t.timer.Stop()
		w.complete()
		// The state, not Stop, settles who reads on: a timer that fired
		// during an earlier request may still hand on now.
		if !t.state.CompareAndSwap(stateServing, stateReading) || !c.goesOn(w) {
			return
		}
	}
}

// run runs the handler. A panic is logged (but http.ErrAbortHandler), and
// the connection is closed after what was written, as net/http does.
func (c *conn) run(w *response, req *http.Request) {
	defer func() {
		if v := recover(); v != nil {
			if v != http.ErrAbortHandler {
				buf := make([]byte, 64<<10)
				buf = buf[:runtime.Stack(buf, false)]
				c.srv.logf("http1: panic serving %s: %v\n%s", c.remote, v, buf)
			}
			w.mu.Lock()
			w.failed = true
			w.mu.Unlock()
		}
	}()
	c.srv.Handler.ServeHTTP(w, req)
}

// goesOn reports whether the connection goes on after w, and ends it
// when w failed or asked to close it, or the server is shutting down.
func (c *conn) goesOn(w *response) bool {
	if w.failed || w.closeAfter || c.srv.shuttingDown() {
		c.end()
		return false
	}
	return true
}

// handOn runs when a handler has run relayDelay: if it still runs, this
// goroutine reads the connection behind it, so that a client going away
// cancels the request's context, and then serves the requests after it.
func (t *turn) handOn() {
	if !t.state.CompareAndSwap(stateServing, stateHanded) {
		return
	}
	c, w := t.c, t.resp
	for {
		c.rwc.SetReadDeadline(time.Now().Add(c.srv.idleTimeout()))
		_, err := c.br.Peek(1)
		if err == nil {
			break // the next request, or part of it: serve it after w
		}
		if errors.Is(err, os.ErrDeadlineExceeded) && !w.isComplete() {
			continue // a long response: keep watching
		}
		c.cancel(errClientGone)
		w.wait()
		c.end()
		return
	}
	w.wait()
	if c.goesOn(w) {
		(&turn{c: c}).loop()
	}
}

// errUnusual marks a request left to net/http.
var errUnusual = errors.New("http1: request for net/http")

// readRequest reads the next request with its body. A request this
// package does not read itself gives errUnusual, with nothing consumed.
func (c *conn) readRequest() (req *http.Request, closeAfter bool, err error) {
	if c.br.Buffered() == 0 {
		c.rwc.SetReadDeadline(time.Now().Add(c.srv.idleTimeout()))
		if _, err := c.br.Peek(1); err != nil {
			return nil, false, err
		}
	}
	deadline := false
	var head []byte
	for {
		buf, _ := c.br.Peek(c.br.Buffered())
		if i := bytes.Index(buf, []byte("\r\n\r\n")); i >= 0 {
			head = buf[:i+4]
			break
		}
		if c.br.Buffered() == c.br.Size() || bareLF(buf) {
			return nil, false, errUnusual // a header block too large for us, or LF-terminated
		}
		if !deadline {
			c.rwc.SetReadDeadline(time.Now().Add(c.srv.readTimeout()))
			deadline = true
		}
		if _, err := c.br.Peek(c.br.Buffered() + 1); err != nil {
			if c.br.Buffered() > 0 {
				return nil, false, errUnusual // let net/http answer what came
			}
			return nil, false, err
		}
	}
	req, size, closeAfter, ok := c.parse(head)
	if !ok || size > c.srv.maxBodyBytes() {
		return nil, false, errUnusual
	}
	c.br.Discard(len(head))
	if size > 0 {
		b := make([]byte, size)
		n, _ := c.br.Read(b) // what is buffered
		if n < len(b) {
			if !deadline {
				c.rwc.SetReadDeadline(time.Now().Add(c.srv.readTimeout()))
			}
			if _, err := io.ReadFull(c.rwc, b[n:]); err != nil {
				return nil, false, err
			}
		}
		req.Body = &body{b: b}
	} else {
		req.Body = http.NoBody
	}
	return req, closeAfter, nil
}

// bareLF reports whether b has a line feed without a carriage return
// before it.
func bareLF(b []byte) bool {
	for i, c := range b {
		if c == '\n' && (i == 0 || b[i-1] != '\r') {
			return true
		}
	}
	return false
}

// parse reads a request's header block. It reports false for anything it
// leaves to net/http.
func (c *conn) parse(head []byte) (req *http.Request, size int64, closeAfter, ok bool) {
	s := string(head) // one string; the header values are parts of it
	line, rest, _ := strings.Cut(s, "\r\n")
	method, line, ok1 := strings.Cut(line, " ")
	target, proto, ok2 := strings.Cut(line, " ")
	if !ok1 || !ok2 || proto != "HTTP/1.1" || !plainMethod(method) || !plainTarget(target) {
		return nil, 0, false, false
	}
	u := &url.URL{Path: target}
	if p, q, found := strings.Cut(target, "?"); found {
		u.Path, u.RawQuery = p, q
	}
	n := strings.Count(rest, "\r\n") - 1
	if n > 100 {
		return nil, 0, false, false
	}
	h := make(http.Header, n)
	values := make([]string, n)
	host, size := "", int64(0)
	hasHost, hasLength := false, false
	for i := 0; i < n; i++ {
		line, rest, _ = strings.Cut(rest, "\r\n")
		name, value, found := strings.Cut(line, ":")
		if !found || !validName(name) {
			return nil, 0, false, false
		}
		value = trimOWS(value)
		if !validValue(value) {
			return nil, 0, false, false
		}
		key := textproto.CanonicalMIMEHeaderKey(name)
		switch key {
		case "Host":
			if hasHost {
				return nil, 0, false, false
			}
			host, hasHost = value, true
			continue
		case "Content-Length":
			v, err := strconv.ParseInt(value, 10, 64)
			if hasLength || err != nil || v < 0 || value[0] == '+' {
				return nil, 0, false, false
			}
			size, hasLength = v, true
		case "Transfer-Encoding", "Expect", "Upgrade", "Te", "Trailer":
			return nil, 0, false, false
		case "Connection":
			for _, opt := range strings.Split(value, ",") {
				switch strings.ToLower(strings.TrimSpace(opt)) {
				case "close":
					closeAfter = true
				case "keep-alive", "":
				default:
					return nil, 0, false, false // upgrade and the like
				}
			}
		}
		if vs, dup := h[key]; dup {
			h[key] = append(vs, value)
			continue
		}
		values[i] = value
		h[key] = values[i : i+1 : i+1]
	}
	if !hasHost {
		return nil, 0, false, false
	}
	req = new(http.Request)
	*req = *c.base // carries the connection's context
	req.Method = method
	req.URL = u
	req.Header = h
	req.ContentLength = size
	req.Host = host
	req.RequestURI = target
	req.Close = closeAfter
	return req, size, closeAfter, true
}

// plainMethod reports whether this package serves method itself.
func plainMethod(m string) bool {
	switch m {
	case http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions:
		return true
	}
	return false
}

// plainTarget reports whether target is an origin-form path this package
// can take as it is: no escapes, no fragment, nothing to clean.
func plainTarget(t string) bool {
	if t == "" || t[0] != '/' {
		return false
	}
	for i := 0; i < len(t); i++ {
		switch c := t[i]; {
		case c <= ' ', c >= 0x7f, c == '%', c == '#':
			return false
		}
	}
	return !strings.Contains(t, "/.") && !strings.Contains(t, "//")
}

// validName reports whether name is a header field name (an RFC 9110
// token).
func validName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			continue
		}
		if !strings.ContainsRune("!#$%&'*+-.^_`|~", rune(c)) {
			return false
		}
	}
	return true
}

// trimOWS trims the optional white space around a field value.
func trimOWS(v string) string {
	for v != "" && (v[0] == ' ' || v[0] == '\t') {
		v = v[1:]
	}
	for v != "" && (v[len(v)-1] == ' ' || v[len(v)-1] == '\t') {
		v = v[:len(v)-1]
	}
	return v
}

// validValue reports whether v holds only field content: no control
// characters but tab.
func validValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

// body is a request body read whole before the handler runs.
type body struct {
	b   []byte
	off int
}

func (b *body) Read(p []byte) (int, error) {
	if b.off >= len(b.b) {
		return 0, io.EOF
	}
	n := copy(p, b.b[b.off:])
	b.off += n
	return n, nil
}

// Close implements io.Closer.
func (b *body) Close() error { return nil }

// TakeBytes returns the unread rest of the body, which the caller then
// owns, and leaves the body at its end: a reader of whole bodies
// (jsonrpc.ReadBody) takes it without a copy.
func (b *body) TakeBytes() []byte {
	rest := b.b[b.off:]
	b.off = len(b.b)
	return rest
}

// handedConn is a connection given to net/http with what was read of it
// and not yet used.
type handedConn struct {
	net.Conn
	br *bufio.Reader
}

func (h *handedConn) Read(p []byte) (int, error) {
	if h.br != nil {
		if h.br.Buffered() > 0 {
			return h.br.Read(p)
		}
		h.br = nil
	}
	return h.Conn.Read(p)
}
