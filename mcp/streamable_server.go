package mcp

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/toolwire/toolwire/internal/fastpath"
	"github.com/toolwire/toolwire/internal/jsonvalue"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/tool"
)

// HTTP header names of the Streamable HTTP transport.
const (
	HeaderSessionID       = "Mcp-Session-Id"
	HeaderProtocolVersion = "Mcp-Protocol-Version"
	HeaderMethod          = "Mcp-Method"
	HeaderName            = "Mcp-Name"
	HeaderParamPrefix     = "Mcp-Param-"
	HeaderLastEventID     = "Last-Event-Id"
)

// DefaultSessionIdleTimeout ends a legacy HTTP session unused this long.
const DefaultSessionIdleTimeout = 30 * time.Minute

// DefaultMaxSessions bounds the legacy sessions an HTTPHandler holds at
// once. An idle session costs about 3.5 KiB of the server's memory (RSS
// of toolwire serve --http with 10,000 open; bench/README.md), so the
// default cap holds about 35 MiB.
const DefaultMaxSessions = 10_000

// busyRetryAfter is the Retry-After given to a client refused for a full
// cap of sessions or streams: slots free as other clients end their
// sessions or streams, or these expire.
const busyRetryAfter = 10 * time.Second

// codeServerBusy is the JSON-RPC error code of a refusal for a full cap,
// from JSON-RPC's range for implementation-defined server errors.
const codeServerBusy = -32000

// HTTPHandler serves a Server over Streamable HTTP at whatever path it is
// mounted on, for both eras: modern (2026-07-28) clients send independent
// POSTs; legacy clients open a session with initialize and may hold a GET
// stream, resume streams with Last-Event-ID and end the session with
// DELETE.
//
// Requests whose Host or Origin is not allowed are refused with 403, to
// protect a server on localhost from DNS rebinding.
type HTTPHandler struct {
	// Server is the server to serve.
	Server *Server
	// AllowedHosts are the Host header values accepted (host names, with or
	// without a port). Empty means the loopback names only: localhost,
	// 127.0.0.1 and [::1], on any port.
	AllowedHosts []string
	// AllowedOrigins are the Origin header values accepted, besides
	// loopback origins. "*" accepts any origin.
	AllowedOrigins []string
	// SessionIdleTimeout ends a legacy session unused this long (default
	// DefaultSessionIdleTimeout).
	SessionIdleTimeout time.Duration
	// MaxSessions bounds the legacy sessions open at once (default
	// DefaultMaxSessions). An initialize past it is refused with 503 and
	// Retry-After; no live session is evicted for it: sessions ended with
	// DELETE and sessions expired free their slots.
	MaxSessions int
	// Authorize, when set, decides whether each request a POST carries may
	// be served, once it is decoded: method is its JSON-RPC method and
	// name the tool, prompt or resource it names ("" for other methods).
	// To refuse, it answers the HTTP request itself (such as 403 with a
	// WWW-Authenticate challenge) and returns false. bearer.Auth's
	// Authorize checks the scopes a tool needs.
	Authorize func(w http.ResponseWriter, r *http.Request, method, name string) bool

	mu          sync.Mutex
	sessions    map[string]*httpSession
	workers     *workers // serve HTTP/2 requests; made by the first one
	workersOnce sync.Once
}

// httpSession is a legacy session: its connection state and its streams.
type httpSession struct {
	id string
	// owner is the caller that opened the session, as the program's HTTP
	// middleware named it (tool.WithCaller; "" for none): the session
	// serves no other.
	owner      string
	conn       *conn
	ctx        context.Context
	cancel     context.CancelFunc
	lastUsed   time.Time   // guarded by the handler's mu
	expiry     *time.Timer // runs expire once the session may be idle
	events     *eventLog
	standalone *sessionOut
}

// ServeHTTP implements http.Handler.
func (h *HTTPHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !guardOrigin(w, r, h.AllowedHosts, h.AllowedOrigins) {
		return
	}
	switch r.Method {
	case http.MethodPost:
		h.post(w, r)
	case http.MethodGet:
		h.get(w, r)
	case http.MethodDelete:
		h.delete(w, r)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		writeJSONError(w, http.StatusMethodNotAllowed, jsonrpc.ID{}, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "method %s not allowed: send JSON-RPC messages with POST", r.Method))
	}
}

