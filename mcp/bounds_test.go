package mcp_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolwire/toolwire/mcp"
)

// boundedServer serves srv as `toolwire serve --http` does
// (mcp.NewHTTPEndpoints, with cfg's bounds) over a loopback listener. It
// returns the server's base URL.
func boundedServer(t *testing.T, srv *mcp.Server, cfg mcp.HTTPConfig) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs, end := mcp.NewHTTPEndpoints(srv, cfg)
	go hs.Serve(ln)
	t.Cleanup(func() {
		hs.Close()
		end()
	})
	return "http://" + ln.Addr().String()
}

// boundsReply is the status, headers and body of one request.
type boundsReply struct {
	status int
	header http.Header
	body   string
}

// boundsPost posts body to /mcp, in session sid when not empty.
func boundsPost(t *testing.T, base, sid, body string) boundsReply {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/mcp", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set(mcp.HeaderSessionID, sid)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", body, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("POST %s: reading the answer: %v", body, err)
	}
	return boundsReply{resp.StatusCode, resp.Header, strings.ReplaceAll(string(b), `\"`, `"`)}
}

const legacyInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// openSession starts a legacy session and returns its id.
func openSession(t *testing.T, base string) string {
	t.Helper()
	r := boundsPost(t, base, "", legacyInit)
	sid := r.header.Get(mcp.HeaderSessionID)
	if r.status != http.StatusOK || sid == "" {
		t.Fatalf("initialize: HTTP %d %q, session %q; want 200 with a session", r.status, r.body, sid)
	}
	return sid
}

// pingSession pings session sid and returns the HTTP status.
func pingSession(t *testing.T, base, sid string) boundsReply {
	t.Helper()
	return boundsPost(t, base, sid, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
}

// expectBusy checks a refusal for a full cap: 503 with Retry-After and a
// body that says which cap is full and how to raise it.
func expectBusy(t *testing.T, what string, r boundsReply, says ...string) {
	t.Helper()
	if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" {
		t.Errorf("%s: HTTP %d, Retry-After %q, %q; want 503 with Retry-After", what, r.status, r.header.Get("Retry-After"), r.body)
	}
	for _, s := range says {
		if !strings.Contains(r.body, s) {
			t.Errorf("%s: %q does not say %q", what, r.body, s)
		}
	}
}

// sseStream is an open SSE stream, read in the background.
type sseStream struct {
	resp   *http.Response
	cancel context.CancelFunc
	ended  chan struct{} // closed at the stream's end
	mu     sync.Mutex
	text   strings.Builder // what arrived
}

// openStream sends a GET to path (/mcp of session sid, or /sse), resuming
// after lastID when not empty. It returns the stream when the server
// answered 200, else the refusal.
func openStream(t *testing.T, base, path, sid, lastID string) (*sseStream, boundsReply) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	if sid != "" {
		req.Header.Set(mcp.HeaderSessionID, sid)
	}
	if lastID != "" {
		req.Header.Set(mcp.HeaderLastEventID, lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatalf("GET %s: %v", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		defer cancel()
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return nil, boundsReply{resp.StatusCode, resp.Header, strings.ReplaceAll(string(b), `\"`, `"`)}
	}
	s := &sseStream{resp: resp, cancel: cancel, ended: make(chan struct{})}
	go func() {
		defer close(s.ended)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			s.mu.Lock()
			s.text.WriteString(sc.Text() + "\n")
			s.mu.Unlock()
		}
	}()
	t.Cleanup(s.close)
	return s, boundsReply{status: resp.StatusCode, header: resp.Header}
}

// close ends the stream from the client's side and waits for its reader.
func (s *sseStream) close() {
	s.cancel()
	<-s.ended
	s.resp.Body.Close()
}

func (s *sseStream) received() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.text.String()
}

// isOpen reports whether the server still holds the stream open.
func (s *sseStream) isOpen() bool {
	select {
	case <-s.ended:
		return false
	default:
		return true
	}
}

// waitEnd waits for the server to end the stream.
func (s *sseStream) waitEnd(t *testing.T, what string) {
	t.Helper()
	select {
	case <-s.ended:
	case <-time.After(waitTimeout):
		t.Fatalf("%s: the stream was still open after %v", what, waitTimeout)
	}
}

