package mcp_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/procmem"
	"github.com/toolwire/toolwire/mcp"
)

// The attack tests' server bounds: each attack runs on the server
// `toolwire serve --http` runs (mcp.NewHTTPEndpoints), with the timeouts
// an attack waits for shortened through the HTTPConfig fields the CLI
// sets, so that the tests end soon; what they check is that each attack
// ends at one. An attack shortens only the timeouts it needs: the others
// keep their defaults, far beyond attackWait, so that an attack that ends
// shows that the timeout it names ended it. Attacks that send whole
// bodies keep the default ReadTimeout, long enough to read 16 MiB on a
// loaded machine under the race detector.
const (
	attackHeaderTimeout = 1 * time.Second
	attackReadTimeout   = 2 * time.Second
	attackIdleTimeout   = 2 * time.Second
	// attackWait bounds the wait for the server to answer or hang up,
	// well beyond every timeout above and well below the defaults.
	attackWait = 15 * time.Second
	// attackRSSBound bounds how much the process's peak resident memory may
	// grow during one attack, besides what the bodies it sends may
	// legitimately cost: up to twice the message limit per connection
	// (the buffer, and the one it grows into).
	attackRSSBound = 64 << 20
)

// Bounds of the attacks: the header, read and idle timeouts shortened
// (most attacks); all but the read timeout (attacks sending whole
// bodies); the header timeout alone (attacks on the headers, which
// without it would wait for the default read timeout).
var (
	shortened  = mcp.HTTPConfig{ReadHeaderTimeout: attackHeaderTimeout, ReadTimeout: attackReadTimeout, IdleTimeout: attackIdleTimeout}
	bodyRead   = mcp.HTTPConfig{ReadHeaderTimeout: attackHeaderTimeout, IdleTimeout: attackIdleTimeout}
	headerOnly = mcp.HTTPConfig{ReadHeaderTimeout: attackHeaderTimeout}
)

// attackServer serves the endpoints `toolwire serve --http` serves, on the
// server it runs, configured by cfg, over a loopback listener; /close
// is /mcp answering with "Connection: close".
func attackServer(t *testing.T, cfg mcp.HTTPConfig) string {
	t.Helper()
	cfg.Middleware = func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/close" {
				w.Header().Set("Connection", "close")
				r.URL.Path = "/mcp"
			}
			next.ServeHTTP(w, r)
		})
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs, end := mcp.NewHTTPEndpoints(newServer(t, echoTool()), cfg)
	go hs.Serve(ln)
	t.Cleanup(func() {
		hs.Close()
		end()
	})
	return ln.Addr().String()
}

// listBody is a valid modern tools/list request.
var listBody = `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"` +
	mcp.MetaProtocolVersion + `":"` + mcp.LatestVersion + `","` + mcp.MetaClientCapabilities + `":{}}}}`

// request returns the head of a modern POST to path, with extra header
// lines (each ending in CRLF), up to and including the blank line.
func request(path, extra string) string {
	return "POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" +
		"Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n" +
		mcp.HeaderProtocolVersion + ": " + mcp.LatestVersion + "\r\n" + mcp.HeaderMethod + ": tools/list\r\n" +
		extra + "\r\n"
}

// fullRequest is a whole valid request to path.
func fullRequest(path string) string {
	return request(path, "Content-Length: "+strconv.Itoa(len(listBody))+"\r\n") + listBody
}

// slowWrite writes s one byte at a time, every interval, until it is
// written or the connection fails.
func slowWrite(c net.Conn, s string, interval time.Duration) {
	for i := range len(s) {
		if _, err := c.Write([]byte{s[i]}); err != nil {
			return
		}
		time.Sleep(interval)
	}
}

