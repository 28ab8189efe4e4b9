package mcp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"path"
	"strconv"
	"sync"
	"time"

	"github.com/toolwire/toolwire/jsonrpc"
)

// SSEHandler serves the deprecated HTTP+SSE transport of protocol
// 2024-11-05, for old clients: a GET opens an event stream whose first event
// names the endpoint to POST messages to; every response and server message
// then arrives on that stream. Mount it on two paths, e.g. /sse and
// /message. New clients should use HTTPHandler.
type SSEHandler struct {
	// Server is the server to serve.
	Server *Server
	// MessagePath is where clients POST their messages. Empty means the
	// path "message" beside the GET path (/sse → /message).
	MessagePath string
	// AllowedHosts and AllowedOrigins work as in HTTPHandler.
	AllowedHosts   []string
	AllowedOrigins []string
	// Authorize works as in HTTPHandler, for each request POSTed.
	Authorize func(w http.ResponseWriter, r *http.Request, method, name string) bool

	mu       sync.Mutex
	sessions map[string]*sseSession
}

type sseSession struct {
	conn *conn
	out  *sseSender
	// owner is the caller that opened the stream (see httpSession.owner).
	owner string
}

// sseSender writes every message of a session to its one event stream.
type sseSender struct{ w *sseWriter }

func (s *sseSender) send(m *jsonrpc.Message) error { return s.w.event("", m.Append(nil)) }

func (s *sseSender) finish(m *jsonrpc.Message) error {
	if m == nil {
		return nil
	}
	return s.send(m)
}

// ServeHTTP implements http.Handler.
func (h *SSEHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !guardOrigin(w, r, h.AllowedHosts, h.AllowedOrigins) {
		return
	}
	switch r.Method {
	case http.MethodGet:
		h.stream(w, r)
	case http.MethodPost:
		h.message(w, r)
	default:
		w.Header().Set("Allow", "GET, POST")
		http.Error(w, "method not allowed: GET opens the event stream, POST sends a message", http.StatusMethodNotAllowed)
	}
}

func (h *SSEHandler) stream(w http.ResponseWriter, r *http.Request) {
	if !h.Server.acquireStream() {
		w.Header().Set("Retry-After", strconv.Itoa(int(busyRetryAfter/time.Second)))
		http.Error(w, fmt.Sprintf("server busy: %d SSE streams are open, the most this server allows: close the streams you no longer read, or raise the cap (Server.MaxStreams; toolwire serve --max-streams); retry after %v", h.Server.maxStreams(), busyRetryAfter), http.StatusServiceUnavailable)
		return
	}
	defer h.Server.releaseStream()
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	id := hex.EncodeToString(b)
	sw := startHeldSSE(w)
	out := &sseSender{w: sw}
	sess := &sseSession{conn: newConn(h.Server, out), out: out, owner: callerID(r.Context())}
	sess.conn.openSession(id)
	// Requests end with the stream (the deferred close ends them), and
	// see the values of the POST that carried them.
	sess.conn.detached = context.WithoutCancel(r.Context())
	h.Server.track(sess.conn)
	h.mu.Lock()
	if h.sessions == nil {
		h.sessions = map[string]*sseSession{}
	}
	h.sessions[id] = sess
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		delete(h.sessions, id)
		h.mu.Unlock()
		sess.conn.close()
		sw.close()
	}()
	endpoint := h.MessagePath
	if endpoint == "" {
		endpoint = path.Join(path.Dir(r.URL.Path), "message")
	}
	sw.mu.Lock()
	_, err := fmt.Fprintf(w, "event: endpoint\ndata: %s?sessionId=%s\n\n", endpoint, id)
	if err == nil {
		err = sw.flushLocked()
	}
	sw.mu.Unlock()
	if err != nil {
		return
	}
	// The session ends with its stream: an idle one is closed only while
	// none of its requests runs.
	sw.hold(r.Context(), nil, h.Server.streamIdleTimeout(), sess.conn.busy)
}

func (h *SSEHandler) message(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("sessionId")
	h.mu.Lock()
	sess := h.sessions[id]
	h.mu.Unlock()
	if sess != nil && sess.owner != callerID(r.Context()) {
		sess = nil // another caller's: it does not exist for this one
	}
	if sess == nil {
		http.Error(w, fmt.Sprintf("session %q not found: open the event stream with GET first and POST to the endpoint it names", id), http.StatusNotFound)
		return
	}
	body, status, err := readBody(w, r, h.Server.MaxMessageSize)
	if err != nil {
		http.Error(w, err.Error(), status)
		return
	}
	msg, err := decodeOwned(body)
	if err != nil {
		var rpcErr *jsonrpc.Error
		errors.As(err, &rpcErr)
		_ = sess.out.send(errorMessage(msg.ID, rpcErr))
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if h.Authorize != nil && msg.IsRequest() && !h.Authorize(w, r, msg.Method, requestSubject(h.Server, msg)) {
		return
	}
	w.WriteHeader(http.StatusAccepted)
	sess.conn.receive(r.Context(), msg, sess.out, true)
}