// TestSessionCap fills MaxSessions and checks that one more initialize is
// refused with 503, Retry-After and a message naming the cap and what to
// do, that the open sessions still answer, and that a session ended with
// DELETE frees its slot.
func TestSessionCap(t *testing.T) {
	const max = 3
	base := boundedServer(t, newServer(t, echoTool()), mcp.HTTPConfig{MaxSessions: max})
	var sids []string
	for range max {
		sids = append(sids, openSession(t, base))
	}
	r := boundsPost(t, base, "", legacyInit)
	expectBusy(t, "initialize past the cap", r, fmt.Sprintf("%d legacy sessions are open", max), "DELETE", "--max-sessions")
	if !strings.Contains(r.body, `"id":1,"error":{"code":-32000`) {
		t.Errorf("initialize past the cap: body %q; want a JSON-RPC error for id 1", r.body)
	}
	if sid := r.header.Get(mcp.HeaderSessionID); sid != "" {
		t.Errorf("initialize past the cap got session %q", sid)
	}
	for _, sid := range sids {
		if r := pingSession(t, base, sid); r.status != http.StatusOK {
			t.Errorf("ping of an open session while the cap is full: HTTP %d %q", r.status, r.body)
		}
	}
	req, _ := http.NewRequest(http.MethodDelete, base+"/mcp", nil)
	req.Header.Set(mcp.HeaderSessionID, sids[0])
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("DELETE: %v %v", resp, err)
	}
	resp.Body.Close()
	openSession(t, base) // in the slot DELETE freed
	expectBusy(t, "initialize past the cap again", boundsPost(t, base, "", legacyInit))
}

// TestSessionIdleExpiry leaves a session unused past SessionIdleTimeout
// with MaxSessions 1 and checks that it expires by itself, freeing its
// slot, without any request to it; and that a session in use does not
// expire.
func TestSessionIdleExpiry(t *testing.T) {
	t.Run("unused", func(t *testing.T) {
		base := boundedServer(t, newServer(t, echoTool()), mcp.HTTPConfig{MaxSessions: 1, SessionIdleTimeout: 50 * time.Millisecond})
		idle := openSession(t, base)
		eventually(t, "the idle session frees its slot", func() bool {
			return boundsPost(t, base, "", legacyInit).status == http.StatusOK
		})
		r := pingSession(t, base, idle)
		if r.status != http.StatusNotFound || !strings.Contains(r.body, "expired") {
			t.Errorf("ping of the expired session: HTTP %d %q; want 404 saying it expired", r.status, r.body)
		}
	})
	t.Run("in use", func(t *testing.T) {
		const idle = 400 * time.Millisecond
		base := boundedServer(t, newServer(t, echoTool()), mcp.HTTPConfig{SessionIdleTimeout: idle})
		sid := openSession(t, base)
		for end := time.Now().Add(3 * idle); time.Now().Before(end); time.Sleep(idle / 20) {
			if r := pingSession(t, base, sid); r.status != http.StatusOK {
				t.Fatalf("ping of a session in use, every %v with an idle timeout of %v: HTTP %d %q", idle/20, idle, r.status, r.body)
			}
		}
	})
}

// TestStreamCap fills Server.MaxStreams with GET streams of legacy
// sessions and checks that one more, of either transport, is refused with
// 503 and Retry-After, that a second standalone stream of a session is
// refused with 409, and that a stream the client closes frees its slot.
func TestStreamCap(t *testing.T) {
	srv := newServer(t, echoTool())
	srv.MaxStreams = 2
	base := boundedServer(t, srv, mcp.HTTPConfig{})
	s1, s2, s3 := openSession(t, base), openSession(t, base), openSession(t, base)
	first, _ := openStream(t, base, "/mcp", s1, "")
	if first == nil {
		t.Fatal("the first GET stream was refused")
	}
	if st, r := openStream(t, base, "/mcp", s1, ""); st != nil || r.status != http.StatusConflict {
		t.Errorf("a second standalone stream of a session: HTTP %d %q; want 409", r.status, r.body)
	}
	if st, _ := openStream(t, base, "/mcp", s2, ""); st == nil {
		t.Fatal("the second GET stream was refused")
	}
	_, r := openStream(t, base, "/mcp", s3, "")
	expectBusy(t, "GET /mcp past the cap", r, "2 SSE streams are open", "--max-streams")
	_, r = openStream(t, base, "/sse", "", "")
	expectBusy(t, "GET /sse past the cap", r, "2 SSE streams are open", "--max-streams")

	first.close()
	eventually(t, "a closed stream frees its slot", func() bool {
		st, _ := openStream(t, base, "/mcp", s3, "")
		return st != nil
	})
}

