package mcp

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/toolwire/toolwire/jsonrpc"
)

var errStreamClosed = errors.New("the response stream is closed")

// sseWriter writes Server-Sent Events to one HTTP response.
type sseWriter struct {
	mu     sync.Mutex
	w      http.ResponseWriter
	rc     *http.ResponseController
	closed bool
	// last is when the stream last carried something (its start, an
	// event); stop, when not nil, is closed with the stream (held
	// streams: see hold).
	last time.Time
	stop chan struct{}
}

// startSSE sends the headers of an event stream. The stream stays open
// as long as the client and the server do: the connection's read deadline
// is lifted, and each event gets WriteTimeout to be written.
func startSSE(w http.ResponseWriter) *sseWriter {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{})
	now := time.Now()
	_ = rc.SetWriteDeadline(now.Add(WriteTimeout))
	w.WriteHeader(http.StatusOK)
	_ = rc.Flush()
	return &sseWriter{w: w, rc: rc, last: now}
}

// startHeldSSE starts an event stream that stays open between requests (a
// GET stream), for hold to keep.
func startHeldSSE(w http.ResponseWriter) *sseWriter {
	s := startSSE(w)
	s.stop = make(chan struct{})
	return s
}

// flushLocked sends what was written, within WriteTimeout; s.mu is held.
func (s *sseWriter) flushLocked() error {
	s.last = time.Now()
	_ = s.rc.SetWriteDeadline(s.last.Add(WriteTimeout))
	return s.rc.Flush()
}

// hold keeps a GET stream open until ctx or done ends, the stream is
// closed (another GET took it over, a write failed), or it has carried
// nothing for idle and busy (when not nil) reports no request in flight.
// It returns true when it ended the stream for being idle.
func (s *sseWriter) hold(ctx context.Context, done <-chan struct{}, idle time.Duration, busy func() bool) bool {
	t := time.NewTimer(idle)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-done:
			return false
		case <-s.stop:
			return false
		case <-t.C:
		}
		s.mu.Lock()
		left := idle - time.Since(s.last)
		s.mu.Unlock()
		switch {
		case left > 0:
			t.Reset(left)
		case busy != nil && busy():
			t.Reset(idle)
		default:
			return true
		}
	}
}

// retry tells the client how long to wait before it reconnects to a
// stream about to end (an SSE retry field, which dispatches no event).
func (s *sseWriter) retry(retryMs int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		_, _ = s.w.Write([]byte("retry: " + strconv.Itoa(retryMs) + "\n\n"))
		_ = s.flushLocked()
	}
}

// event writes one event; id may be empty.
func (s *sseWriter) event(id string, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errStreamClosed
	}
	var b []byte
	if id != "" {
		b = append(b, "id: "...)
		b = append(b, id...)
		b = append(b, '\n')
	}
	b = append(b, "event: message\ndata: "...)
	b = append(b, data...)
	b = append(b, "\n\n"...)
	if _, err := s.w.Write(b); err != nil {
		s.closeLocked()
		return err
	}
	if err := s.flushLocked(); err != nil {
		s.closeLocked()
		return err
	}
	return nil
}

// prime writes an event with only an id and a retry interval.
func (s *sseWriter) prime(id string, retryMs int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		_, _ = s.w.Write([]byte("id: " + id + "\nretry: " + strconv.Itoa(retryMs) + "\ndata: \n\n"))
		_ = s.flushLocked()
	}
}

// close stops all writes; the HTTP handler may then return.
func (s *sseWriter) close() {
	s.mu.Lock()
	s.closeLocked()
	s.mu.Unlock()
}

// closeLocked stops all writes and ends hold; s.mu is held.
func (s *sseWriter) closeLocked() {
	if !s.closed && s.stop != nil {
		close(s.stop)
	}
	s.closed = true
}

// maxLoggedEvents bounds the events a legacy stream keeps for resumption.
const maxLoggedEvents = 256

type storedEvent struct {
	seq  int
	data []byte
}

// eventStream is one SSE stream's sequence of events. A legacy stream is
// logged, so that a client that lost the connection can resume it with
// Last-Event-ID; its live writer may change as the client reconnects.
type eventStream struct {
	mu       sync.Mutex
	id       string // "" when not logged
	seq      int
	events   []storedEvent
	live     *sseWriter
	finished bool
	done     chan struct{}
}