// guardOrigin protects a server on localhost from DNS rebinding: it refuses,
// with 403, a request whose Host or Origin is not allowed, and reports
// whether the request may go on. Empty hosts means the loopback names.
func guardOrigin(w http.ResponseWriter, r *http.Request, hosts, origins []string) bool {
	var msg string
	switch origin := r.Header.Get("Origin"); {
	case !hostAllowed(hosts, r.Host):
		msg = fmt.Sprintf("forbidden: Host %q is not allowed (DNS rebinding protection): the server must allow it (toolwire serve --allow-host NAME; in Go, the handler's AllowedHosts)", r.Host)
	case origin != "" && !originAllowed(origins, origin):
		msg = fmt.Sprintf("forbidden: Origin %q is not allowed (DNS rebinding protection): the server must allow it (toolwire serve --allow-origin ORIGIN; in Go, the handler's AllowedOrigins)", origin)
	default:
		return true
	}
	writeJSONError(w, http.StatusForbidden, jsonrpc.ID{}, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "%s", msg))
	return false
}

func isLoopbackName(host string) bool {
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(strings.Trim(host, "[]"))
	return err == nil && ip.IsLoopback()
}

func splitHost(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.Trim(hostport, "[]")
}

func hostAllowed(allowed []string, hostport string) bool {
	if len(allowed) == 0 {
		return isLoopbackName(splitHost(hostport))
	}
	for _, a := range allowed {
		if a == "*" || strings.EqualFold(a, hostport) || strings.EqualFold(a, splitHost(hostport)) {
			return true
		}
	}
	return false
}

func originAllowed(allowed []string, origin string) bool {
	for _, a := range allowed {
		if a == "*" || strings.EqualFold(a, origin) {
			return true
		}
	}
	u, err := url.Parse(origin)
	if err != nil {
		return false
	}
	return (u.Scheme == "http" || u.Scheme == "https") && isLoopbackName(u.Hostname())
}

// readBody reads the body of a POST holding one message of at most limit
// bytes (0 means jsonrpc.DefaultMaxMessageSize). A body declared larger is
// refused with 413 before any of it is read, and one of undeclared length
// is read through http.MaxBytesReader, which refuses it with 413 once past
// the limit; net/http then closes the connection. (A declared length is
// enforced by net/http itself.) A body that stops arriving fails at the
// server's ReadTimeout with 408. Once the body is read, the read deadline
// is lifted: the request may run, and its response stream stay open, as
// long as it needs. On HTTP/1 net/http lifts it itself as the body ends
// (it starts a background read that watches for the client to leave,
// without a deadline); on HTTP/2 it is lifted here, stopping the stream's
// read timer. On error it returns the HTTP status to refuse the request
// with.
func readBody(w http.ResponseWriter, r *http.Request, limit int) ([]byte, int, error) {
	if limit <= 0 {
		limit = jsonrpc.DefaultMaxMessageSize
	}
	body := r.Body
	switch {
	case r.ContentLength > int64(limit):
		return nil, http.StatusRequestEntityTooLarge, &jsonrpc.TooLargeError{Size: int(min(r.ContentLength, math.MaxInt)), Limit: limit}
	case r.ContentLength < 0:
		body = http.MaxBytesReader(w, body, int64(limit))
	}
	b, err := jsonrpc.ReadBody(body, r.ContentLength, limit)
	if err == nil {
		// Closed once read to its end, the body needs nothing more from
		// net/http (which otherwise reads it for its end again before
		// the response).
		_ = r.Body.Close()
		if r.ProtoMajor != 1 {
			_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
		}
		return b, 0, nil
	}
	status, err := readError(err, limit)
	return nil, status, err
}

// decodeOwned decodes a message read whole into body, which it keeps (see
// fastpath.DecodeOwned): jsonrpc.Decode without the copy.
func decodeOwned(body []byte) (*jsonrpc.Message, error) {
	m, err := fastpath.DecodeOwned(body)
	return m.(*jsonrpc.Message), err
}

