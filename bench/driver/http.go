package driver

import (
	"bufio"
	"bytes"
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
	"syscall"
	"time"
)

// HTTPClient opens Streamable HTTP sessions to one endpoint.
//
// Each session speaks HTTP/1.1 over a keep-alive TCP connection of its own,
// written and read on the caller's goroutine: the request bytes are written
// as they are, and the response is read with net/http's http.ReadResponse
// (Content-Length, chunked or close-delimited bodies alike). net/http's
// client Transport would hand every request to a writer goroutine and every
// response to a reader goroutine, about 10 µs of CPU per call on the
// benchmark machine, which shares its two cores with the server measured.
type HTTPClient struct {
	url  *url.URL
	addr string // host:port to dial
	path string // the request target: path and query

	mu       sync.Mutex
	sessions map[*HTTPSession]struct{}
}

// NewHTTPClient returns a client for the endpoint at rawURL (http only).
func NewHTTPClient(rawURL string) (*HTTPClient, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, err
	}
	if u.Scheme != "http" {
		return nil, fmt.Errorf("driver: %q: only http:// URLs are supported", rawURL)
	}
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), "80")
	}
	return &HTTPClient{url: u, addr: addr, path: u.RequestURI(), sessions: map[*HTTPSession]struct{}{}}, nil
}

// CloseIdleConnections closes the connections of every session still open.
func (c *HTTPClient) CloseIdleConnections() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for s := range c.sessions {
		s.closeConn()
	}
}

// HTTPSession is one MCP session over Streamable HTTP, on one connection.
// It is not safe for concurrent use; open one per concurrent client.
type HTTPSession struct {
	c         *HTTPClient
	sessionID string
	version   string

	conn   net.Conn
	br     *bufio.Reader
	nextID int64
	head   []byte       // request line, header fields and the body's start
	rbuf   bytes.Buffer // response body
	data   []byte       // multi-line SSE data accumulator
	idBuf  [24]byte
}

// Connect opens a new session: initialize, then notifications/initialized.
func (c *HTTPClient) Connect() (*HTTPSession, error) {
	s := &HTTPSession{c: c, head: make([]byte, 0, 512)}
	s.rbuf.Grow(4096)
	c.mu.Lock()
	c.sessions[s] = struct{}{}
	c.mu.Unlock()
	resp, res, err := s.roundTrip(initCall)
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("initialize: %w", err)
	}
	version, err := checkInitResult(res)
	if err != nil {
		s.Close()
		return nil, err
	}
	s.sessionID = resp.Header.Get("Mcp-Session-Id")
	s.version = version
	if err := s.post(initializedNote); err != nil {
		s.Close()
		return nil, fmt.Errorf("notifications/initialized: %w", err)
	}
	return s, nil
}

// ConnectModern opens a stateless ModernVersion "session": no handshake,
// only a connection of its own on which every call is an independent POST
// with the Mcp-Protocol-Version header. Send it calls from
// [NewModernToolCall].
func (c *HTTPClient) ConnectModern() *HTTPSession {
	s := &HTTPSession{c: c, head: make([]byte, 0, 512), version: ModernVersion}
	s.rbuf.Grow(4096)
	c.mu.Lock()
	c.sessions[s] = struct{}{}
	c.mu.Unlock()
	return s
}

// SessionID is the Mcp-Session-Id the server assigned, if any.
func (s *HTTPSession) SessionID() string { return s.sessionID }

// Call implements [Conn].
func (s *HTTPSession) Call(c *Call) ([]byte, error) {
	_, res, err := s.roundTrip(c)
	return res, err
}

func (s *HTTPSession) roundTrip(c *Call) (*http.Response, []byte, error) {
	s.nextID++
	id := s.nextID
	idText := strconv.AppendInt(s.idBuf[:0], id, 10)
	n := len(c.prefix) + len(idText) + len(c.suffix)
	s.head = s.appendHead(s.head[:0], http.MethodPost, n, c.headers)
	s.head = append(append(s.head, c.prefix...), idText...)
	resp, err := s.do(http.MethodPost, net.Buffers{s.head, c.suffix})
	if err != nil {
		return nil, nil, err
	}
	res, err := s.parse(resp.Header.Get("Content-Type"), s.rbuf.Bytes(), id)
	return resp, res, err
}

// appendHead appends a request's line and header fields.
// extra is more header lines, each ending in CRLF.
func (s *HTTPSession) appendHead(b []byte, method string, bodyLen int, extra []byte) []byte {
	b = append(b, method...)
	b = append(b, ' ')
	b = append(b, s.c.path...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, s.c.url.Host...)
	b = append(b, "\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"...)
	if s.sessionID != "" {
		b = append(append(append(b, "Mcp-Session-Id: "...), s.sessionID...), "\r\n"...)
	}
	if s.version != "" {
		b = append(append(append(b, "Mcp-Protocol-Version: "...), s.version...), "\r\n"...)
	}
	b = append(b, extra...)
	if bodyLen > 0 || method == http.MethodPost {
		b = append(strconv.AppendInt(append(b, "Content-Length: "...), int64(bodyLen), 10), "\r\n"...)
	}
	return append(b, "\r\n"...)
}