func (s *eventStream) write(data []byte, final bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.finished {
		return errStreamClosed
	}
	s.seq++
	eid := ""
	if s.id != "" {
		eid = s.id + "_" + strconv.Itoa(s.seq)
		if len(s.events) == maxLoggedEvents {
			s.events = append(s.events[:0], s.events[1:]...)
		}
		s.events = append(s.events, storedEvent{seq: s.seq, data: data})
	}
	var err error
	if s.live != nil {
		if err = s.live.event(eid, data); err != nil {
			s.live = nil
		}
	} else if s.id == "" {
		err = errStreamClosed
	}
	if final {
		s.finished = true
		close(s.done)
	}
	return err
}

// end writes the final event m, or with m nil just ends the stream.
func (s *eventStream) end(m *jsonrpc.Message) error {
	if m != nil {
		return s.write(m.Append(nil), true)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.finished {
		s.finished = true
		close(s.done)
	}
	return nil
}

// eventLog keeps a legacy session's logged streams.
type eventLog struct {
	mu      sync.Mutex
	next    int
	streams map[string]*eventStream
}

func newEventLog() *eventLog { return &eventLog{streams: map[string]*eventStream{}} }

func (l *eventLog) newStream(live *sseWriter) *eventStream {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.next++
	s := &eventStream{id: "s" + strconv.Itoa(l.next), live: live, done: make(chan struct{})}
	l.streams[s.id] = s
	// Forget finished streams beyond a few, oldest first.
	if len(l.streams) > 64 {
		for id, st := range l.streams {
			st.mu.Lock()
			fin := st.finished
			st.mu.Unlock()
			if fin && id != s.id {
				delete(l.streams, id)
				break
			}
		}
	}
	return s
}

// replay writes the events after lastID to w and returns their stream.
func (l *eventLog) replay(lastID string, w *sseWriter) (*eventStream, bool) {
	sid, seqStr, ok := strings.Cut(lastID, "_")
	seq, err := strconv.Atoi(seqStr)
	if !ok || err != nil {
		return nil, false
	}
	l.mu.Lock()
	s := l.streams[sid]
	l.mu.Unlock()
	if s == nil {
		return nil, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.events {
		if e.seq > seq {
			if w.event(s.id+"_"+strconv.Itoa(e.seq), e.data) != nil {
				return nil, false
			}
		}
	}
	return s, true
}

// attach makes w the live writer of a stream and returns a channel closed
// when the stream ends. The stream's previous writer, a GET that resumed
// it before, is closed: a stream has one GET at most, so that a session's
// GET streams are bounded by its standalone one and its requests in
// flight, however often the client resumes.
func (l *eventLog) attach(s *eventStream, w *sseWriter) <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.finished {
		if s.live != nil && s.live != w {
			s.live.close()
		}
		s.live = w
	}
	return s.done
}

func (l *eventLog) detach(s *eventStream, w *sseWriter) {
	s.mu.Lock()
	if s.live == w {
		s.live = nil
	}
	s.mu.Unlock()
	w.close()
}

// postSender carries one POSTed request's messages. It answers with plain
// JSON when the response is the only message, and switches to an SSE
// stream as soon as a notification or server request comes first.
//
// A response can end before its request does: a timeout or a cancellation
// answers while the handler runs on, and a handler may close its stream
// for the client to resume (CloseSSEStream). On HTTP/1 the request runs on
// the HTTP handler's goroutine, and such a response goes out by itself: a
// JSON answer is flushed whole with "Connection: close", and a stream is
// cut by taking its connection over from net/http, ending the chunked body
// and closing the connection. HTTP/2 cannot hand a connection over, so
// there the request runs on a worker and the handler returns as soon as
// the response is done; so it does behind a ResponseWriter that wraps
// net/http's without Unwrap.
type postSender struct {
	w   http.ResponseWriter
	req *http.Request // for the request's span: its peer and protocol
	log *eventLog     // legacy sessions log their streams
	// jsonType is the Content-Type header's value of a JSON answer: part
	// of the sender, not an allocation of its own.
	jsonType [1]string
	// bufs lends the buffer a JSON answer is encoded in (the server's
	// result buffers), so that neither the sender nor each answer
	// carries one.
	bufs  *sync.Pool
	start time.Time
	// work is set when a worker runs the request (HTTP/2): apart, so
	// that the usual sender (HTTP/1) is the smaller.
	work *postWork

	modern bool
	// prime makes a logged stream open with an event that carries only an
	// id and a retry interval, so the client can resume it (2025-11-25).
	prime bool
	// inline is set on HTTP/1, where the handler's goroutine runs the
	// request; chunked when its SSE body is chunked (HTTP/1.1).
	inline, chunked bool

	mu     sync.Mutex
	closed bool // no more writes: a response was written or cut, or the handler returned
	stream *eventStream
	sse    *sseWriter
}

// postWork is a request as a worker runs it for a postSender, and done,
// closed when the response is done.
type postWork struct {
	done    chan struct{}
	doneOne sync.Once
	ctx     context.Context
	conn    *conn
	msg     *jsonrpc.Message
}

// run serves the request; a worker calls it.
func (p *postSender) run() { p.work.conn.serve(p.work.ctx, p.work.msg, p, p.start) }

func newPostSender(w http.ResponseWriter, r *http.Request, s *Server, log *eventLog, modern bool, start time.Time) *postSender {
	p := new(postSender)
	p.init(w, r, s, log, modern, start)
	return p
}

// init makes p, which is zero, the sender of the response to r (see
// newPostSender).
func (p *postSender) init(w http.ResponseWriter, r *http.Request, s *Server, log *eventLog, modern bool, start time.Time) {
	p.w, p.req, p.log, p.modern, p.bufs, p.start = w, r, log, modern, &s.results, start
	if r.ProtoMajor == 1 && canHijack(w) {
		p.inline, p.chunked = true, r.ProtoAtLeast(1, 1)
	} else {
		p.work = &postWork{done: make(chan struct{})}
	}
}

// canHijack reports whether w, or a ResponseWriter it wraps (Unwrap, as
// http.ResponseController finds them), can hand its connection over.
func canHijack(w http.ResponseWriter) bool {
	for {
		switch t := w.(type) {
		case http.Hijacker:
			return true
		case interface{ Unwrap() http.ResponseWriter }:
			w = t.Unwrap()
		default:
			return false
		}
	}
}

// maxCopiedAnswer is the largest JSON answer encoded whole into a
// buffer before it is written; a larger one goes out in parts.
const maxCopiedAnswer = 4 << 10

// netHTTPBuffered is how much of a response net/http holds before it sends
// the headers: a handler that writes no more and returns gets a
// Content-Length computed for it.
const netHTTPBuffered = 2048

// retryMillis is the reconnection delay suggested to clients of resumable
// streams.
const retryMillis = 1000

// startStream switches to SSE; p.mu is held.
func (p *postSender) startStream() {
	p.sse = startSSE(p.w)
	if p.log != nil {
		p.stream = p.log.newStream(p.sse)
		if p.prime {
			p.sse.prime(p.stream.id+"_0", retryMillis)
		}
	} else {
		p.stream = &eventStream{live: p.sse, done: make(chan struct{})}
	}
}

// closeStream ends the HTTP response of a resumable stream before the
// request is done; the client resumes the stream with a GET carrying
// Last-Event-ID. It reports whether the stream can be resumed.
func (p *postSender) closeStream() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.log == nil || p.closed && p.stream == nil {
		return false
	}
	if p.stream == nil {
		p.startStream()
	}
	p.endLocked()
	return true
}

