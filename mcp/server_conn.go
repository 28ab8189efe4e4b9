package mcp

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolwire/toolwire/internal/ctxkey"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/tool"
)

// sender carries the messages that belong to one request back to the client:
// notifications and server-to-client requests about it (send), then its
// response (finish). finish(nil) ends the request without a response, as
// after a cancellation.
type sender interface {
	send(m *jsonrpc.Message) error
	finish(m *jsonrpc.Message) error
}

// conn is one client as the server sees it: a stdio process, a legacy HTTP
// session, or a single modern HTTP request. It holds the legacy session
// state, the requests in flight, and the server-to-client requests awaiting
// an answer.
type conn struct {
	srv *Server
	// out carries messages not tied to a request (list_changed, resource
	// updates, legacy server requests). Nil when there is no such channel.
	out sender
	sem chan struct{}

	mu          sync.Mutex
	initialized bool
	version     string
	caps        *ClientCapabilities // set once by initialize; shared, never modified
	clientInfo  *Implementation
	logLevel    LoggingLevel
	subs        map[string]bool
	inflight    map[string]*request // running and waiting for a slot
	waiting     int                 // requests in inflight waiting for a slot
	// single is set on the connection of one modern HTTP request (see
	// initRequestConn), whose request in flight is one, not in inflight,
	// and which has no slots (sem is nil).
	single bool
	one    *request
	// leave, on a single connection over HTTP, is the HTTP request's
	// context: its end (the client went away) ends the request, through
	// lctx (see leaveCtx).
	leave context.Context
	lctx  leaveCtx
	// timer, on a single connection, is where timeouts comes from, to go
	// back to the server once stopped.
	timer *requestTimer
	// fields, on a single connection, are what the HTTP handler read of
	// its request's params (readHeaderFields), which a tools/call does
	// not read again.
	fields *headerFields
	// One timer per connection enforces Server.RequestTimeout: armed for
	// the earliest deadline among the requests in flight.
	timeouts   *time.Timer
	timeoutsOn bool
	// session names a stateful connection (a legacy session, a stdio
	// client) and token digests the credentials of a modern HTTP request:
	// what the default caller is made of.
	session   string
	token     string
	pending   map[string]chan *jsonrpc.Message
	listeners map[*listener]struct{}
	nextID    atomic.Int64
	wg        sync.WaitGroup // requests served on their own goroutine

	// detached, when set, is what a request's context derives from in
	// place of the context it is served in: the session's context's
	// values without its cancellation. It is set for a connection that
	// close ends whenever that context ends (a legacy HTTP session), so
	// that close ends each request itself and a request need not
	// register with the long-lived context (a lock and a map entry there
	// per request). The context a request is served in then gives it
	// only its values, before the session's: those of the HTTP request it
	// came in (the caller's current credentials, as the program's HTTP
	// middleware stored them).
	detached context.Context
	closed   bool // close ran; guarded by mu
	// tracked is set once the server tracks the connection (Server.track).
	tracked atomic.Bool
	// opened is when a session (stdio, legacy HTTP) began: see
	// openSession.
	opened time.Time
}

func newConn(s *Server, out sender) *conn {
	s.init()
	s.telOnce.Do(s.makeInstruments)
	return &conn{srv: s, out: out, sem: make(chan struct{}, s.maxConcurrent())}
}

// initRequestConn makes c the connection of one modern HTTP request: it
// serves that request alone, so it needs neither slots for its requests
// to take (the server's bounds on HTTP requests apply) nor a map of them.
// c is part of a larger allocation (see HTTPHandler.modern).
func initRequestConn(c *conn, s *Server) {
	s.init()
	s.telOnce.Do(s.makeInstruments)
	c.srv, c.single = s, true
}

// addInflight records req, under key, as in flight; c.mu is held.
func (c *conn) addInflight(key string, req *request) {
	if c.single {
		c.one = req
		return
	}
	if c.inflight == nil {
		c.inflight = map[string]*request{}
	}
	c.inflight[key] = req
}

