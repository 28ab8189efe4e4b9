package http1

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Completer is implemented by the http.ResponseWriter a Server gives its
// handler. A handler that has written its whole response may call
// Complete and go on running: the response is sent and the connection
// moves on to its next request without waiting for ServeHTTP to return.
// After Complete, writes fail and r.Body must not be read. Complete may be
// called from any goroutine that writes the response, in turn with it.
type Completer interface {
	Complete()
}

// errCompleted is returned by writes after the response is complete.
var errCompleted = errors.New("http1: write after the response was completed")

// response is the http.ResponseWriter of one request. Its methods are
// safe to call from one goroutine at a time, any goroutine; Complete and
// the server's own completion may race with them.
type response struct {
	c          *conn
	req        *http.Request
	closeAfter bool // close the connection after this response

	mu          sync.Mutex
	header      http.Header
	status      int
	wroteHeader bool // the status is set
	sentHeader  bool // the header block is in the write buffer
	chunked     bool
	length      int64 // declared Content-Length, or -1
	written     int64
	buf         []byte // body held back until the length is known
	completed   bool
	failed      bool          // a write to the connection failed
	done        chan struct{} // made by wait, closed by complete
}

var (
	_ http.ResponseWriter = (*response)(nil)
	_ http.Flusher        = (*response)(nil)
	_ Completer           = (*response)(nil)
)

// Header implements http.ResponseWriter.
func (w *response) Header() http.Header { return w.header }

// WriteHeader implements http.ResponseWriter. Informational statuses are
// not sent.
func (w *response) WriteHeader(code int) {
	if code < 100 || code > 999 {
		panic("http1: invalid WriteHeader code " + strconv.Itoa(code))
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.wroteHeader && code >= 200 {
		w.status, w.wroteHeader = code, true
	}
}

// Write implements http.ResponseWriter.
func (w *response) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.completed {
		return 0, errCompleted
	}
	if w.failed {
		return 0, errClientGone
	}
	if !w.wroteHeader {
		w.status, w.wroteHeader = http.StatusOK, true
	}
	if !bodyAllowed(w.status) {
		return 0, http.ErrBodyNotAllowed
	}
	if !w.sentHeader {
		if _, declared := w.declaredLength(); !declared && len(w.buf)+len(p) <= bufferSize {
			w.buf = append(w.buf, p...)
			return len(p), nil
		}
		w.sendHeld(false)
	}
	if w.length >= 0 && w.written+int64(len(p)) > w.length {
		return 0, http.ErrContentLength
	}
	w.writeBody(p)
	if w.failed {
		return 0, errClientGone
	}
	return len(p), nil
}

// Flush implements http.Flusher.
func (w *response) Flush() { _ = w.FlushError() }

// FlushError sends what was written so far (http.ResponseController uses
// it).
func (w *response) FlushError() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.completed {
		return errCompleted
	}
	w.sendHeld(false)
	w.flush()
	if w.failed {
		return errClientGone
	}
	return nil
}

// Complete implements Completer.
func (w *response) Complete() { w.complete() }

// complete sends the rest of the response, once.
func (w *response) complete() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.completed {
		return
	}
	w.completed = true
	w.sendHeld(true)
	switch {
	case w.chunked:
		w.write("0\r\n\r\n")
	case w.length >= 0 && w.written < w.length:
		w.closeAfter = true // the client would wait for the rest
	}
	w.flush()
	w.c.busy.Store(false)
	if w.done != nil {
		close(w.done)
	}
}

// sendHeld sends the header block, if not sent yet, with the body held
// back so far; final means that is the whole body. w.mu is held.
func (w *response) sendHeld(final bool) {
	if !w.wroteHeader {
		w.status, w.wroteHeader = http.StatusOK, true
	}
	if !w.sentHeader {
		w.sendHeader(final)
		if len(w.buf) > 0 {
			w.writeBody(w.buf)
			w.buf = nil
		}
	}
}

func (w *response) isComplete() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.completed
}