// TestStreamIdleTimeout checks that a stream that carries nothing for
// Server.StreamIdleTimeout is closed, on both transports, with a retry
// interval for the Streamable HTTP client to reopen it; that the slot it
// held is freed; and that an HTTP+SSE stream (whose session ends with it)
// is not closed while one of its requests runs.
func TestStreamIdleTimeout(t *testing.T) {
	block := newBlockingTool("block")
	defer block.unblock()
	srv := newServer(t, block)
	srv.StreamIdleTimeout = 50 * time.Millisecond
	srv.MaxStreams = 1
	base := boundedServer(t, srv, mcp.HTTPConfig{})

	sid := openSession(t, base)
	get, _ := openStream(t, base, "/mcp", sid, "")
	if get == nil {
		t.Fatal("GET /mcp refused")
	}
	get.waitEnd(t, "an idle GET /mcp stream")
	if got := get.received(); !strings.Contains(got, "retry: ") {
		t.Errorf("the idle GET stream ended with %q; want a retry field", got)
	}
	if r := pingSession(t, base, sid); r.status != http.StatusOK {
		t.Errorf("the session after its stream closed: HTTP %d %q", r.status, r.body)
	}

	var sse *sseStream
	eventually(t, "the idle stream frees its slot", func() bool {
		sse, _ = openStream(t, base, "/sse", "", "")
		return sse != nil
	})
	sse.waitEnd(t, "an idle /sse stream")

	// A request in flight keeps an HTTP+SSE stream open.
	eventually(t, "the idle stream frees its slot", func() bool {
		sse, _ = openStream(t, base, "/sse", "", "")
		return sse != nil
	})
	var endpoint string
	eventually(t, "the endpoint event", func() bool {
		_, rest, ok := strings.Cut(sse.received(), "event: endpoint\ndata: ")
		endpoint, _, _ = strings.Cut(rest, "\n")
		return ok && strings.Contains(endpoint, "sessionId=")
	})
	for i, msg := range []string{legacyInit, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"block","arguments":{}}}`} {
		resp, err := http.Post(base+endpoint, "application/json", strings.NewReader(msg))
		if err != nil || resp.StatusCode != http.StatusAccepted {
			t.Fatalf("POST %s: %v %v", endpoint, resp, err)
		}
		resp.Body.Close()
		if i == 0 {
			eventually(t, "the initialize response", func() bool { return strings.Contains(sse.received(), `"protocolVersion"`) })
		}
	}
	block.waitStarted(t)
	time.Sleep(10 * srv.StreamIdleTimeout)
	if !sse.isOpen() {
		t.Fatalf("the /sse stream closed while its request ran; it carried %q", sse.received())
	}
	block.unblock()
	eventually(t, "the result on the stream", func() bool { return strings.Contains(sse.received(), "released") })
	sse.waitEnd(t, "the /sse stream idle again")
}

// TestResumedStreamTakenOver resumes a stream twice with Last-Event-ID and
// checks that the second GET takes the stream over from the first, which
// ends: a session holds one GET per stream, however often it resumes.
func TestResumedStreamTakenOver(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	srv := newServer(t, textTool("poll", func(ctx context.Context, _ map[string]any) (string, error) {
		mcp.CloseSSEStream(ctx)
		<-release
		return "polled", nil
	}))
	base := boundedServer(t, srv, mcp.HTTPConfig{})
	sid := openSession(t, base)
	r := boundsPost(t, base, sid, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"poll","arguments":{}}}`)
	_, rest, ok := strings.Cut(r.body, "id: ")
	lastID, _, _ := strings.Cut(rest, "\n")
	if r.status != http.StatusOK || !ok || lastID == "" {
		t.Fatalf("tools/call poll: HTTP %d %q; want a stream closed after its priming event", r.status, r.body)
	}
	first, _ := openStream(t, base, "/mcp", sid, lastID)
	if first == nil {
		t.Fatal("resuming the stream was refused")
	}
	second, _ := openStream(t, base, "/mcp", sid, lastID)
	if second == nil {
		t.Fatal("resuming the stream again was refused")
	}
	first.waitEnd(t, "the GET the stream was taken from")
	release <- struct{}{}
	eventually(t, "the result on the second GET", func() bool { return strings.Contains(second.received(), "polled") })
}