// removeInflight forgets req, under key, once it is answered; c.mu is
// held.
func (c *conn) removeInflight(key string, req *request) {
	if c.single {
		if c.one == req {
			c.one = nil
		}
		return
	}
	delete(c.inflight, key)
}

// inflightRequest returns the request in flight under key, or nil; c.mu
// is held.
func (c *conn) inflightRequest(key string) *request {
	if c.single {
		if c.one != nil && c.one.id.String() == key {
			return c.one
		}
		return nil
	}
	return c.inflight[key]
}

// requestsInFlight yields the requests in flight; c.mu is held.
func (c *conn) requestsInFlight(yield func(*request) bool) {
	if c.single {
		if c.one != nil {
			yield(c.one)
		}
		return
	}
	for _, r := range c.inflight {
		if !yield(r) {
			return
		}
	}
}

// errCancelled and errTimeout are the causes a request's context ends with.
var (
	errCancelled = errors.New("request cancelled by the client")
	errTimeout   = errors.New("request timed out")
)

// request is one client request being served. It is also its handler's
// context: the connection's context, cancelled with errCancelled or
// errTimeout when the request ends early, with the request as a value.
type request struct {
	context.Context
	cancel context.CancelCauseFunc
	conn   *conn
	id     jsonrpc.ID
	method string
	params json.RawMessage
	out    sender

	// answerMu is held while the response is sent, so that whoever
	// answers second (the handler, a timeout, a cancellation) returns only
	// once the response is out: an HTTP handler must not end before.
	answerMu sync.Mutex
	answered bool
	// queued is set while the request holds a place in the queue for a
	// slot; guarded by conn.mu.
	queued bool

	// Set by resolve, from _meta (modern) or the session (legacy).
	modern        bool
	version       string
	caps          *ClientCapabilities
	clientInfo    *Implementation
	logLevel      LoggingLevel // "" sends no log messages
	progressToken json.RawMessage

	// caller is what Server.Caller said; nil when it is not set.
	caller *tool.Caller
	// values, when set, are looked up before the request's context's
	// own: the HTTP request's, for a request of a legacy session (see
	// conn.detached).
	values context.Context

	// deadline is when Server.RequestTimeout ends the request (zero for
	// subscriptions/listen, and once ended); guarded by conn.mu.
	deadline time.Time

	// Multi round-trip state.
	mu        sync.Mutex
	responses map[string]json.RawMessage
	asked     map[string]InputRequest
	seq       int
	subject   string // the tool, prompt or resource the request is about
	// stateSubject is the subject a requestState was issued for.
	stateSubject string
	appState     json.RawMessage

	// parts holds the result of a tools/call and the response, and buf the
	// response's encoding, from the server's pools until the response is
	// written (recycle); nil before the result.
	parts *responseParts
	buf   *[]byte

	// op is the request's telemetry, when there is any (see serverOp).
	op *serverOp
}

// responseParts is what a request's response is made of until it is
// written: pooled, so that neither the request nor each response
// allocates it.
type responseParts struct {
	toolResult CallToolResult
	resp       jsonrpc.Message
}

// responseParts returns the request's response parts, taking them from
// the server's pool the first time.
func (r *request) responseParts() *responseParts {
	if r.parts == nil {
		r.parts, _ = r.conn.srv.parts.Get().(*responseParts)
		if r.parts == nil {
			r.parts = new(responseParts)
		}
	}
	return r.parts
}

type requestKey struct{}

// Value returns the request for requestKey and as the tool.Client of the
// calls it serves, and its caller (a tool.Caller) for ctxkey.Caller; other keys are the
// values of the HTTP request it came in (in a legacy session), then the
// connection context's.
func (r *request) Value(key any) any {
	switch key {
	case requestKey{}, ctxkey.Client{}:
		return r
	case ctxkey.Caller{}:
		if r.caller != nil {
			return *r.caller
		}
		if v := r.value(key); v != nil {
			return v // the embedding program's
		}
		return r.defaultCaller()
	}
	return r.value(key)
}