// readError returns the HTTP status that answers a failure to read a
// body, and the error to tell the client.
func readError(err error, limit int) (int, error) {
	var netErr net.Error
	var tooLarge *http.MaxBytesError
	switch {
	case errors.Is(err, jsonrpc.ErrTooLarge):
		return http.StatusRequestEntityTooLarge, err
	case errors.As(err, &tooLarge):
		return http.StatusRequestEntityTooLarge, &jsonrpc.TooLargeError{Size: limit + 1, Limit: limit}
	case errors.As(err, &netErr) && netErr.Timeout():
		return http.StatusRequestTimeout, fmt.Errorf("%w: the body did not arrive within the server's read timeout; send it whole, at once", err)
	}
	return http.StatusBadRequest, err
}

// writeBusy refuses a request for a full cap with 503, Retry-After and a
// JSON-RPC error that says which cap is full and what to do.
func writeBusy(w http.ResponseWriter, id jsonrpc.ID, format string, args ...any) {
	w.Header().Set("Retry-After", strconv.Itoa(int(busyRetryAfter/time.Second)))
	writeJSONError(w, http.StatusServiceUnavailable, id, jsonrpc.NewError(codeServerBusy, "server busy: "+format+"; retry after %v", append(args, busyRetryAfter)...))
}

func writeJSONError(w http.ResponseWriter, status int, id jsonrpc.ID, e *jsonrpc.Error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(errorMessage(id, e).Append(nil))
}

func acceptsBoth(r *http.Request) (json, sse bool) {
	accept := r.Header.Get("Accept")
	if accept == "application/json, text/event-stream" { // what clients send
		return true, true
	}
	for rest := accept; rest != ""; {
		var part string
		part, rest, _ = strings.Cut(rest, ",")
		switch mediaType(part) {
		case "application/json":
			json = true
		case "text/event-stream":
			sse = true
		case "*/*":
			json, sse = true, true
		case "application/*":
			json = true
		case "text/*":
			sse = true
		}
	}
	return json, sse
}

// mediaType returns the media type of a Content-Type or Accept entry,
// lower-case, without parameters ("" when there is none).
func mediaType(v string) string {
	if i := strings.IndexByte(v, ';'); i >= 0 {
		v = v[:i]
	}
	return strings.ToLower(strings.TrimSpace(v))
}

func (h *HTTPHandler) post(w http.ResponseWriter, r *http.Request) {
	s := h.Server
	if ct := r.Header.Get("Content-Type"); ct != "" {
		if mediaType(ct) != "application/json" {
			writeJSONError(w, http.StatusUnsupportedMediaType, jsonrpc.ID{}, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "unsupported Content-Type %q: send application/json", ct))
			return
		}
	}
	if j, e := acceptsBoth(r); !j || !e {
		writeJSONError(w, http.StatusNotAcceptable, jsonrpc.ID{}, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "not acceptable: the Accept header must list both application/json and text/event-stream"))
		return
	}
	body, status, err := readBody(w, r, s.MaxMessageSize)
	if err != nil {
		writeJSONError(w, status, jsonrpc.ID{}, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "invalid request: %v", err))
		return
	}
	if jsonrpc.IsBatch(body) {
		writeJSONError(w, http.StatusBadRequest, jsonrpc.ID{}, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "invalid request: %v; send one message per POST", jsonrpc.ErrBatch))
		return
	}
	msg, err := decodeOwned(body)
	if err != nil {
		var rpcErr *jsonrpc.Error
		errors.As(err, &rpcErr)
		writeJSONError(w, http.StatusBadRequest, msg.ID, rpcErr)
		return
	}
	if h.Authorize != nil && msg.IsRequest() && !h.Authorize(w, r, msg.Method, requestSubject(s, msg)) {
		return
	}
	// The request's one reading of the clock: the session's last use, and
	// the start of its timeout and of its response's write deadline.
	start := time.Now()

	// A legacy session?
	if sid := r.Header.Get(HeaderSessionID); sid != "" && msg.Method != MethodInitialize {
		sess := h.session(sid, r, start)
		if sess == nil {
			if msg.IsRequest() && isModernBody(msg) {
				// A modern client ignores sessions; so do we.
				h.modern(w, r, msg, start)
				return
			}
			writeJSONError(w, http.StatusNotFound, msg.ID, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "session %q not found (it ended or expired): send initialize to start a new session", sid))
			return
		}
		h.legacy(w, r, sess, msg, start)
		return
	}
	switch {
	case msg.Method == MethodInitialize && !IsModern(r.Header.Get(HeaderProtocolVersion)) && !isModernBody(msg):
		sess := h.newSession(r, start)
		if sess == nil {
			writeBusy(w, msg.ID, "%d legacy sessions are open, the most this server allows: end the sessions you no longer need with DELETE (with their %s header), or raise the cap (HTTPHandler.MaxSessions; toolwire serve --max-sessions)", h.maxSessions(), HeaderSessionID)
			return
		}
		h.legacy(w, r, sess, msg, start)
	case msg.IsResponse():
		writeJSONError(w, http.StatusBadRequest, msg.ID, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "a response was sent without an %s header: responses belong to a legacy session", HeaderSessionID))
	case msg.IsNotification():
		// Modern clients send no notifications over HTTP; accept and drop.
		w.WriteHeader(http.StatusAccepted)
	default:
		h.modern(w, r, msg, start)
	}
}

