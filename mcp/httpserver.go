package mcp

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"time"
)

// Timeouts of the net/http server NewHTTPServer configures. A request's
// body must arrive within ReadTimeout of its first byte; the handlers of
// this package then lift the read deadline, so that a request may run as
// long as Server.RequestTimeout allows and an SSE stream as long as the
// client stays, and give each response write its own WriteTimeout.
const (
	// ReadHeaderTimeout bounds the wait for a request's headers: a client
	// that connects and sends nothing, or sends its headers slowly, is
	// disconnected after it.
	ReadHeaderTimeout = 10 * time.Second
	// ReadTimeout bounds the wait for a whole request, headers and body.
	ReadTimeout = 30 * time.Second
	// WriteTimeout bounds each write of a response (a JSON response, one
	// SSE event).
	WriteTimeout = 30 * time.Second
	// IdleTimeout closes a keep-alive connection idle this long.
	IdleTimeout = 60 * time.Second
	// ShutdownTimeout is how long RunHTTPServer lets requests in flight
	// finish after its context ends, before it closes every connection.
	ShutdownTimeout = 5 * time.Second
	// MaxHeaderBytes bounds the size of a request's headers.
	MaxHeaderBytes = 64 << 10
)

// NewHTTPServer returns a net/http server for h (an HTTPHandler, an
// SSEHandler, or a mux holding them) configured to be exposed to a
// network: the timeouts above and a bound on header size. Request bodies
// are bounded by the handlers, at Server.MaxMessageSize. logger, when not
// nil, receives net/http's own error log.
func NewHTTPServer(h http.Handler, logger *log.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: ReadHeaderTimeout,
		ReadTimeout:       ReadTimeout,
		WriteTimeout:      WriteTimeout,
		IdleTimeout:       IdleTimeout,
		MaxHeaderBytes:    MaxHeaderBytes,
		ErrorLog:          logger,
	}
}

// RunHTTPServer serves hs on ln until ctx ends, then shuts it down: it
// stops accepting connections, lets the requests in flight finish for up
// to ShutdownTimeout, and then closes every connection still open (which
// ends the SSE streams). It returns nil after a shutdown, or the error
// that stopped the server.
func RunHTTPServer(ctx context.Context, hs *http.Server, ln net.Listener) error {
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	select {
	case err := <-served:
		return fmt.Errorf("serving HTTP on %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), ShutdownTimeout)
	defer cancel()
	err := hs.Shutdown(sctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = hs.Close()
	}
	if serr := <-served; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}