// callerOf is Value(ctxkey.Caller{}) as a tool.Caller, without boxing it
// (Request's RequestInfo.Caller, on every call through the gateway).
func (r *request) callerOf() tool.Caller {
	if r.caller != nil {
		return *r.caller
	}
	if c, ok := r.value(ctxkey.Caller{}).(tool.Caller); ok {
		return c
	}
	return r.defaultCaller()
}

// value looks key up in values, then in the request's context.
func (r *request) value(key any) any {
	if r.values != nil {
		if v := r.values.Value(key); v != nil {
			return v
		}
	}
	return r.Context.Value(key)
}

// defaultCaller is the caller of a request when neither Server.Caller nor
// the context it is served in names one: the legacy session or stdio
// connection, else the credentials of a modern HTTP request, else
// anonymous.
func (r *request) defaultCaller() tool.Caller {
	c := tool.Caller{}
	switch {
	case r.conn.session != "":
		c.ID = "session:" + r.conn.session
	case r.conn.token != "":
		c.ID = "token:" + r.conn.token
	}
	if r.clientInfo != nil {
		c.Client = r.clientInfo.Name
		if r.clientInfo.Version != "" {
			c.Client += "/" + r.clientInfo.Version
		}
	}
	return c
}

// end ends a request early: its context is cancelled with cause, and a timed
// out request is answered at once, a cancelled one never, even while its
// handler runs on.
func (r *request) end(cause error) {
	r.cancel(cause)
	switch cause {
	case errTimeout:
		r.answer(errorMessage(r.id, jsonrpc.NewError(jsonrpc.CodeInternalError,
			"request %s timed out after %s", r.method, r.conn.srv.requestTimeout())), true)
	case errCancelled:
		r.answer(nil, true) // a cancelled request gets no response
	}
}

func requestFrom(ctx context.Context) *request {
	r, _ := ctx.Value(requestKey{}).(*request)
	return r
}

// reply sends the request's response once; later calls do nothing.
func (r *request) reply(m *jsonrpc.Message) { r.answer(m, false) }

// earlyFinisher is a sender that must push out by itself a response sent
// while the request's handler runs on (see postSender).
type earlyFinisher interface {
	finishEarly(m *jsonrpc.Message) error
}

// answer sends the request's response once; early tells that the
// request's handler may still be running. A later call returns once the
// first has sent the response.
func (r *request) answer(m *jsonrpc.Message, early bool) {
	r.answerMu.Lock()
	defer r.answerMu.Unlock()
	if r.answered {
		return
	}
	r.answered = true
	var err error
	if f, ok := r.out.(earlyFinisher); ok && early {
		err = f.finishEarly(m)
	} else {
		err = r.out.finish(m)
	}
	if err != nil {
		r.conn.srv.logger().Debug("mcp: writing response", "method", r.method, "err", err)
	}
	r.endServerSpan(m)
}

// receive handles one decoded message from the client. Requests run on
// their own goroutine when async is true (stdio); otherwise (HTTP, where the
// caller is already a goroutine per request) on the caller's.
func (c *conn) receive(ctx context.Context, m *jsonrpc.Message, out sender, async bool) {
	switch {
	case m.IsResponse():
		c.deliver(m)
	case m.IsNotification():
		_, stdio := out.(lineSender)
		c.srv.tel.serverNotification(ctx, c, m, stdio, func() { c.notification(m) })
	default:
		if async && m.Method != MethodInitialize { // initialize is ordered before what follows
			c.wg.Add(1)
			go func() {
				defer c.wg.Done()
				c.serve(ctx, m, out, time.Now())
			}()
		} else {
			c.serve(ctx, m, out, time.Now())
		}
	}
}