// isModernBody reports whether a request names a protocol version in _meta.
func isModernBody(m *jsonrpc.Message) bool {
	var p struct {
		Meta struct {
			V string `json:"io.modelcontextprotocol/protocolVersion"`
		} `json:"_meta"`
	}
	_ = json.Unmarshal(m.Params, &p)
	return p.Meta.V != ""
}

func (h *HTTPHandler) legacy(w http.ResponseWriter, r *http.Request, sess *httpSession, msg *jsonrpc.Message, start time.Time) {
	if v := r.Header.Get(HeaderProtocolVersion); v != "" && msg.Method != MethodInitialize && sess.conn.isInitialized() {
		if !isLegacy(v) && !IsModern(v) {
			writeJSONError(w, http.StatusBadRequest, msg.ID, unsupportedVersion(v))
			return
		}
	}
	if msg.Method == MethodInitialize {
		// The session's id goes to the client once, as the spec has it:
		// the client sends it with every request that follows.
		w.Header().Set(HeaderSessionID, sess.id)
	}
	if !msg.IsRequest() {
		sess.conn.receive(sess.ctx, msg, nil, false)
		w.WriteHeader(http.StatusAccepted)
		return
	}
	ps := newPostSender(w, r, h.Server, sess.events, false, start)
	sess.conn.mu.Lock()
	ps.prime = sess.conn.version >= Version20251125 // resumable streams came with 2025-11-25
	sess.conn.mu.Unlock()
	// In legacy sessions a dropped connection is not a cancellation: the
	// request runs on in the session's context (conn.detached), with the
	// values of its HTTP request.
	h.serve(r.Context(), r, ps, sess.conn, msg)
}

// modern serves one stateless request.
func (h *HTTPHandler) modern(w http.ResponseWriter, r *http.Request, msg *jsonrpc.Message, start time.Time) {
	x := new(statelessExchange)
	x.fields = readHeaderFields(msg.Params, &h.Server.metas)
	if e, status := h.validateHeaders(r, msg, &x.fields); e != nil {
		writeJSONError(w, status, msg.ID, e)
		return
	}
	ps, c := &x.ps, &x.c
	ps.init(w, r, h.Server, nil, true, start)
	initRequestConn(c, h.Server)
	c.fields = &x.fields
	c.leave = r.Context()
	c.token = credentialDigest(r.Header.Get("Authorization"))
	defer c.close()
	h.serve(r.Context(), r, ps, c, msg)
}

// statelessExchange is what a modern HTTP request is served with, in one
// allocation: its response's sender, a connection of its own and what
// was read of its params.
type statelessExchange struct {
	ps     postSender
	c      conn
	fields headerFields
}

