package http1_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolwire/toolwire/http1"
)

const waitTimeout = 10 * time.Second

// start serves h on a loopback port and returns its address.
func start(t *testing.T, srv *http1.Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if srv.ErrorLog == nil {
		srv.ErrorLog = log.New(io.Discard, "", 0)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		srv.Close()
		select {
		case err := <-done:
			if !errors.Is(err, http1.ErrServerClosed) {
				t.Errorf("Serve returned %v, want ErrServerClosed", err)
			}
		case <-time.After(waitTimeout):
			t.Error("Serve did not return after Close")
		}
	})
	return ln.Addr().String()
}

// echo answers with the method, path, a header and the body it got, and
// says which server read the request (http1 gives a Completer).
func echo(w http.ResponseWriter, r *http.Request) {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	_, native := w.(http1.Completer)
	w.Header().Set("Content-Type", "text/plain")
	fmt.Fprintf(w, "%s %s x=%s native=%v body=%s", r.Method, r.URL.Path, r.Header.Get("X-Test"), native, b)
}

// rawClient speaks HTTP/1.1 over one connection, byte for byte.
type rawClient struct {
	t    *testing.T
	conn net.Conn
	br   *bufio.Reader
}

func dial(t *testing.T, addr string) *rawClient {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	conn.SetDeadline(time.Now().Add(waitTimeout))
	return &rawClient{t: t, conn: conn, br: bufio.NewReader(conn)}
}

func (c *rawClient) send(raw string) {
	c.t.Helper()
	if _, err := io.WriteString(c.conn, raw); err != nil {
		c.t.Fatal(err)
	}
}

// read reads one final response and its body.
func (c *rawClient) read(method string) (*http.Response, string) {
	c.t.Helper()
	resp, err := http.ReadResponse(c.br, &http.Request{Method: method})
	for err == nil && resp.StatusCode < 200 {
		resp, err = http.ReadResponse(c.br, &http.Request{Method: method})
	}
	if err != nil {
		c.t.Fatalf("reading response: %v", err)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatalf("reading body: %v", err)
	}
	return resp, string(b)
}

// closed reports whether the server closed the connection.
func (c *rawClient) closed() bool {
	_, err := c.br.ReadByte()
	return err == io.EOF
}

func post(path, body string, extra ...string) string {
	return fmt.Sprintf("POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n%s\r\n%s",
		path, len(body), strings.Join(extra, ""), body)
}

func TestKeepAliveAndPipelining(t *testing.T) {
	c := dial(t, start(t, &http1.Server{Handler: http.HandlerFunc(echo)}))
	for i := range 3 {
		c.send(post("/mcp", fmt.Sprintf("call %d", i), "X-Test: a\r\n"))
		resp, body := c.read("POST")
		want := fmt.Sprintf("POST /mcp x=a native=true body=call %d", i)
		if resp.StatusCode != 200 || body != want || resp.ContentLength != int64(len(want)) {
			t.Fatalf("response %d: %d %q (length %d), want 200 %q", i, resp.StatusCode, body, resp.ContentLength, want)
		}
		if resp.Header.Get("Date") == "" || resp.Header.Get("Content-Type") != "text/plain" {
			t.Errorf("headers %v: want Date and Content-Type", resp.Header)
		}
	}
	// Two requests in one write come back in order.
	c.send(post("/one", "1") + post("/two", "2"))
	for _, want := range []string{"POST /one x= native=true body=1", "POST /two x= native=true body=2"} {
		if _, body := c.read("POST"); body != want {
			t.Fatalf("pipelined: got %q, want %q", body, want)
		}
	}
}

func TestStreamedResponse(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range 3 {
			fmt.Fprintf(w, "data: %d\n\n", i)
			if err := http.NewResponseController(w).Flush(); err != nil {
				t.Errorf("flush: %v", err)
			}
		}
	})
	c := dial(t, start(t, &http1.Server{Handler: h}))
	c.send("GET /events HTTP/1.1\r\nHost: localhost\r\n\r\n")
	resp, body := c.read("GET")
	if len(resp.TransferEncoding) != 1 || resp.TransferEncoding[0] != "chunked" {
		t.Errorf("Transfer-Encoding %v, want chunked", resp.TransferEncoding)
	}
	if want := "data: 0\n\ndata: 1\n\ndata: 2\n\n"; body != want {
		t.Errorf("body %q, want %q", body, want)
	}
	c.send("GET /events HTTP/1.1\r\nHost: localhost\r\n\r\n") // still usable
	if _, body2 := c.read("GET"); body2 != body {
		t.Errorf("second stream %q", body2)
	}
}