func (c *conn) deliver(m *jsonrpc.Message) {
	c.mu.Lock()
	ch := c.pending[m.ID.String()]
	delete(c.pending, m.ID.String())
	c.mu.Unlock()
	if ch == nil {
		c.srv.logger().Debug("mcp: response to an unknown request id; ignored", "id", m.ID.String())
		return
	}
	ch <- m
}

func (c *conn) notification(m *jsonrpc.Message) {
	switch m.Method {
	case NotificationInitialized:
		// The session is usable from the initialize response on; nothing to do.
	case NotificationCancelled:
		var p CancelledParams
		if err := json.Unmarshal(m.Params, &p); err != nil {
			c.srv.logger().Debug("mcp: bad cancellation", "err", err)
			return
		}
		c.mu.Lock()
		req := c.inflightRequest(p.RequestID.String())
		if req != nil {
			c.unqueue(req)
		}
		var streams []*listener
		for l := range c.listeners {
			if l.id.String() == p.RequestID.String() {
				streams = append(streams, l)
			}
		}
		c.mu.Unlock()
		for _, l := range streams {
			l.silence() // before anything else can be sent on it
		}
		if req != nil {
			req.end(errCancelled)
		}
	default:
		// Other notifications (roots/list_changed, progress from the client)
		// need no action from the server.
	}
}

// serve runs one request to its response; its timeout counts from start,
// when it arrived. A request takes one of the connection's slots to run,
// waiting for one (as a request in flight, which a cancellation or its
// timeout ends) when all are taken, up to the queue's bound.
func (c *conn) serve(ctx context.Context, m *jsonrpc.Message, out sender, start time.Time) {
	req := &request{conn: c, id: m.ID, method: m.Method, params: m.Params, out: out}
	ctx = c.srv.tel.startServerSpan(ctx, req, start)
	// ping and initialize run at once whatever else does: they cost
	// nothing, and a client needs them answered while its work runs.
	slot := c.sem != nil && m.Method != MethodPing && m.Method != MethodInitialize
	queued := false
	if slot {
		select {
		case c.sem <- struct{}{}: // a free slot, as usual: no wait
		default:
			queued = true
		}
	}

	parent := ctx
	switch {
	case c.detached != nil:
		parent, req.values = c.detached, ctx
	case c.leave != nil:
		c.lctx.values.Context = ctx
		parent = &c.lctx.values
	}
	req.Context, req.cancel = context.WithCancelCause(parent)
	if c.leave != nil {
		c.lctx.init(req.Context, req.cancel, c.leave)
		req.Context = &c.lctx
		defer c.lctx.release()
	}
	defer req.cancel(nil)
	key := m.ID.String()
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		if slot && !queued {
			<-c.sem
		}
		req.end(errCancelled) // as close would have; nothing runs
		return
	}
	if queued && c.waiting >= c.srv.maxQueued() {
		c.mu.Unlock()
		req.reply(errorMessage(req.id, jsonrpc.NewError(jsonrpc.CodeInternalError,
			"server busy: %d requests running and %d waiting on this connection, its bounds; retry once some have been answered",
			cap(c.sem), c.waiting)))
		return
	}
	c.addInflight(key, req)
	if m.Method != MethodSubscriptionsListen {
		req.deadline = start.Add(c.srv.requestTimeout())
		c.armTimeouts(req.deadline)
	}
	if queued {
		req.queued = true
		c.waiting++
	}
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.removeInflight(key, req)
		c.mu.Unlock()
	}()
	if queued {
		got := false
		select {
		case c.sem <- struct{}{}:
			got = true
		case <-req.Done():
		}
		c.mu.Lock()
		c.unqueue(req)
		c.mu.Unlock()
		if req.Err() != nil {
			// Cancelled or timed out while it waited (whoever ended it
			// answered it), or the connection's context ended: it
			// never runs.
			if got {
				<-c.sem
			}
			req.reply(nil)
			return
		}
	}
	if slot {
		defer func() { <-c.sem }()
	}

	res, err := c.srv.call(req, req)
	if cause := context.Cause(req); cause == errCancelled || cause == errTimeout {
		req.end(cause) // as the timer or the cancellation did, in case it has not yet
		return
	}
	req.reply(c.response(req, res, err))
	req.recycle()
}