// serve runs request msg of c in ctx, answering through ps, and returns
// once its HTTP response is done. On HTTP/1 the handler's goroutine runs
// the request; on HTTP/2, or behind a ResponseWriter that cannot hand its
// connection over, a worker does, so that the response can end while the
// request runs on (a timeout, a dropped legacy connection, an SSE stream
// closed for polling).
func (h *HTTPHandler) serve(ctx context.Context, r *http.Request, ps *postSender, c *conn, msg *jsonrpc.Message) {
	if ps.inline {
		c.serve(ctx, msg, ps, ps.start)
		ps.release()
		return
	}
	ps.work.ctx, ps.work.conn, ps.work.msg = ctx, c, msg
	h.workersOnce.Do(func() { h.workers = newWorkers() })
	h.workers.run(ps)
	ps.wait(r.Context())
}

// validateHeaders checks a modern request's _meta and standard headers
// against its body, of which p are the readHeaderFields, returning the
// error and HTTP status to refuse it with.
func (h *HTTPHandler) validateHeaders(r *http.Request, msg *jsonrpc.Message, p *headerFields) (*jsonrpc.Error, int) {
	bad := http.StatusBadRequest
	hv := r.Header.Get(HeaderProtocolVersion)
	bodyV := p.version
	switch {
	case len(bodyV) == 0 && hv == "":
		return jsonrpc.NewError(jsonrpc.CodeInvalidRequest,
			"no session and no protocol version: send initialize first (protocol %s and earlier, then use the %s it returns), or put %q and %q in params._meta with a matching %s header (protocol %s)",
			LatestLegacyVersion, HeaderSessionID, MetaProtocolVersion, MetaClientCapabilities, HeaderProtocolVersion, LatestVersion), bad
	case len(bodyV) == 0 && IsModern(hv):
		what := "params._meta is missing"
		if p.meta {
			what = fmt.Sprintf("params._meta[%q] is missing", MetaProtocolVersion)
		}
		return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params: %s; protocol %s requires it on every request, equal to the %s header", what, hv, HeaderProtocolVersion), bad
	case len(bodyV) == 0:
		return jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "no session: protocol %s needs an %s header from initialize; send initialize first, or speak %s", hv, HeaderSessionID, LatestVersion), bad
	case hv == "":
		return jsonrpc.NewError(CodeHeaderMismatch, "Header mismatch: the %s header is missing; it must equal params._meta[%q] (%q)", HeaderProtocolVersion, MetaProtocolVersion, bodyV), bad
	case hv != string(bodyV):
		return jsonrpc.NewError(CodeHeaderMismatch, "Header mismatch: %s header %q does not match params._meta[%q] %q", HeaderProtocolVersion, hv, MetaProtocolVersion, bodyV), bad
	case !IsModern(hv):
		return unsupportedVersion(hv), bad
	case len(p.caps) == 0 || p.caps[0] != '{':
		return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params: params._meta[%q] must be an object (use {} for none); protocol %s requires it on every request", MetaClientCapabilities, hv), bad
	}
	if removedInModern(msg.Method) {
		return jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "method not found: %s is not part of protocol %s", msg.Method, hv), http.StatusNotFound
	}
	hm, ok := headerValue(r, HeaderMethod)
	switch {
	case !ok:
		return jsonrpc.NewError(CodeHeaderMismatch, "Header mismatch: the %s header is missing; it must equal the body's method %q", HeaderMethod, msg.Method), bad
	case hm != msg.Method:
		return jsonrpc.NewError(CodeHeaderMismatch, "Header mismatch: %s header %q does not match body method %q", HeaderMethod, hm, msg.Method), bad
	}
	var want []byte
	switch msg.Method {
	case MethodToolsCall, MethodPromptsGet:
		want = p.name
	case MethodResourcesRead:
		want = p.uri
	case MethodTasksGet, MethodTasksUpdate, MethodTasksCancel:
		want = p.taskID
	default:
		return nil, 0
	}
	raw, present := r.Header[http.CanonicalHeaderKey(HeaderName)]
	if !present {
		return jsonrpc.NewError(CodeHeaderMismatch, "Header mismatch: the %s header is missing; it must equal %q", HeaderName, want), bad
	}
	hn, err := decodeHeaderValue(raw[0])
	if err != nil {
		return jsonrpc.NewError(CodeHeaderMismatch, "Header mismatch: %s header: %v", HeaderName, err), bad
	}
	if hn != string(want) {
		return jsonrpc.NewError(CodeHeaderMismatch, "Header mismatch: %s header %q does not match body value %q", HeaderName, hn, want), bad
	}
	if msg.Method == MethodToolsCall {
		if t, ok := h.Server.tools.Lookup(string(p.name)); ok {
			if e := checkParamHeaders(r, t.Info().InputSchema, p.arguments); e != nil {
				return e, bad
			}
		}
	}
	return nil, 0
}