func TestStatusWithoutBody(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/accepted":
			w.WriteHeader(http.StatusAccepted)
		case "/nocontent":
			w.WriteHeader(http.StatusNoContent)
			if _, err := w.Write([]byte("x")); !errors.Is(err, http.ErrBodyNotAllowed) {
				t.Errorf("write after 204: %v, want ErrBodyNotAllowed", err)
			}
		case "/short":
			w.Header().Set("Content-Length", "10")
			w.Write([]byte("abc")) // the client must not wait for the rest
		}
	})
	c := dial(t, start(t, &http1.Server{Handler: h}))
	c.send("POST /accepted HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\n\r\n")
	if resp, body := c.read("POST"); resp.StatusCode != 202 || resp.ContentLength != 0 || body != "" {
		t.Errorf("202: %d length %d body %q", resp.StatusCode, resp.ContentLength, body)
	}
	c.send("DELETE /nocontent HTTP/1.1\r\nHost: localhost\r\n\r\n")
	if resp, _ := c.read("DELETE"); resp.StatusCode != 204 || resp.Header.Get("Content-Length") != "" {
		t.Errorf("204: %d %v", resp.StatusCode, resp.Header)
	}
	c.send("GET /short HTTP/1.1\r\nHost: localhost\r\n\r\n")
	resp, err := http.ReadResponse(c.br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := io.ReadAll(resp.Body); string(b) != "abc" || err == nil {
		t.Errorf("short body: %q, %v; want abc and an error (connection closed)", b, err)
	}
}

// TestHandedToNetHTTP: what the package does not read itself reaches the
// handler through net/http, or gets net/http's error.
func TestHandedToNetHTTP(t *testing.T) {
	addr := start(t, &http1.Server{Handler: http.HandlerFunc(echo), MaxBodyBytes: 64})
	big := strings.Repeat("b", 100)
	tests := []struct {
		name       string
		raw        string
		method     string
		wantStatus int
		wantBody   string
	}{
		{"chunked body", "POST /c HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n", "POST", 200, "POST /c x= native=false body=abc"},
		{"HTTP/1.0", "POST /old HTTP/1.0\r\nHost: localhost\r\nContent-Length: 2\r\n\r\nhi", "POST", 200, "POST /old x= native=false body=hi"},
		{"escaped path", "GET /a%20b HTTP/1.1\r\nHost: localhost\r\n\r\n", "GET", 200, "GET /a b x= native=false body="},
		{"folded header", "GET /f HTTP/1.1\r\nHost: localhost\r\nX-Test: a\r\n b\r\n\r\n", "GET", 200, "GET /f x=a b native=false body="},
		{"expect continue", "POST /e HTTP/1.1\r\nHost: localhost\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nok", "POST", 200, "POST /e x= native=false body=ok"},
		{"body over MaxBodyBytes", post("/big", big), "POST", 200, "POST /big x= native=false body=" + big},
		{"HEAD", "HEAD /h HTTP/1.1\r\nHost: localhost\r\n\r\n", "HEAD", 200, ""},
		{"no Host", "GET /nohost HTTP/1.1\r\n\r\n", "GET", 400, ""},
		{"two Content-Lengths", "POST /cl HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", "POST", 400, ""},
		{"bad Content-Length", "POST /cl HTTP/1.1\r\nHost: localhost\r\nContent-Length: x\r\n\r\n", "POST", 400, ""},
		{"not HTTP", "HELLO\r\n\r\n", "GET", 400, ""},
		{"bare LF", "GET /lf HTTP/1.1\nHost: localhost\n\n", "GET", 200, "GET /lf x= native=false body="},
		{"header block over the buffer", "GET /huge HTTP/1.1\r\nHost: localhost\r\nX-Test: " + strings.Repeat("h", 9000) + "\r\n\r\n", "GET", 200, "GET /huge x=" + strings.Repeat("h", 9000) + " native=false body="},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := dial(t, addr)
			c.send(tt.raw)
			resp, body := c.read(tt.method)
			if resp.StatusCode != tt.wantStatus || tt.wantBody != "" && body != tt.wantBody {
				t.Fatalf("got %d %q, want %d %q", resp.StatusCode, body, tt.wantStatus, tt.wantBody)
			}
		})
	}
}