// unqueue gives up the place req holds in the queue for a slot, if it
// still holds one; c.mu is held. Whoever ends a waiting request does, so
// that the place is free for the next request at once.
func (c *conn) unqueue(req *request) {
	if req.queued {
		req.queued = false
		c.waiting--
	}
}

// armTimeouts makes sure the timeout timer fires by deadline; c.mu is
// held. A timer already armed fires earlier: every request gets the same
// timeout, so a later request's deadline is never the earliest.
func (c *conn) armTimeouts(deadline time.Time) {
	if c.timeoutsOn {
		return
	}
	c.timeoutsOn = true
	switch {
	case c.timeouts != nil:
		c.timeouts.Reset(time.Until(deadline))
	case c.single:
		c.timer = c.srv.armRequestTimer(c, time.Until(deadline))
		c.timeouts = c.timer.t
	default:
		c.timeouts = time.AfterFunc(time.Until(deadline), c.expire)
	}
}

// requestTimer is a timer that ends the requests of a connection past
// their deadline (conn.expire), kept from one modern HTTP request's
// connection for the next's once stopped: a timer per request is two
// allocations.
type requestTimer struct {
	t *time.Timer
	c atomic.Pointer[conn] // whose requests it ends
}

// armRequestTimer returns a timer, from those kept or new, that calls
// c.expire after d.
func (s *Server) armRequestTimer(c *conn, d time.Duration) *requestTimer {
	rt, _ := s.timers.Get().(*requestTimer)
	if rt == nil {
		rt = new(requestTimer)
		rt.c.Store(c)
		rt.t = time.AfterFunc(d, func() {
			if c := rt.c.Load(); c != nil {
				c.expire()
			}
		})
		return rt
	}
	rt.c.Store(c)
	rt.t.Reset(d)
	return rt
}

// stopTimeouts stops the connection's timeout timer as it closes; c.mu is
// held. A single connection's timer is kept for another connection only
// when it stopped before it fired: then its function never runs for c.
func (c *conn) stopTimeouts() {
	if c.timeouts == nil {
		return
	}
	stopped := c.timeouts.Stop()
	if rt := c.timer; rt != nil && stopped {
		rt.c.Store(nil)
		c.timer, c.timeouts = nil, nil
		c.srv.timers.Put(rt)
	}
}

// expire ends the requests past their deadline and re-arms the timer for
// the earliest one left.
func (c *conn) expire() {
	c.mu.Lock()
	c.timeoutsOn = false
	now := time.Now()
	var expired []*request
	var next time.Time
	for r := range c.requestsInFlight {
		switch {
		case r.deadline.IsZero():
		case !now.Before(r.deadline):
			r.deadline = time.Time{} // ended once
			c.unqueue(r)
			expired = append(expired, r)
		case next.IsZero() || r.deadline.Before(next):
			next = r.deadline
		}
	}
	if !next.IsZero() {
		c.armTimeouts(next)
	}
	c.mu.Unlock()
	for _, r := range expired {
		r.end(errTimeout)
	}
}

// call dispatches a request, turning a panic into an error.
func (s *Server) call(ctx context.Context, req *request) (res any, err error) {
	defer func() {
		if p := recover(); p != nil {
			s.logger().Error("mcp: handler panicked", "method", req.method, "panic", p, "stack", string(debug.Stack()))
			res, err = nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "internal error: the %s handler panicked: %v", req.method, p)
		}
	}()
	return s.dispatch(ctx, req)
}

func errorMessage(id jsonrpc.ID, e *jsonrpc.Error) *jsonrpc.Message {
	return &jsonrpc.Message{ID: id, Error: e}
}