// headerFields are the members of a modern request's params that its
// headers must match. The strings are the JSON text's own bytes when it
// has no escapes, so that comparing them allocates nothing.
type headerFields struct {
	name, uri []byte
	taskID    []byte
	arguments []byte
	meta      bool   // params._meta is there and not null
	version   []byte // params._meta's protocol version
	caps      []byte // params._meta's client capabilities, as sent

	// What a tools/call's readParams reads, from the same pass: set when
	// whole, params having been read to its end without error.
	whole            bool
	rawName, rawMeta []byte // the members' JSON values
	retry            bool   // inputResponses or requestState is there
	// decoded is _meta as the server's metaCache keeps it, when it does.
	decoded *RequestMeta
}

// readHeaderFields reads the headerFields of params (JSON that
// jsonrpc.Decode has checked) in one pass over its top level and
// _meta's, without decoding anything else: the arguments, however large,
// are only skipped. A member of the wrong type reads as absent; the
// method's handler reports it. A _meta that metas keeps (a client's
// usual one) is looked up there, not read again; metas may be nil.
func readHeaderFields(params []byte, metas *metaCache) headerFields {
	var f headerFields
	if len(params) == 0 || params[0] != '{' {
		return f
	}
	var meta []byte
	_, err := jsonvalue.Object(params, 0, func(key string, start, end int) {
		v := params[start:end]
		switch key {
		case "name":
			f.name, f.rawName = stringBytes(v), v
		case "uri":
			f.uri = stringBytes(v)
		case "taskId":
			f.taskID = stringBytes(v)
		case "arguments":
			f.arguments = v
		case "_meta":
			meta = v
		case "inputResponses", "requestState":
			f.retry = true
		}
	})
	if err != nil {
		return headerFields{name: f.name, uri: f.uri, taskID: f.taskID, arguments: f.arguments}
	}
	f.whole, f.rawMeta = true, meta
	if meta == nil || string(meta) == "null" {
		return f
	}
	f.meta = true
	if metas != nil {
		var buf [512]byte
		if e, _ := metas.lookup(meta, buf[:0]); e != nil {
			f.version, f.caps, f.decoded = e.version, e.caps, e.meta
			return f
		}
	}
	f.version, f.caps = readMetaFields(meta)
	return f
}

// readMetaFields reads a _meta's protocol version (its text) and client
// capabilities (as sent) for readHeaderFields; nil for either when it is
// absent, of the wrong type, or meta is not an object.
func readMetaFields(meta []byte) (version, caps []byte) {
	if len(meta) == 0 || meta[0] != '{' {
		return nil, nil
	}
	_, _ = jsonvalue.Object(meta, 0, func(key string, start, end int) {
		switch key {
		case MetaProtocolVersion:
			version = stringBytes(meta[start:end])
		case MetaClientCapabilities:
			caps = meta[start:end]
		}
	})
	return version, caps
}

// stringBytes returns the text of a JSON string value: its bytes between
// the quotes when it has no escapes, else a decoded copy; nil for a value
// that is not a string.
func stringBytes(v []byte) []byte {
	if len(v) < 2 || v[0] != '"' {
		return nil
	}
	if bytes.IndexByte(v, '\\') < 0 {
		return v[1 : len(v)-1]
	}
	s, _ := jsonvalue.String(v)
	return []byte(s)
}

// removedInModern reports whether a method exists only in legacy revisions.
func removedInModern(method string) bool {
	switch method {
	case MethodInitialize, MethodPing, MethodSetLevel, MethodResourcesSubscribe, MethodResourcesUnsubscribe:
		return true
	}
	return false
}