// TestCompleteEarly: a handler that completes its response and runs on
// does not hold up the connection's next request.
func TestCompleteEarly(t *testing.T) {
	release := make(chan struct{})
	ended := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/slow" {
			echo(w, r)
			return
		}
		defer close(ended)
		io.WriteString(w, "first")
		w.(http1.Completer).Complete()
		if _, err := io.WriteString(w, "late"); err == nil {
			t.Error("a write after Complete succeeded")
		}
		<-release
	})
	c := dial(t, start(t, &http1.Server{Handler: h}))
	c.send(post("/slow", ""))
	if _, body := c.read("POST"); body != "first" {
		t.Fatalf("first response %q", body)
	}
	c.send(post("/next", "2"))
	if _, body := c.read("POST"); body != "POST /next x= native=true body=2" {
		t.Fatalf("next response %q", body)
	}
	close(release)
	<-ended
	c.send(post("/after", "3"))
	if _, body := c.read("POST"); body != "POST /after x= native=true body=3" {
		t.Fatalf("response after the slow handler ended: %q", body)
	}
}

// TestClientGoneCancels: a client that goes away cancels the context of a
// request still running.
func TestClientGoneCancels(t *testing.T) {
	cancelled := make(chan error, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
			cancelled <- context.Cause(r.Context())
		case <-time.After(waitTimeout):
			cancelled <- errors.New("not cancelled")
		}
	})
	c := dial(t, start(t, &http1.Server{Handler: h}))
	c.send(post("/wait", ""))
	time.Sleep(50 * time.Millisecond) // past the relay delay
	c.conn.Close()
	if err := <-cancelled; err == nil || err.Error() == "not cancelled" {
		t.Fatalf("context: %v, want cancelled", err)
	}
}

func TestConnectionClose(t *testing.T) {
	c := dial(t, start(t, &http1.Server{Handler: http.HandlerFunc(echo)}))
	c.send(post("/x", "1", "Connection: close\r\n"))
	resp, _ := c.read("POST")
	if !resp.Close {
		t.Errorf("response without Connection: close")
	}
	if !c.closed() {
		t.Errorf("connection still open")
	}
}

func TestPanicClosesConnection(t *testing.T) {
	var served atomic.Int32
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if served.Add(1) == 1 {
			panic("boom")
		}
		echo(w, r)
	})
	addr := start(t, &http1.Server{Handler: h})
	c := dial(t, addr)
	c.send(post("/x", ""))
	if !c.closed() {
		t.Fatal("connection open after a panic")
	}
	c = dial(t, addr) // the server serves on
	c.send(post("/y", "ok"))
	if _, body := c.read("POST"); body != "POST /y x= native=true body=ok" {
		t.Fatalf("after the panic: %q", body)
	}
}

func TestWithNetHTTPClient(t *testing.T) {
	addr := start(t, &http1.Server{Handler: http.HandlerFunc(echo)})
	hc := &http.Client{Timeout: waitTimeout}
	for i := range 5 {
		resp, err := hc.Post("http://"+addr+"/p", "text/plain", strings.NewReader(strings.Repeat("z", i*5000)))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if want := "POST /p x= native=true body=" + strings.Repeat("z", i*5000); string(b) != want {
			t.Fatalf("call %d: %d bytes, want %d", i, len(b), len(want))
		}
	}
}

// TestShutdown: a request being served finishes and gets its response;
// Serve returns and the connection closes.
func TestShutdown(t *testing.T) {
	entered := make(chan struct{})
	release := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		<-release
		io.WriteString(w, "done")
	})
	srv := &http1.Server{Handler: h, ErrorLog: log.New(io.Discard, "", 0)}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	c := dial(t, ln.Addr().String())
	c.send(post("/x", ""))
	<-entered
	shut := make(chan error, 1)
	go func() { shut <- srv.Shutdown(context.Background()) }()
	time.Sleep(20 * time.Millisecond)
	close(release)
	if _, body := c.read("POST"); body != "done" {
		t.Fatalf("response %q", body)
	}
	if err := <-shut; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if err := <-served; !errors.Is(err, http1.ErrServerClosed) {
		t.Fatalf("Serve: %v", err)
	}
	if !c.closed() {
		t.Error("connection open after Shutdown")
	}
}