// response turns a handler's outcome into the response message.
func (c *conn) response(req *request, res any, err error) *jsonrpc.Message {
	if err != nil {
		if errors.Is(err, ErrInputRequired) && req.modern && len(req.asked) > 0 {
			res, err = c.srv.inputRequired(req)
		}
	}
	if err != nil {
		return errorMessage(req.id, toRPCError(req, err))
	}
	var meta []byte
	if req.modern {
		meta = decorate(res, c.srv, c.srv.ListTTL)
	}
	buf, _ := c.srv.results.Get().(*[]byte)
	if buf == nil {
		buf = new([]byte)
	}
	b, merr := appendResult((*buf)[:0], res, meta)
	*buf = b
	req.buf = buf
	if merr != nil {
		return errorMessage(req.id, jsonrpc.NewError(jsonrpc.CodeInternalError, "internal error: encoding the %s result: %v", req.method, merr))
	}
	a := req.responseParts()
	a.resp = jsonrpc.Message{ID: req.id, Result: b}
	return &a.resp
}

// maxPooledResult is the largest result buffer kept for reuse: enough for
// the result of a tool echoing a few MiB, which then neither allocates nor
// zeroes a buffer per call (1 MiB stdio echo: 4.6 -> 4.0 ms in bench). A
// sync.Pool lets the garbage collector drop idle buffers.
const maxPooledResult = 4 << 20

// recycle gives the request's response parts and result buffer back once
// the response has been written (every sender copies it).
func (r *request) recycle() {
	if r.buf != nil && cap(*r.buf) <= maxPooledResult {
		r.conn.srv.results.Put(r.buf)
	}
	r.buf = nil
	if r.parts != nil {
		*r.parts = responseParts{}
		r.conn.srv.parts.Put(r.parts)
		r.parts = nil
	}
}

func toRPCError(req *request, err error) *jsonrpc.Error {
	var e *jsonrpc.Error
	switch {
	case errors.As(err, &e):
		return e
	case errors.Is(err, context.DeadlineExceeded):
		return jsonrpc.NewError(jsonrpc.CodeInternalError, "request %s timed out", req.method)
	case errors.Is(err, context.Canceled):
		return jsonrpc.NewError(jsonrpc.CodeInternalError, "request %s was cancelled", req.method)
	}
	return jsonrpc.NewError(jsonrpc.CodeInternalError, "%s failed: %v", req.method, err)
}

type resultBase interface{ base() *ResultBase }
type cacheable interface{ cacheable() *Cacheable }

// decorate adds what a modern result carries: its type, the server's
// identity and, on cacheable results, a freshness hint. A tool result
// without _meta is left without: decorate returns the _meta its encoding
// must carry instead (the server's identity, encoded once), sparing a map
// per call; otherwise it returns nil.
func decorate(res any, s *Server, ttl time.Duration) (meta []byte) {
	if r, ok := res.(resultBase); ok {
		b := r.base()
		if b.ResultType == "" {
			b.ResultType = ResultComplete
		}
		if _, isTool := res.(*CallToolResult); isTool && b.Meta == nil {
			if info := s.serverInfoJSON(); info != nil {
				meta = info.meta
			}
		}
		if _, ok := b.Meta[MetaServerInfo]; !ok && meta == nil {
			// A copy: the map may be a handler's, shared by its results.
			m := make(map[string]any, len(b.Meta)+1)
			maps.Copy(m, b.Meta)
			m[MetaServerInfo] = s.serverInfoValue()
			b.Meta = m
		}
	}
	if r, ok := res.(cacheable); ok {
		cb := r.cacheable()
		if cb.TTLMs == nil {
			ms := ttl.Milliseconds()
			cb.TTLMs = &ms
		}
		if cb.CacheScope == "" {
			cb.CacheScope = "private"
		}
	}
	return meta
}