func headerValue(r *http.Request, name string) (string, bool) {
	v, ok := r.Header[http.CanonicalHeaderKey(name)]
	if !ok || len(v) == 0 {
		return "", false
	}
	return v[0], true
}

// decodeHeaderValue undoes the =?base64?...?= sentinel encoding and checks
// that a plain value holds only visible ASCII, space and tab.
func decodeHeaderValue(v string) (string, error) {
	if strings.HasPrefix(v, "=?base64?") && strings.HasSuffix(v, "?=") && len(v) >= len("=?base64??=") {
		b, err := base64.StdEncoding.DecodeString(v[len("=?base64?") : len(v)-2])
		if err != nil {
			return "", fmt.Errorf("invalid base64 in %q", v)
		}
		return string(b), nil
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < 0x20 && c != '\t') || c > 0x7e {
			return "", fmt.Errorf("invalid character 0x%02x in value", c)
		}
	}
	return v, nil
}

// sessions

// newSession starts a legacy session for its initialize request r,
// arriving at now, or returns nil when MaxSessions are open. The
// session's requests run in a context that keeps r's values (what the
// program's HTTP middleware stored there, such as the caller), though not
// its cancellation.
func (h *HTTPHandler) newSession(r *http.Request, now time.Time) *httpSession {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	sess := &httpSession{id: hex.EncodeToString(b), owner: callerID(r.Context()), ctx: ctx, cancel: cancel, lastUsed: now, events: newEventLog()}
	sess.standalone = &sessionOut{events: sess.events}
	sess.conn = newConn(h.Server, sess.standalone)
	sess.conn.openSession(sess.id)
	sess.conn.detached = context.WithoutCancel(ctx) // end closes the conn
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.sessions) >= h.maxSessions() {
		cancel()
		return nil
	}
	if h.sessions == nil {
		h.sessions = map[string]*httpSession{}
	}
	h.Server.track(sess.conn)
	h.sessions[sess.id] = sess
	sess.expiry = time.AfterFunc(h.idleTimeout(), func() { h.expire(sess) })
	return sess
}

func (h *HTTPHandler) maxSessions() int {
	if h.MaxSessions > 0 {
		return h.MaxSessions
	}
	return DefaultMaxSessions
}

func (h *HTTPHandler) idleTimeout() time.Duration {
	if h.SessionIdleTimeout > 0 {
		return h.SessionIdleTimeout
	}
	return DefaultSessionIdleTimeout
}

// expire runs on s's timer: it ends s when it has been unused for the idle
// timeout, and otherwise arms the timer again for when it will have been.
// So a request only records its time, and the timer fires about once per
// idle timeout of a session in use: no request scans the sessions.
func (h *HTTPHandler) expire(s *httpSession) {
	h.mu.Lock()
	if h.sessions[s.id] != s {
		h.mu.Unlock()
		return // ended already
	}
	if left := h.idleTimeout() - time.Since(s.lastUsed); left > 0 {
		s.expiry.Reset(left)
		h.mu.Unlock()
		return
	}
	delete(h.sessions, s.id)
	h.mu.Unlock()
	s.end()
}

// session returns the open session id, recording its use by r at now,
// or nil. A session is bound to the caller that opened it: for another
// caller (another user's token) it does not exist.
func (h *HTTPHandler) session(id string, r *http.Request, now time.Time) *httpSession {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.sessions[id]
	if s == nil || s.owner != callerID(r.Context()) {
		return nil
	}
	s.lastUsed = now
	return s
}

// callerID is the ID of the caller ctx carries (tool.WithCaller), "" for
// none.
func callerID(ctx context.Context) string {
	c, _ := tool.CallerFrom(ctx)
	return c.ID
}

// requestSubject returns the tool, prompt or resource a request names,
// read as its method's handler reads it: the name of tools/call and
// prompts/get, the uri of resources/read; "" for other methods, or
// params that do not say.
func requestSubject(s *Server, msg *jsonrpc.Message) string {
	switch msg.Method {
	case MethodToolsCall:
		var p CallToolParams
		if len(msg.Params) > 0 && msg.Params[0] == '{' && p.readParams(msg.Params, s, nil) == nil {
			return p.Name
		}
	case MethodPromptsGet:
		var p GetPromptParams
		if json.Unmarshal(msg.Params, &p) == nil {
			return p.Name
		}
	case MethodResourcesRead:
		var p ReadResourceParams
		if json.Unmarshal(msg.Params, &p) == nil {
			return p.URI
		}
	}
	return ""
}