// wait blocks until the response is complete.
func (w *response) wait() {
	w.mu.Lock()
	if w.completed {
		w.mu.Unlock()
		return
	}
	if w.done == nil {
		w.done = make(chan struct{})
	}
	done := w.done
	w.mu.Unlock()
	<-done
}

// declaredLength returns the Content-Length the handler set, if valid.
func (w *response) declaredLength() (int64, bool) {
	v := w.header.Get("Content-Length")
	if v == "" {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	return n, err == nil && n >= 0
}

// bodyAllowed reports whether a response of status may have a body.
func bodyAllowed(status int) bool {
	return status >= 200 && status != http.StatusNoContent && status != http.StatusNotModified
}

// sendHeader puts the status line and header fields in the write buffer.
// final means the whole body is in w.buf, so its length is known.
func (w *response) sendHeader(final bool) {
	w.sentHeader = true
	w.length = -1
	h := w.header
	delete(h, "Transfer-Encoding")
	n, declared := w.declaredLength()
	switch {
	case !bodyAllowed(w.status):
		delete(h, "Content-Length")
		w.length = 0
	case declared:
		w.length = n
	case final:
		w.length = int64(len(w.buf))
		h.Del("Content-Length")
	default:
		h.Del("Content-Length")
		w.chunked = true
	}
	if w.req.Close || w.closeAfter {
		w.closeAfter = true
	}
	b := w.c.bw.AvailableBuffer()
	b = append(b, "HTTP/1.1 "...)
	b = strconv.AppendInt(b, int64(w.status), 10)
	b = append(b, ' ')
	b = append(b, http.StatusText(w.status)...)
	b = append(b, "\r\n"...)
	for k, vs := range h {
		if !validName(k) {
			continue
		}
		for _, v := range vs {
			b = appendField(b, k, v)
		}
	}
	if _, ok := h["Date"]; !ok {
		b = append(b, "Date: "...)
		b = time.Now().UTC().AppendFormat(b, http.TimeFormat)
		b = append(b, "\r\n"...)
	}
	switch {
	case w.chunked:
		b = append(b, "Transfer-Encoding: chunked\r\n"...)
	case w.length >= 0 && bodyAllowed(w.status) && !declared:
		b = append(b, "Content-Length: "...)
		b = strconv.AppendInt(b, w.length, 10)
		b = append(b, "\r\n"...)
	}
	if w.closeAfter {
		b = append(b, "Connection: close\r\n"...)
	}
	b = append(b, "\r\n"...)
	if _, err := w.c.bw.Write(b); err != nil {
		w.failed = true
	}
}

// appendField appends one header field, with line breaks in its value
// turned into spaces, as net/http does.
func appendField(b []byte, k, v string) []byte {
	b = append(b, k...)
	b = append(b, ": "...)
	if strings.ContainsAny(v, "\r\n") {
		v = strings.NewReplacer("\r", " ", "\n", " ").Replace(v)
	}
	b = append(b, v...)
	return append(b, "\r\n"...)
}

// writeBody writes part of the body, as a chunk if the response is
// chunked.
func (w *response) writeBody(p []byte) {
	if len(p) == 0 || w.failed {
		return
	}
	w.written += int64(len(p))
	if w.chunked {
		b := w.c.bw.AvailableBuffer()
		b = strconv.AppendInt(b, int64(len(p)), 16)
		b = append(b, "\r\n"...)
		if _, err := w.c.bw.Write(b); err != nil {
			w.failed = true
			return
		}
	}
	if _, err := w.c.bw.Write(p); err != nil {
		w.failed = true
		return
	}
	if w.chunked {
		w.write("\r\n")
	}
}

func (w *response) write(s string) {
	if !w.failed {
		if _, err := w.c.bw.WriteString(s); err != nil {
			w.failed = true
		}
	}
}

func (w *response) flush() {
	if !w.failed {
		if err := w.c.bw.Flush(); err != nil {
			w.failed = true
		}
	}
}