// ask sends a request to the client and waits for its answer (legacy era).
func (c *conn) ask(ctx context.Context, out sender, method string, params any) (_ json.RawMessage, err error) {
	id := jsonrpc.StringID("s" + strconv.FormatInt(c.nextID.Add(1), 10))
	m, err := jsonrpc.NewRequest(id, method, params)
	if err != nil {
		return nil, err
	}
	ctx, end := c.srv.tel.startAsk(ctx, c, m)
	defer func() { end(err) }()
	ch := make(chan *jsonrpc.Message, 1)
	c.mu.Lock()
	if c.pending == nil {
		c.pending = map[string]chan *jsonrpc.Message{}
	}
	c.pending[id.String()] = ch
	c.mu.Unlock()
	drop := func() {
		c.mu.Lock()
		delete(c.pending, id.String())
		c.mu.Unlock()
	}
	if err := out.send(m); err != nil {
		drop()
		return nil, fmt.Errorf("sending %s to the client: %w", method, err)
	}
	select {
	case resp := <-ch:
		if resp.Error != nil {
			// %v, not %w: the client's error is not the server's protocol
			// error, and must not be passed through as one (a tools/call
			// would answer with the client's own code instead of a tool
			// error result).
			return nil, fmt.Errorf("client answered %s with an error: %v", method, resp.Error)
		}
		return resp.Result, nil
	case <-ctx.Done():
		drop()
		return nil, fmt.Errorf("waiting for the client to answer %s: %w", method, context.Cause(ctx))
	}
}

// stopListeners ends the connection's subscriptions/listen streams.
func (c *conn) stopListeners() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for l := range c.listeners {
		l.stop()
	}
}

// close ends every request in flight, e.g. when the transport closes.
func (c *conn) close() {
	c.mu.Lock()
	c.closed = true
	for req := range c.requestsInFlight {
		req.end(errCancelled)
	}
	c.stopTimeouts()
	for l := range c.listeners {
		l.stop()
	}
	c.mu.Unlock()
	c.srv.untrack(c)
	_, stdio := c.out.(lineSender)
	c.srv.tel.sessionEnded(c, stdio)
}

// openSession names a stateful connection (a stdio client, a legacy HTTP
// session) and starts its clock.
func (c *conn) openSession(id string) {
	c.session = id
	c.opened = time.Now()
}

// busy reports whether a request of c is in flight.
func (c *conn) busy() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.inflight) > 0 || c.one != nil
}

// session state

func (c *conn) isInitialized() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.initialized
}

func (c *conn) resourceUpdated(uri string) {
	c.mu.Lock()
	subscribed := c.subs[uri]
	ls := c.listenerList()
	c.mu.Unlock()
	if subscribed && c.out != nil {
		if m, err := jsonrpc.NewNotification(NotificationResourceUpdated, ResourceUpdatedParams{URI: uri}); err == nil {
			_ = c.out.send(m)
		}
	}
	for _, l := range ls {
		l.resourceUpdated(uri)
	}
}

func (c *conn) listChanged(method string) {
	c.mu.Lock()
	legacy := c.initialized && c.out != nil
	ls := c.listenerList()
	c.mu.Unlock()
	if legacy {
		_ = c.out.send(&jsonrpc.Message{Method: method})
	}
	for _, l := range ls {
		l.listChanged(method)
	}
}

func (c *conn) listenerList() []*listener {
	out := make([]*listener, 0, len(c.listeners))
	for l := range c.listeners {
		out = append(out, l)
	}
	return out
}

// randomID returns 128 random bits in hex: a name for a connection.
func randomID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // never fails (crypto/rand panics instead)
	return hex.EncodeToString(b)
}

// credentialDigest names the credentials of a request without keeping
// them: the first 128 bits of their SHA-256, in hex; "" for none.
func credentialDigest(credentials string) string {
	if credentials == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(credentials))
	return hex.EncodeToString(sum[:16])
}
