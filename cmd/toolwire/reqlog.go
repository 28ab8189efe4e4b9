package main

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolwire/toolwire/jsonrpc"
)

// requestLog logs each MCP request a server answers as one line: its
// method, the tool, prompt or resource it names, how long it took, and its
// outcome ("ok", "tool_error" for a tool's own failure, "error" with the
// JSON-RPC code and message). It watches the messages on the transport, so
// it sees every request as the client sent it.
type requestLog struct {
	logger *slog.Logger
	seq    atomic.Int64 // numbers HTTP requests

	mu      sync.Mutex
	pending map[string]pendingRequest // by session and id
}

type pendingRequest struct {
	method, name string
	start        time.Time
}

// attrs are the log attributes of a request that ended now: method,
// name (when it names something), duration.
func (p pendingRequest) attrs() []any {
	attrs := []any{"method", p.method}
	if p.name != "" {
		attrs = append(attrs, "name", p.name)
	}
	return append(attrs, "duration", time.Since(p.start).Round(time.Microsecond).String())
}

func newRequestLog(logger *slog.Logger) *requestLog {
	return &requestLog{logger: logger, pending: map[string]pendingRequest{}}
}

// subject names what a request is about: a tool, a prompt, or a resource.
func subject(params json.RawMessage) string {
	var p struct {
		Name string `json:"name"`
		URI  string `json:"uri"`
	}
	if json.Unmarshal(params, &p) != nil {
		return ""
	}
	if p.Name != "" {
		return p.Name
	}
	return p.URI
}

// received notes a message from a client; key tells its connection apart.
func (l *requestLog) received(key string, data []byte) {
	m, err := jsonrpc.Decode(data)
	if err != nil {
		return
	}
	switch {
	case m.IsRequest():
		l.mu.Lock()
		l.pending[key+m.ID.String()] = pendingRequest{method: m.Method, name: subject(m.Params), start: time.Now()}
		l.mu.Unlock()
	case m.IsNotification():
		l.logger.Info("notification", "method", m.Method)
	}
}

// sent notes a message to a client: a response ends a request.
func (l *requestLog) sent(key string, data []byte) {
	m, err := jsonrpc.Decode(data)
	if err != nil || !m.IsResponse() {
		return
	}
	l.mu.Lock()
	p, ok := l.pending[key+m.ID.String()]
	delete(l.pending, key+m.ID.String())
	l.mu.Unlock()
	if !ok {
		return
	}
	attrs := p.attrs()
	var res struct {
		IsError bool `json:"isError"`
	}
	switch {
	case m.Error != nil:
		attrs = append(attrs, "outcome", "error", "code", m.Error.Code, "error", m.Error.Message)
	case json.Unmarshal(m.Result, &res) == nil && res.IsError:
		attrs = append(attrs, "outcome", "tool_error")
	default:
		attrs = append(attrs, "outcome", "ok")
	}
	l.logger.Info("request", attrs...)
}

// lineTap calls fn with each complete line written to it.
type lineTap struct {
	buf []byte
	fn  func([]byte)
}

func (t *lineTap) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	for {
		i := bytes.IndexByte(t.buf, '\n')
		if i < 0 {
			break
		}
		if line := bytes.TrimSpace(t.buf[:i]); len(line) > 0 {
			t.fn(line)
		}
		t.buf = t.buf[i+1:]
	}
	return len(p), nil
}

// stdio wraps a stdio server's streams so that each request is logged.
func (l *requestLog) stdio(in io.Reader, out io.Writer) (io.Reader, io.Writer) {
	rx := &lineTap{fn: func(b []byte) { l.received("", b) }}
	tx := &lineTap{fn: func(b []byte) { l.sent("", b) }}
	return io.TeeReader(in, rx), io.MultiWriter(out, tx)
}

// handler wraps an HTTP handler so that each request is logged. A POST
// carries one message; its response is a JSON body or an event stream.
func (l *requestLog) handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, "reading the request: "+err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		key := strconv.FormatInt(l.seq.Add(1), 10) + "/"
		l.received(key, body)
		lw := &loggedWriter{ResponseWriter: w, status: http.StatusOK}
		lw.tap = lineTap{fn: func(b []byte) {
			if data, ok := bytes.CutPrefix(b, []byte("data:")); ok {
				l.sent(key, bytes.TrimSpace(data))
			}
		}}
		next.ServeHTTP(lw, r)
		if strings.HasPrefix(w.Header().Get("Content-Type"), "application/json") {
			l.sent(key, lw.body.Bytes())
		}
		l.unanswered(key, lw.status)
	})
}

// unanswered logs the request of an HTTP exchange that ended without a
// JSON-RPC response: refused by HTTP status, or (202) to be answered on
// another stream.
func (l *requestLog) unanswered(key string, status int) {
	l.mu.Lock()
	var left []pendingRequest
	for k, p := range l.pending {
		if strings.HasPrefix(k, key) {
			left = append(left, p)
			delete(l.pending, k)
		}
	}
	l.mu.Unlock()
	for _, p := range left {
		outcome := "http_" + strconv.Itoa(status)
		if status == http.StatusAccepted {
			outcome = "accepted"
		}
		l.logger.Info("request", append(p.attrs(), "outcome", outcome)...)
	}
}

// loggedWriter copies a response to the request log: a JSON body whole, an
// event stream line by line.
type loggedWriter struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
	tap    lineTap
}

func (w *loggedWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *loggedWriter) Write(p []byte) (int, error) {
	if strings.HasPrefix(w.Header().Get("Content-Type"), "application/json") {
		w.body.Write(p)
	} else {
		_, _ = w.tap.Write(p)
	}
	return w.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach the real writer (to flush).
func (w *loggedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