// do writes a request and reads its response, whose body it leaves in
// s.rbuf. A kept-alive connection the server closed meanwhile is dialled
// again once, if nothing of the response came.
func (s *HTTPSession) do(method string, req net.Buffers) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		fresh := s.conn == nil
		if fresh {
			conn, err := net.DialTimeout("tcp", s.c.addr, 10*time.Second)
			if err != nil {
				return nil, err
			}
			s.conn, s.br = conn, bufio.NewReaderSize(conn, 64<<10)
		}
		bufs := req // WriteTo consumes its receiver
		_, err := bufs.WriteTo(s.conn)
		var resp *http.Response
		if err == nil {
			resp, err = http.ReadResponse(s.br, &http.Request{Method: method})
		}
		if err != nil {
			s.closeConn()
			if !fresh && attempt == 0 && (errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)) {
				continue
			}
			return nil, err
		}
		s.rbuf.Reset()
		_, err = s.rbuf.ReadFrom(resp.Body)
		resp.Body.Close()
		if err != nil {
			s.closeConn()
			return nil, fmt.Errorf("reading response body: %w", err)
		}
		if resp.Close {
			s.closeConn()
		}
		if resp.StatusCode/100 != 2 {
			return resp, fmt.Errorf("HTTP %s: %.300s", resp.Status, s.rbuf.Bytes())
		}
		return resp, nil
	}
}

func (s *HTTPSession) closeConn() {
	if s.conn != nil {
		s.conn.Close()
		s.conn, s.br = nil, nil
	}
}

// parse finds the response to id in a JSON or SSE response body.
func (s *HTTPSession) parse(contentType string, b []byte, id int64) ([]byte, error) {
	switch mediaType(contentType) {
	case "application/json":
		res, ok, err := matchResponse(b, id, &s.idBuf)
		if err == nil && !ok {
			err = fmt.Errorf("JSON response is not the response to request %d: %.200q", id, b)
		}
		return res, err
	case "text/event-stream":
		var res []byte
		var found bool
		err := scanSSE(b, &s.data, func(data []byte) (bool, error) {
			r, ok, err := matchResponse(data, id, &s.idBuf)
			if ok || err != nil {
				res, found = r, ok
				return true, err
			}
			return false, nil
		})
		if err == nil && !found {
			err = fmt.Errorf("event stream ended without the response to request %d: %.300q", id, b)
		}
		return res, err
	default:
		return nil, fmt.Errorf("unexpected Content-Type %q: %.200q", contentType, b)
	}
}

func mediaType(ct string) string {
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	ct = strings.TrimSpace(ct)
	if ct == "application/json" || ct == "text/event-stream" {
		return ct
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return ct
	}
	return mt
}

// scanSSE calls fn with the data of each event in an SSE stream until fn
// returns true or an error. scratch is reused for multi-line data.
func scanSSE(b []byte, scratch *[]byte, fn func(data []byte) (bool, error)) error {
	var data []byte
	lines := 0
	dispatch := func() (bool, error) {
		if lines == 0 {
			return false, nil
		}
		d := data
		data, lines = nil, 0
		return fn(d)
	}
	for len(b) > 0 {
		var line []byte
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			line, b = b, nil
		}
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
		if len(line) == 0 {
			if stop, err := dispatch(); stop || err != nil {
				return err
			}
			continue
		}
		if !bytes.HasPrefix(line, []byte("data:")) {
			continue // event:, id:, retry:, comments
		}
		v := line[len("data:"):]
		if len(v) > 0 && v[0] == ' ' {
			v = v[1:]
		}
		switch lines {
		case 0:
			data = v
		case 1:
			*scratch = append(append(append((*scratch)[:0], data...), '\n'), v...)
			data = *scratch
		default:
			*scratch = append(append(*scratch, '\n'), v...)
			data = *scratch
		}
		lines++
	}
	_, err := dispatch()
	return err
}

// post sends a notification and expects 202 Accepted (or another 2xx).
func (s *HTTPSession) post(msg []byte) error {
	s.head = append(s.appendHead(s.head[:0], http.MethodPost, len(msg), nil), msg...)
	_, err := s.do(http.MethodPost, net.Buffers{s.head})
	return err
}

// Close ends the session with DELETE when the server assigned a session id,
// and closes its connection. Servers that do not support DELETE (405) are
// fine.
func (s *HTTPSession) Close() error {
	defer func() {
		s.closeConn()
		s.c.mu.Lock()
		delete(s.c.sessions, s)
		s.c.mu.Unlock()
	}()
	if s.sessionID == "" {
		return nil
	}
	s.head = s.appendHead(s.head[:0], http.MethodDelete, 0, nil)
	resp, err := s.do(http.MethodDelete, net.Buffers{s.head})
	if err != nil && (resp == nil || resp.StatusCode != http.StatusMethodNotAllowed && resp.StatusCode != http.StatusNotFound) {
		return fmt.Errorf("DELETE session: %w", err)
	}
	return nil
}