// endLocked ends the HTTP response now, while the request runs on; p.mu
// is held. Events still to come are only logged, for the client to
// resume. Should the connection fail to be handed over (it broke), the
// response ends when the handler returns.
func (p *postSender) endLocked() {
	if !p.inline {
		p.markDone()
		return
	}
	if p.closed {
		return // cut already, or the handler returned: net/http ends it
	}
	p.closed = true
	p.detachLocked()
	rc := http.NewResponseController(p.w)
	if rc.Flush() != nil {
		return
	}
	c, buf, err := rc.Hijack()
	if err != nil {
		return
	}
	if p.chunked {
		_, _ = buf.WriteString("0\r\n\r\n") // the end of the chunked body
		_ = buf.Flush()
	}
	_ = c.Close()
}

func (p *postSender) send(m *jsonrpc.Message) error {
	p.mu.Lock()
	if p.stream == nil {
		if p.closed {
			p.mu.Unlock()
			return errStreamClosed
		}
		p.startStream()
	}
	s := p.stream
	p.mu.Unlock()
	return s.write(m.Append(nil), false)
}

// finish sends the response of a request whose handler returned.
func (p *postSender) finish(m *jsonrpc.Message) error { return p.answer(m, false) }

// finishEarly sends the response of a request whose handler runs on.
func (p *postSender) finishEarly(m *jsonrpc.Message) error { return p.answer(m, true) }

