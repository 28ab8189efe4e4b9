package driver

import (
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
	"time"
)

// HTTPClient holds the one http.Client shared by every session to one
// Streamable HTTP endpoint.
type HTTPClient struct {
	url    *url.URL
	client *http.Client
}

// NewHTTPClient returns a client for the endpoint at rawURL, keeping up to
// maxConns idle keep-alive connections to it (use at least the number of
// concurrent sessions).
func NewHTTPClient(rawURL string, maxConns int) (*HTTPClient, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, err
	}
	if maxConns < 2 {
		maxConns = 2
	}
	tr := &http.Transport{
		Proxy:               nil, // benchmark traffic never goes through a proxy
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        maxConns,
		MaxIdleConnsPerHost: maxConns,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
		ForceAttemptHTTP2:   false,
	}
	return &HTTPClient{url: u, client: &http.Client{Transport: tr, Timeout: 60 * time.Second}}, nil
}

// CloseIdleConnections closes the client's idle connections.
func (c *HTTPClient) CloseIdleConnections() { c.client.CloseIdleConnections() }

// HTTPSession is one MCP session over Streamable HTTP. It is not safe for
// concurrent use; open one per concurrent client.
type HTTPSession struct {
	c         *HTTPClient
	hdr       http.Header
	sessionID string

	nextID int64
	rbuf   bytes.Buffer // response body
	data   []byte       // multi-line SSE data accumulator
	idBuf  [24]byte
}

// Connect opens a new session: initialize, then notifications/initialized.
func (c *HTTPClient) Connect() (*HTTPSession, error) {
	s := &HTTPSession{c: c, hdr: http.Header{
		"Content-Type": {"application/json"},
		"Accept":       {"application/json, text/event-stream"},
	}}
	s.rbuf.Grow(4096)
	resp, res, err := s.roundTrip(initCall)
	if err != nil {
		return nil, fmt.Errorf("initialize: %w", err)
	}
	version, err := checkInitResult(res)
	if err != nil {
		return nil, err
	}
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
		s.sessionID = sid
		s.hdr.Set("Mcp-Session-Id", sid)
	}
	s.hdr.Set("Mcp-Protocol-Version", version)
	if err := s.post(initializedNote); err != nil {
		return nil, fmt.Errorf("notifications/initialized: %w", err)
	}
	return s, nil
}

// SessionID is the Mcp-Session-Id the server assigned, if any.
func (s *HTTPSession) SessionID() string { return s.sessionID }

// Call implements [Conn].
func (s *HTTPSession) Call(c *Call) ([]byte, error) {
	_, res, err := s.roundTrip(c)
	return res, err
}

// body is a per-request request body: the id is spliced between the shared,
// immutable prefix and suffix of a Call, so nothing the transport may still
// be reading is ever overwritten.
type body struct {
	call *Call
	head [64]byte
	n    int // len(head) used
	off  int // read offset over head+suffix
}

func (b *body) Read(p []byte) (int, error) {
	n := 0
	if b.off < b.n {
		k := copy(p, b.head[b.off:b.n])
		b.off += k
		n += k
		p = p[k:]
	}
	if len(p) > 0 {
		so := b.off - b.n
		if so >= len(b.call.suffix) {
			if n == 0 {
				return 0, io.EOF
			}
			return n, nil
		}
		k := copy(p, b.call.suffix[so:])
		b.off += k
		n += k
	}
	return n, nil
}

func (b *body) Close() error { return nil }

func (s *HTTPSession) newRequest(method string, rc io.ReadCloser, n int) *http.Request {
	return &http.Request{
		Method:        method,
		URL:           s.c.url,
		Host:          s.c.url.Host,
		Header:        s.hdr, // read-only for the transport; never mutated while in flight
		Body:          rc,
		ContentLength: int64(n),
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
	}
}

func (s *HTTPSession) roundTrip(c *Call) (*http.Response, []byte, error) {
	s.nextID++
	id := s.nextID
	b := &body{call: c}
	// prefix (22 bytes) + at most 20 digits always fits in head.
	b.n = len(strconv.AppendInt(append(b.head[:0], c.prefix...), id, 10))
	return s.do(s.newRequest(http.MethodPost, b, b.n+len(c.suffix)), id)
}

func (s *HTTPSession) do(req *http.Request, id int64) (*http.Response, []byte, error) {
	resp, err := s.c.client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	s.rbuf.Reset()
	_, err = s.rbuf.ReadFrom(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, nil, fmt.Errorf("reading response body: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, nil, fmt.Errorf("HTTP %s: %.300s", resp.Status, s.rbuf.Bytes())
	}
	res, err := s.parse(resp.Header.Get("Content-Type"), s.rbuf.Bytes(), id)
	return resp, res, err
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
	req := s.newRequest(http.MethodPost, io.NopCloser(bytes.NewReader(msg)), len(msg))
	resp, err := s.c.client.Do(req)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("HTTP %s", resp.Status)
	}
	return nil
}

// Close ends the session with DELETE when the server assigned a session id.
// Servers that do not support DELETE (405) are fine.
func (s *HTTPSession) Close() error {
	if s.sessionID == "" {
		return nil
	}
	req := s.newRequest(http.MethodDelete, http.NoBody, 0)
	resp, err := s.c.client.Do(req)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode/100 != 2 && resp.StatusCode != http.StatusMethodNotAllowed && resp.StatusCode != http.StatusNotFound {
		return errors.New("DELETE session: HTTP " + resp.Status)
	}
	return nil
}
