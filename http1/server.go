// Package http1 serves HTTP/1.1 with less work per request than net/http,
// for handlers that answer many small requests on kept-alive connections,
// as MCP's Streamable HTTP transport does.
//
// A Server runs any http.Handler. It reads plain requests itself: a
// request line of GET, POST, PUT, PATCH, DELETE or OPTIONS with an
// origin-form target and HTTP/1.1, CRLF-terminated header fields, and a
// body of a declared Content-Length, read whole before the handler runs.
// Everything else (HTTP/1.0, chunked or expected bodies, upgrades, folded
// or malformed header fields, a header block larger than its buffer) goes,
// with the connection, to a net/http server running the same handler, so
// unusual requests get net/http's answers.
//
// The handler runs on the goroutine that read its request, and its
// response goes out in one write. A handler that runs longer than a
// millisecond gets the connection read behind it: a client that goes away
// cancels the request's context, as under net/http. A handler may also end
// its response early and run on (see Completer).
package http1

import (
	"context"
	"errors"
	"log"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults of the Server's limits.
const (
	DefaultReadTimeout = 30 * time.Second
	DefaultIdleTimeout = 2 * time.Minute
	// DefaultMaxBodyBytes is the largest body read before the handler
	// runs; a larger one goes to net/http, read as the handler reads it.
	DefaultMaxBodyBytes = 64 << 20
)

// bufferSize is the size of each connection's read and write buffers: a
// request's header block must fit in the read buffer.
const bufferSize = 8 << 10

// Server serves HTTP/1.1 connections with a Handler.
type Server struct {
	// Handler answers every request.
	Handler http.Handler
	// ReadTimeout bounds reading one request, header and body, from its
	// first byte (default DefaultReadTimeout).
	ReadTimeout time.Duration
	// IdleTimeout closes a kept-alive connection that sends no request
	// for this long (default DefaultIdleTimeout).
	IdleTimeout time.Duration
	// MaxBodyBytes is the largest body read whole before the handler runs
	// (default DefaultMaxBodyBytes).
	MaxBodyBytes int64
	// ErrorLog receives the errors net/http reports for the connections it
	// is given; nil means the log package's standard logger.
	ErrorLog *log.Logger

	mu        sync.Mutex
	listeners map[net.Listener]struct{}
	conns     map[*conn]struct{}
	closed    bool
	shutdown  atomic.Bool
	ctx       context.Context
	cancel    context.CancelFunc
	fallback  *http.Server
	handed    *connQueue
}

// ErrServerClosed is returned by Serve after Close.
var ErrServerClosed = http.ErrServerClosed

// Serve accepts connections on ln and serves them until Close; it always
// returns a non-nil error, ErrServerClosed after Close.
func (s *Server) Serve(ln net.Listener) error {
	if !s.track(ln) {
		ln.Close()
		return ErrServerClosed
	}
	defer s.untrack(ln)
	var backoff time.Duration
	for {
		rwc, err := ln.Accept()
		if err != nil {
			if s.isClosed() || s.shuttingDown() {
				return ErrServerClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				// Out of file descriptors and the like: wait and retry, as
				// net/http does.
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				time.Sleep(backoff)
				continue
			}
			return err
		}
		backoff = 0
		c := s.newConn(rwc)
		if c == nil {
			rwc.Close()
			return ErrServerClosed
		}
		go c.serve()
	}
}

// Close closes the listeners and every connection, including those given
// to net/http. Handlers still running see their requests' contexts
// cancelled.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	if s.cancel != nil {
		s.cancel()
	}
	var err error
	for ln := range s.listeners {
		if cerr := ln.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}
	for c := range s.conns {
		c.rwc.Close()
	}
	fb, q := s.fallback, s.handed
	s.mu.Unlock()
	if q != nil {
		q.Close()
	}
	if fb != nil {
		if cerr := fb.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}
	return err
}

// Shutdown stops accepting connections, lets the requests being served
// finish and closes every connection once idle, then closes the server.
// If ctx ends first, it closes the server at once and returns ctx's error.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.shutdown.Store(true)
	for ln := range s.listeners {
		ln.Close()
	}
	fb := s.fallback
	s.mu.Unlock()
	var fbErr error
	if fb != nil {
		fbErr = fb.Shutdown(ctx)
	}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		s.mu.Lock()
		for c := range s.conns {
			if !c.busy.Load() {
				c.rwc.Close()
			}
		}
		n := len(s.conns)
		s.mu.Unlock()
		if n == 0 {
			break
		}
		select {
		case <-ctx.Done():
			s.Close()
			return ctx.Err()
		case <-tick.C:
		}
	}
	if err := s.Close(); err != nil {
		return err
	}
	return fbErr
}

func (s *Server) shuttingDown() bool { return s.shutdown.Load() }

func (s *Server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// track registers ln, and sets the server up on first use.
func (s *Server) track(ln net.Listener) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	if s.listeners == nil {
		s.listeners = map[net.Listener]struct{}{}
		s.conns = map[*conn]struct{}{}
		s.ctx, s.cancel = context.WithCancel(context.Background())
	}
	s.listeners[ln] = struct{}{}
	return true
}

func (s *Server) untrack(ln net.Listener) {
	s.mu.Lock()
	delete(s.listeners, ln)
	s.mu.Unlock()
}

func (s *Server) logf(format string, args ...any) {
	if s.ErrorLog != nil {
		s.ErrorLog.Printf(format, args...)
		return
	}
	log.Printf(format, args...)
}

func (s *Server) readTimeout() time.Duration {
	if s.ReadTimeout > 0 {
		return s.ReadTimeout
	}
	return DefaultReadTimeout
}

func (s *Server) idleTimeout() time.Duration {
	if s.IdleTimeout > 0 {
		return s.IdleTimeout
	}
	return DefaultIdleTimeout
}

func (s *Server) maxBodyBytes() int64 {
	if s.MaxBodyBytes > 0 {
		return s.MaxBodyBytes
	}
	return DefaultMaxBodyBytes
}

// handOver gives a connection to the net/http server, started on first
// use; it reports false once the server is closed.
func (s *Server) handOver(c net.Conn) bool {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return false
	}
	if s.fallback == nil {
		s.handed = newConnQueue()
		s.fallback = &http.Server{
			Handler:           s.Handler,
			ReadHeaderTimeout: s.readTimeout(),
			IdleTimeout:       s.idleTimeout(),
			ErrorLog:          s.ErrorLog,
		}
		go s.fallback.Serve(s.handed)
	}
	q := s.handed
	s.mu.Unlock()
	return q.put(c)
}

// connQueue is a net.Listener whose connections are put to it: those the
// Server hands to net/http.
type connQueue struct {
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

func newConnQueue() *connQueue {
	return &connQueue{conns: make(chan net.Conn), closed: make(chan struct{})}
}

func (q *connQueue) put(c net.Conn) bool {
	select {
	case q.conns <- c:
		return true
	case <-q.closed:
		return false
	}
}

// Accept implements net.Listener.
func (q *connQueue) Accept() (net.Conn, error) {
	select {
	case c := <-q.conns:
		return c, nil
	case <-q.closed:
		return nil, net.ErrClosed
	}
}

// Close implements net.Listener.
func (q *connQueue) Close() error {
	q.once.Do(func() { close(q.closed) })
	return nil
}

// Addr implements net.Listener.
func (q *connQueue) Addr() net.Addr { return queueAddr{} }

type queueAddr struct{}

func (queueAddr) Network() string { return "http1" }
func (queueAddr) String() string  { return "handed-over connections" }