// answer sends the response (nil: none, for a cancelled request). early
// tells that the handler runs on, so the response must go out by itself.
func (p *postSender) answer(m *jsonrpc.Message, early bool) error {
	early = early && p.inline // a worker's handler returns at markDone
	defer p.markDone()
	p.mu.Lock()
	if s := p.stream; s != nil {
		p.mu.Unlock()
		err := s.end(m)
		if early {
			p.mu.Lock()
			p.endLocked()
			p.mu.Unlock()
		}
		return err
	}
	defer p.mu.Unlock()
	if p.closed {
		return errStreamClosed
	}
	p.closed = true
	h := p.w.Header()
	if early {
		// The connection stays busy until the handler returns: the client
		// must not send its next request on it.
		h.Set("Connection", "close")
	}
	var err error
	if m == nil {
		p.w.WriteHeader(http.StatusNoContent)
	} else {
		status := http.StatusOK
		if p.modern && m.Error != nil {
			status = modernErrorStatus(m.Error.Code)
		}
		p.jsonType[0] = "application/json"
		h["Content-Type"] = p.jsonType[:] // canonical already; net/http copies it
		n := m.Len()
		if early || n > netHTTPBuffered {
			h.Set("Content-Length", strconv.Itoa(n))
		} // else net/http sets it, holding the whole response
		if time.Since(p.start) > WriteTimeout/2 { // the monotonic clock only
			// The server's write deadline, set as the request arrived, may
			// pass before the response is written: give it a fresh one.
			_ = http.NewResponseController(p.w).SetWriteDeadline(time.Now().Add(WriteTimeout))
		}
		p.w.WriteHeader(status)
		if n <= maxCopiedAnswer {
			buf, _ := p.bufs.Get().(*[]byte)
			if buf == nil {
				buf = new([]byte)
			}
			*buf = m.Append((*buf)[:0])
			_, err = p.w.Write(*buf)
			p.bufs.Put(buf)
		} else {
			_, err = m.WriteTo(p.w) // its result not copied
		}
	}
	if early && err == nil {
		err = http.NewResponseController(p.w).Flush()
	}
	return err
}

// modernErrorStatus is the HTTP status of a modern JSON-RPC error response.
func modernErrorStatus(code int) int {
	switch code {
	case CodeUnsupportedProtocolVersion, CodeHeaderMismatch, CodeMissingRequiredClientCapability:
		return http.StatusBadRequest
	case jsonrpc.CodeMethodNotFound:
		return http.StatusNotFound
	}
	return http.StatusOK
}

// markDone records that the HTTP response is done, once; a worker's
// handler then returns.
func (p *postSender) markDone() {
	if w := p.work; w != nil {
		w.doneOne.Do(func() { close(w.done) })
	}
}

// wait blocks until the response is written or the client goes away, and
// then stops all writes to this HTTP response (a worker's handler).
func (p *postSender) wait(ctx context.Context) {
	select {
	case <-p.work.done:
	case <-ctx.Done():
	}
	p.release()
}

// release stops all writes to the HTTP response: its handler returns.
func (p *postSender) release() {
	p.mu.Lock()
	p.closed = true
	p.detachLocked()
	p.mu.Unlock()
}

// detachLocked stops the writes of the SSE stream, if any, to this HTTP
// response; p.mu is held.
func (p *postSender) detachLocked() {
	if p.stream != nil {
		p.stream.mu.Lock()
		if p.stream.live == p.sse {
			p.stream.live = nil
		}
		p.stream.mu.Unlock()
	}
	if p.sse != nil {
		p.sse.close()
	}
}

// sessionOut carries a legacy session's messages that belong to no request
// to its standalone GET stream, when one is open.
type sessionOut struct {
	events *eventLog
	mu     sync.Mutex
	stream *eventStream
	w      *sseWriter
	// reserved holds the stream for a GET between its check and its
	// attach, while it sends its headers: a second GET in that time is
	// refused, not answered with a stream that ends at once.
	reserved bool
}

// reserve claims the standalone stream for a GET that will attach to it;
// false when another GET has it or claimed it.
func (o *sessionOut) reserve() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.w != nil || o.reserved {
		return false
	}
	o.reserved = true
	return true
}

// unreserve gives up a claim that will not be attached.
func (o *sessionOut) unreserve() {
	o.mu.Lock()
	o.reserved = false
	o.mu.Unlock()
}

func (o *sessionOut) attach(w *sseWriter) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.w != nil {
		return false
	}
	o.w, o.reserved = w, false
	o.stream = o.events.newStream(w)
	return true
}

func (o *sessionOut) detach(w *sseWriter) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if w == nil || o.w == w {
		if o.w != nil {
			o.w.close()
		}
		o.w, o.stream = nil, nil
	}
}

func (o *sessionOut) send(m *jsonrpc.Message) error {
	o.mu.Lock()
	s := o.stream
	o.mu.Unlock()
	if s == nil {
		return errStreamClosed
	}
	return s.write(m.Append(nil), false)
}

func (o *sessionOut) finish(m *jsonrpc.Message) error {
	if m == nil {
		return nil
	}
	return o.send(m)
}
