package mcp

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/url"
	"slices"
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
	return HTTPConfig{ErrorLog: logger}.server(h)
}

// HTTPConfig configures the HTTP server NewHTTPEndpoints returns. The zero
// value is the server `toolwire serve --http` runs by default; a zero
// bound takes the default of the same name above.
type HTTPConfig struct {
	// AllowedHosts and AllowedOrigins are the allow lists of every
	// endpoint, as HTTPHandler's fields of the same names.
	AllowedHosts   []string
	AllowedOrigins []string
	// Middleware, when not nil, wraps the endpoints (a request log).
	Middleware func(http.Handler) http.Handler
	// Auth, when not nil, requires a bearer token on the MCP endpoints
	// (its Require), checks the scopes of each call (its Authorize), and
	// serves the Protected Resource Metadata (its Metadata) at
	// /.well-known/oauth-protected-resource, followed by /mcp, or by the
	// path of the resource's URL, or by nothing. Callers are then the
	// tokens' users. Package bearer's Auth is one.
	Auth Authenticator
	// MaxSessions caps the legacy sessions open at once, as
	// HTTPHandler.MaxSessions; zero means DefaultMaxSessions.
	MaxSessions int
	// SessionIdleTimeout ends a legacy session unused for this long, as
	// HTTPHandler.SessionIdleTimeout; zero means its default.
	SessionIdleTimeout time.Duration
	// ErrorLog, when not nil, receives net/http's own error log.
	ErrorLog *log.Logger
	// The bounds of the net/http server.
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	WriteTimeout      time.Duration
	IdleTimeout       time.Duration
	MaxHeaderBytes    int
}

// NewHTTPEndpoints returns the HTTP server `toolwire serve --http` runs
// for s: Streamable HTTP at /mcp and the deprecated HTTP+SSE transport at
// /sse and /message, with cfg's allow lists and authorization, on a
// net/http server configured as NewHTTPServer does, with cfg's bounds.
// Call end once the server has stopped, to end the legacy sessions.
func NewHTTPEndpoints(s *Server, cfg HTTPConfig) (hs *http.Server, end func()) {
	h := &HTTPHandler{Server: s, AllowedHosts: cfg.AllowedHosts, AllowedOrigins: cfg.AllowedOrigins, MaxSessions: cfg.MaxSessions, SessionIdleTimeout: cfg.SessionIdleTimeout}
	sse := &SSEHandler{Server: s, AllowedHosts: cfg.AllowedHosts, AllowedOrigins: cfg.AllowedOrigins}
	mux := http.NewServeMux()
	if a := cfg.Auth; a != nil {
		h.Authorize, sse.Authorize = a.Authorize, a.Authorize
		mux.Handle("/mcp", a.Require(h))
		mux.Handle("/sse", a.Require(sse))
		mux.Handle("/message", a.Require(sse))
		md := a.Metadata()
		paths := []string{metadataPath, metadataPath + "/mcp"}
		if u, err := url.Parse(a.MetadataURL()); err == nil && !slices.Contains(paths, u.Path) {
			paths = append(paths, u.Path)
		}
		for _, p := range paths {
			mux.Handle(p, md)
		}
	} else {
		mux.Handle("/mcp", h)
		mux.Handle("/sse", sse)
		mux.Handle("/message", sse)
	}
	var handler http.Handler = mux
	if cfg.Middleware != nil {
		handler = cfg.Middleware(mux)
	}
	return cfg.server(handler), h.Close
}

// An Authenticator requires credentials on HTTP endpoints and says who
// sends them; HTTPConfig.Auth takes one. Package bearer's Auth is the
// OAuth 2.1 one (bearer tokens, Protected Resource Metadata).
type Authenticator interface {
	// Require wraps an endpoint: it refuses requests without valid
	// credentials and names the caller of those it lets through (see
	// tool.WithCaller).
	Require(next http.Handler) http.Handler
	// Authorize is HTTPHandler.Authorize: it checks what one decoded
	// message may do.
	Authorize(w http.ResponseWriter, r *http.Request, method, name string) bool
	// Metadata serves the Protected Resource Metadata; MetadataURL is
	// where clients are told to find it.
	Metadata() http.Handler
	MetadataURL() string
}

// metadataPath is where Protected Resource Metadata is (RFC 9728).
const metadataPath = "/.well-known/oauth-protected-resource"

// server returns the net/http server for h with c's bounds and log.
func (c HTTPConfig) server(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: cmp.Or(c.ReadHeaderTimeout, ReadHeaderTimeout),
		ReadTimeout:       cmp.Or(c.ReadTimeout, ReadTimeout),
		WriteTimeout:      cmp.Or(c.WriteTimeout, WriteTimeout),
		IdleTimeout:       cmp.Or(c.IdleTimeout, IdleTimeout),
		MaxHeaderBytes:    cmp.Or(c.MaxHeaderBytes, MaxHeaderBytes),
		ErrorLog:          c.ErrorLog,
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