// TestHTTPAttacks attacks the server `toolwire serve --http` runs
// (NewHTTPEndpoints) over raw TCP connections to a real loopback
// listener, as a hostile client would, and checks that each attack gets
// net/http's answer (the status lines in order, then the connection
// closed; none when net/http hangs up without one) before attackWait,
// and that neither the process's peak RSS nor the memory it allocates
// grows by more than attackRSSBound (plus what the bodies sent may cost).
func TestHTTPAttacks(t *testing.T) {
	if testing.Short() {
		t.Skip("the attacks wait for the server's timeouts")
	}
	big := strconv.Itoa(64 << 20)
	mib := make([]byte, 1<<20) // what the bodies are made of
	atLimit := strconv.Itoa(jsonrpcLimit)
	tests := []struct {
		name  string
		conns int // connections attacking at once (default 1)
		// attack writes to one connection; its write errors are the
		// server hanging up, and are ignored.
		attack func(c net.Conn)
		want   []string // status codes of the answers, in order
		// bodies: each connection sends a body up to the message limit
		// (and gets the default ReadTimeout: bodyRead).
		bodies bool
		cfg    *mcp.HTTPConfig // the server's bounds (default shortened)
	}{
		{name: "header-only 64 MiB Content-Length, many connections", conns: 100,
			attack: func(c net.Conn) { io.WriteString(c, request("/mcp", "Content-Length: "+big+"\r\n")) },
			want:   []string{"413"}},
		{name: "header-only Content-Length at the message limit, many connections", conns: 100,
			attack: func(c net.Conn) { io.WriteString(c, request("/mcp", "Content-Length: "+atLimit+"\r\n")+"{") },
			want:   []string{"408"}},
		{name: "64 MiB body", conns: 4, bodies: true,
			attack: func(c net.Conn) {
				io.WriteString(c, request("/mcp", "Content-Length: "+big+"\r\n"))
				for range 64 {
					if _, err := c.Write(mib); err != nil {
						return
					}
				}
			},
			want: []string{"413"}, cfg: &bodyRead},
		{name: "64 MiB chunked body", conns: 2, bodies: true,
			attack: func(c net.Conn) {
				io.WriteString(c, request("/mcp", "Transfer-Encoding: chunked\r\n"))
				for range 64 {
					if _, err := io.WriteString(c, strconv.FormatInt(1<<20, 16)+"\r\n"); err != nil {
						return
					}
					if _, err := c.Write(mib); err != nil {
						return
					}
					if _, err := io.WriteString(c, "\r\n"); err != nil {
						return
					}
				}
				io.WriteString(c, "0\r\n\r\n")
			},
			want: []string{"413"}, cfg: &bodyRead},
		// A body of unknown length refused at the limit ends the
		// connection, as one of declared length does: what follows it is
		// not read as another request.
		{name: "chunked body 1 byte over the limit, then another request", bodies: true,
			attack: func(c net.Conn) {
				io.WriteString(c, request("/mcp", "Transfer-Encoding: chunked\r\n"))
				for range jsonrpcLimit >> 20 {
					if _, err := io.WriteString(c, strconv.FormatInt(1<<20, 16)+"\r\n"); err != nil {
						return
					}
					if _, err := c.Write(mib); err != nil {
						return
					}
					if _, err := io.WriteString(c, "\r\n"); err != nil {
						return
					}
				}
				io.WriteString(c, "1\r\n \r\n0\r\n\r\n"+fullRequest("/mcp"))
			},
			want: []string{"413"}, cfg: &bodyRead},
		{name: "silent connection", conns: 100, attack: func(net.Conn) {}, want: nil, cfg: &headerOnly},
		{name: "header at 1 byte per 300 ms", conns: 20,
			attack: func(c net.Conn) { slowWrite(c, fullRequest("/mcp"), 300*time.Millisecond) },
			want:   []string{"400"}, cfg: &headerOnly},
		{name: "headers over MaxHeaderBytes",
			attack: func(c net.Conn) {
				pad := "X-Pad: " + strings.Repeat("a", 2*mcp.MaxHeaderBytes) + "\r\n"
				io.WriteString(c, request("/mcp", pad+"Content-Length: "+strconv.Itoa(len(listBody))+"\r\n")+listBody)
			},
			want: []string{"431"}},
		{name: "stalled fixed-length body",
			attack: func(c net.Conn) {
				io.WriteString(c, request("/mcp", "Content-Length: "+strconv.Itoa(len(listBody))+"\r\n")+listBody[:10])
			},
			want: []string{"408"}},
		{name: "stalled chunked body",
			attack: func(c net.Conn) {
				io.WriteString(c, request("/mcp", "Transfer-Encoding: chunked\r\n")+"a\r\n"+listBody[:10]+"\r\n")
			},
			want: []string{"408"}},
		{name: "Content-Length -0",
			attack: func(c net.Conn) { io.WriteString(c, request("/mcp", "Content-Length: -0\r\n")) },
			want:   []string{"400"}},
		{name: "Host with userinfo",
			attack: func(c net.Conn) {
				io.WriteString(c, strings.Replace(fullRequest("/mcp"), "Host: 127.0.0.1", "Host: 127.0.0.1:1@evil.example", 1))
			},
			want: []string{"400"}},
		{name: "Host with a space",
			attack: func(c net.Conn) {
				io.WriteString(c, strings.Replace(fullRequest("/mcp"), "Host: 127.0.0.1", "Host: 127.0.0.1 evil.example", 1))
			},
			want: []string{"400"}},
		{name: "two Hosts",
			attack: func(c net.Conn) {
				io.WriteString(c, strings.Replace(fullRequest("/mcp"), "Host: 127.0.0.1", "Host: 127.0.0.1\r\nHost: evil.example", 1))
			},
			want: []string{"400"}},
		{name: "no Host",
			attack: func(c net.Conn) {
				io.WriteString(c, strings.Replace(fullRequest("/mcp"), "Host: 127.0.0.1\r\n", "", 1))
			},
			want: []string{"400"}},
		{name: "Host not allowed",
			attack: func(c net.Conn) {
				io.WriteString(c, strings.Replace(fullRequest("/mcp"), "Host: 127.0.0.1", "Host: evil.example", 1))
			},
			want: []string{"403"}},
		{name: "CRLF after a body, then another request",
			attack: func(c net.Conn) { io.WriteString(c, fullRequest("/mcp")+"\r\n"+fullRequest("/mcp")) },
			want:   []string{"200", "200"}},
		{name: "handler's Connection: close",
			attack: func(c net.Conn) { io.WriteString(c, fullRequest("/close")+fullRequest("/close")) },
			want:   []string{"200"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := shortened
			if tt.cfg != nil {
				cfg = *tt.cfg
			}
			addr := attackServer(t, cfg)
			conns := max(tt.conns, 1)
			if err := procmem.ResetPeak(); err != nil {
				t.Logf("%v: the peak RSS checked is the process's", err)
			}
			peak, err := procmem.PeakRSS()
			if err != nil {
				t.Fatal(err)
			}
			allocated := heapAllocated()
			var wg sync.WaitGroup
			for i := range conns {
				c, err := net.Dial("tcp", addr)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				wg.Add(1)
				go func() {
					defer wg.Done()
					got, err := readAnswers(c)
					if err != nil {
						t.Errorf("connection %d: %v (answers so far %q); want %q, then the connection closed", i, err, got, tt.want)
					} else if fmt.Sprint(got) != fmt.Sprint(tt.want) {
						t.Errorf("connection %d: answers %q, want %q", i, got, tt.want)
					}
				}()
				go tt.attack(c)
			}
			wg.Wait()
			bound := int64(attackRSSBound)
			if tt.bodies {
				bound += int64(conns) * 2 * jsonrpcLimit
			}
			after, err := procmem.PeakRSS()
			if err != nil {
				t.Fatal(err)
			}
			rssBound := bound
			if raceEnabled {
				rssBound *= 4 // the race detector's shadow memory
			}
			if grew := after - peak; grew > rssBound {
				t.Errorf("peak RSS grew by %d MiB during the attack; want at most %d MiB", grew>>20, rssBound>>20)
			}
			// Memory allocated and never touched is not resident: count it too.
			if n := heapAllocated() - allocated; n > uint64(bound) {
				t.Errorf("%d MiB allocated on the heap during the attack; want at most %d MiB", n>>20, bound>>20)
			}
		})
	}
}

// jsonrpcLimit is Server.MaxMessageSize's default.
const jsonrpcLimit = 16 << 20

// readAnswers reads HTTP responses from c until the server closes it,
// returning their status codes. It fails if the connection is still open
// after attackWait.
func readAnswers(c net.Conn) ([]string, error) {
	c.SetReadDeadline(time.Now().Add(attackWait))
	br := bufio.NewReader(c)
	var codes []string
	for {
		if _, err := br.Peek(1); err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return codes, fmt.Errorf("the server neither answered nor closed the connection within %v", attackWait)
			}
			return codes, nil // closed (EOF or reset)
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			return codes, fmt.Errorf("reading a response: %w", err)
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		codes = append(codes, strconv.Itoa(resp.StatusCode))
		if err != nil {
			return codes, fmt.Errorf("reading a response body: %w", err)
		}
	}
}

// heapAllocated returns the bytes allocated on the heap so far by the
// process, freed or not.
func heapAllocated() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