func (s *httpSession) end() {
	s.expiry.Stop()
	s.cancel()
	s.conn.close()
	s.standalone.detach(nil)
}

// Close ends every legacy session.
func (h *HTTPHandler) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for id, s := range h.sessions {
		delete(h.sessions, id)
		s.end()
	}
}

func (h *HTTPHandler) delete(w http.ResponseWriter, r *http.Request) {
	sid := r.Header.Get(HeaderSessionID)
	if sid == "" {
		w.Header().Set("Allow", "POST")
		writeJSONError(w, http.StatusMethodNotAllowed, jsonrpc.ID{}, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "DELETE ends a legacy session and needs an %s header", HeaderSessionID))
		return
	}
	h.mu.Lock()
	s := h.sessions[sid]
	if s != nil && s.owner != callerID(r.Context()) {
		s = nil // another caller's: it does not exist for this one
	}
	if s != nil {
		delete(h.sessions, sid)
	}
	h.mu.Unlock()
	if s == nil {
		writeJSONError(w, http.StatusNotFound, jsonrpc.ID{}, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "session %q not found", sid))
		return
	}
	s.end()
	w.WriteHeader(http.StatusOK)
}

// get opens a legacy session's standalone SSE stream, or resumes a stream
// after Last-Event-ID.
func (h *HTTPHandler) get(w http.ResponseWriter, r *http.Request) {
	sid := r.Header.Get(HeaderSessionID)
	if sid == "" {
		w.Header().Set("Allow", "POST")
		writeJSONError(w, http.StatusMethodNotAllowed, jsonrpc.ID{}, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "GET opens the stream of a legacy session and needs an %s header; modern clients POST each request", HeaderSessionID))
		return
	}
	if _, sse := acceptsBoth(r); !sse {
		writeJSONError(w, http.StatusNotAcceptable, jsonrpc.ID{}, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "not acceptable: the Accept header must list text/event-stream"))
		return
	}
	sess := h.session(sid, r, time.Now())
	if sess == nil {
		writeJSONError(w, http.StatusNotFound, jsonrpc.ID{}, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "session %q not found (it ended or expired): send initialize to start a new session", sid))
		return
	}
	last := r.Header.Get(HeaderLastEventID)
	if last == "" && !sess.standalone.reserve() {
		writeJSONError(w, http.StatusConflict, jsonrpc.ID{}, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "conflict: this session already has an open GET stream; only one is allowed"))
		return
	}
	if !h.Server.acquireStream() {
		if last == "" {
			sess.standalone.unreserve()
		}
		writeBusy(w, jsonrpc.ID{}, "%d SSE streams are open, the most this server allows: close the streams you no longer read, or raise the cap (Server.MaxStreams; toolwire serve --max-streams)", h.Server.maxStreams())
		return
	}
	defer h.Server.releaseStream()
	idle := h.Server.streamIdleTimeout()
	if last != "" {
		sw := startHeldSSE(w)
		stream, ok := sess.events.replay(last, sw)
		if !ok {
			return
		}
		// Continue the resumed stream on this connection, until the
		// session ends too.
		done := sess.events.attach(stream, sw)
		ctx, cancel := context.WithCancel(r.Context())
		defer context.AfterFunc(sess.ctx, cancel)()
		defer cancel()
		if sw.hold(ctx, done, idle, nil) {
			sw.retry(retryMillis)
		}
		sess.events.detach(stream, sw)
		return
	}
	sw := startHeldSSE(w)
	if !sess.standalone.attach(sw) {
		return
	}
	if sw.hold(r.Context(), sess.ctx.Done(), idle, nil) {
		// Closed for being idle: the client opens it again, after the
		// retry interval.
		sw.retry(retryMillis)
	}
	sess.standalone.detach(sw)
}
