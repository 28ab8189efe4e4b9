package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/tool"
)

// A server and a client in one process, as in a test: no process, no
// port.
func ExampleInMemoryTransport() {
	srv := &mcp.Server{Info: mcp.Implementation{Name: "greeter", Version: "1"}}
	greet := tool.Must(tool.New("greet", "Greets someone.", func(_ context.Context, in struct {
		Name string `json:"name"`
	}) (string, error) {
		return "Hello, " + in.Name + "!", nil
	}))
	if err := srv.AddTools(greet); err != nil {
		panic(err)
	}
	ctx := context.Background()
	client := &mcp.Client{Info: mcp.Implementation{Name: "example", Version: "1"}}
	sess, err := client.Connect(ctx, &mcp.InMemoryTransport{Server: srv})
	if err != nil {
		panic(err)
	}
	defer sess.Close()
	res, err := sess.CallTool(ctx, "greet", json.RawMessage(`{"name": "Ada"}`))
	if err != nil {
		panic(err)
	}
	fmt.Println(sess.ProtocolVersion(), res.Content[0].Text)
	// Output: 2026-07-28 Hello, Ada!
}

// TestInMemoryTransport: a session over the in-memory pair works in both
// eras: calls, notifications from the server, and several at once.
func TestInMemoryTransport(t *testing.T) {
	for _, version := range []string{"", mcp.Version20251125} {
		t.Run("version="+version, func(t *testing.T) {
			srv := newServer(t, echoTool())
			changed := make(chan string, 10)
			c := &mcp.Client{Info: mcp.Implementation{Name: "t", Version: "1"}, ProtocolVersion: version,
				Notify: func(method string, _ json.RawMessage) { changed <- method }}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			sess, err := c.Connect(ctx, &mcp.InMemoryTransport{Server: srv})
			if err != nil {
				t.Fatal(err)
			}
			defer sess.Close()
			errs := make(chan error, 20)
			for i := range 20 {
				go func() {
					want := fmt.Sprint("call ", i)
					res, err := sess.CallTool(ctx, "echo", json.RawMessage(`{"text":"`+want+`"}`))
					if err == nil && res.Content[0].Text != want {
						err = fmt.Errorf("got %q, want %q", res.Content[0].Text, want)
					}
					errs <- err
				}()
			}
			for range 20 {
				if err := <-errs; err != nil {
					t.Error(err)
				}
			}
			if version == "" {
				return // list_changed goes to listeners (subscriptions/listen) in 2026-07-28
			}
			if _, err := sess.ListTools(ctx); err != nil {
				t.Fatal(err)
			}
			srv.RemoveTools("echo")
			select {
			case m := <-changed:
				if m != mcp.NotificationToolsListChanged {
					t.Errorf("notification %s", m)
				}
			case <-ctx.Done():
				t.Fatal("no list_changed notification")
			}
			if sess.ToolsFresh() {
				t.Error("tools still fresh after list_changed")
			}
		})
	}
}

// TestInMemoryNoServer: an InMemoryTransport without a Server says what to
// set.
func TestInMemoryNoServer(t *testing.T) {
	_, err := (&mcp.Client{}).Connect(context.Background(), &mcp.InMemoryTransport{})
	if err == nil || !strings.Contains(err.Error(), "set InMemoryTransport.Server") {
		t.Errorf("error = %v", err)
	}
}

// TestCancelReachesServer: a call whose context ends tells the server,
// which cancels the tool, over a program's own transport.
func TestCancelReachesServer(t *testing.T) {
	cause := make(chan error, 1)
	wait := tool.Must(tool.New("wait", "Waits to be cancelled.", func(ctx context.Context, _ struct{}) (string, error) {
		<-ctx.Done()
		cause <- context.Cause(ctx)
		return "", ctx.Err()
	}))
	sess := connect(t, &mcp.InMemoryTransport{Server: newServer(t, wait)}, "")
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := sess.CallTool(ctx, "wait", nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("call error = %v; want the deadline", err)
	}
	select {
	case err := <-cause:
		if !strings.Contains(err.Error(), "cancelled by the client") {
			t.Errorf("the tool's context ended with %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the server never heard of the cancellation")
	}
}

// scriptConn is a program's own ClientConn: what Read returns comes from
// a channel, and Write hands requests to a function.
type scriptConn struct {
	in     chan *jsonrpc.Message
	answer func(m *jsonrpc.Message) *jsonrpc.Message // nil: no answer
	closed chan struct{}

	mu   sync.Mutex
	sent []string // the methods written
}

func (c *scriptConn) Read(ctx context.Context) (*jsonrpc.Message, error) {
	select {
	case m, ok := <-c.in:
		if !ok {
			return nil, io.EOF
		}
		return m, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.closed:
		return nil, errors.New("closed")
	}
}

func (c *scriptConn) Write(_ context.Context, m *jsonrpc.Message) error {
	c.mu.Lock()
	c.sent = append(c.sent, m.Method)
	c.mu.Unlock()
	if m.IsRequest() {
		if r := c.answer(m); r != nil {
			c.in <- r
		}
	}
	return nil
}

func (c *scriptConn) Close() error { close(c.closed); return nil }

type scriptTransport struct{ conn *scriptConn }

func (t scriptTransport) Connect(context.Context) (mcp.ClientConn, error) { return t.conn, nil }

// TestOwnConnEnds: when a program's ClientConn ends, the calls waiting on
// it fail at once saying so, and the session's Done and Err tell.
func TestOwnConnEnds(t *testing.T) {
	conn := &scriptConn{in: make(chan *jsonrpc.Message, 10), closed: make(chan struct{})}
	conn.answer = func(m *jsonrpc.Message) *jsonrpc.Message {
		if m.Method != mcp.MethodInitialize {
			return nil // never answered
		}
		b, _ := json.Marshal(mcp.InitializeResult{ProtocolVersion: mcp.Version20251125, ServerInfo: mcp.Implementation{Name: "script"}})
		return &jsonrpc.Message{ID: m.ID, Result: b}
	}
	sess := connect(t, scriptTransport{conn}, mcp.Version20251125)
	if sess.ServerInfo().Name != "script" {
		t.Fatalf("server info %+v", sess.ServerInfo())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, err := sess.CallTool(ctx, "x", nil)
		errc <- err
	}()
	time.Sleep(50 * time.Millisecond) // the call waits
	close(conn.in)
	select {
	case err := <-errc:
		if err == nil || !strings.Contains(err.Error(), "the MCP server closed the connection") {
			t.Errorf("call error = %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the call did not fail when the connection ended")
	}
	select {
	case <-sess.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("Done not closed")
	}
	if err := sess.Err(); err == nil || !strings.Contains(err.Error(), "closed the connection") {
		t.Errorf("Err = %v", err)
	}
}

// wrappedCommand is a program's transport that embeds a built-in one and
// connects its own way.
type wrappedCommand struct {
	*mcp.CommandTransport
	mem *mcp.InMemoryTransport
}

func (w wrappedCommand) Connect(ctx context.Context) (mcp.ClientConn, error) {
	return w.mem.Connect(ctx)
}

// TestEmbeddedTransportConnects: a transport embedding a built-in one is
// connected through its own Connect method.
func TestEmbeddedTransportConnects(t *testing.T) {
	sess := connect(t, wrappedCommand{&mcp.CommandTransport{}, &mcp.InMemoryTransport{Server: newServer(t, echoTool())}}, "")
	res, err := sess.CallTool(context.Background(), "echo", json.RawMessage(`{"text":"mine"}`))
	if err != nil || res.Content[0].Text != "mine" {
		t.Errorf("call = %v, %v", res, err)
	}
}

// TestBuiltinConn: the ClientConn of a built-in transport carries raw
// messages: responses to requests written, and an error response when a
// request fails in the transport.
func TestBuiltinConn(t *testing.T) {
	ts := httptest.NewServer(&mcp.HTTPHandler{Server: newServer(t, echoTool())})
	t.Cleanup(ts.Close)
	closed := httptest.NewServer(nil)
	closed.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	init := json.RawMessage(mustJSON(t, mcp.InitializeParams{ProtocolVersion: mcp.Version20251125, ClientInfo: mcp.Implementation{Name: "raw", Version: "1"}}))
	tests := []struct {
		name string
		url  string
		want []string // in the response to tools/call
	}{
		{"served", ts.URL, []string{`"text":"raw"`}},
		{"unreachable", closed.URL, []string{`"error"`, "cannot reach MCP server"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn, err := (&mcp.HTTPTransport{URL: tt.url}).Connect(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if tt.url == ts.URL {
				if err := conn.Write(ctx, &jsonrpc.Message{ID: jsonrpc.Int64ID(1), Method: mcp.MethodInitialize, Params: init}); err != nil {
					t.Fatal(err)
				}
				if m, err := conn.Read(ctx); err != nil || m.Error != nil {
					t.Fatalf("initialize: %v %v", m, err)
				}
				if err := conn.Write(ctx, &jsonrpc.Message{Method: mcp.NotificationInitialized}); err != nil {
					t.Fatal(err)
				}
			}
			call := json.RawMessage(mustJSON(t, mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{"text":"raw"}`)}))
			if err := conn.Write(ctx, &jsonrpc.Message{ID: jsonrpc.Int64ID(2), Method: mcp.MethodToolsCall, Params: call}); err != nil {
				t.Fatal(err)
			}
			m, err := conn.Read(ctx)
			if err != nil {
				t.Fatal(err)
			}
			got := string(m.Append(nil))
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("response %s lacks %s", got, w)
				}
			}
		})
	}
}

// TestListPaging: the List methods of a session follow the server's
// pages, for tools, resources, templates and prompts.
func TestListPaging(t *testing.T) {
	srv := newServer(t, echoTool(), addTool(), fragileTool())
	srv.PageSize = 2
	for i := range 5 {
		if err := srv.AddResource(mcp.Resource{URI: fmt.Sprintf("mem:///%d", i), Name: fmt.Sprint(i)}, nil); err != nil {
			t.Fatal(err)
		}
		if err := srv.AddResourceTemplate(mcp.ResourceTemplate{URITemplate: fmt.Sprintf("mem:///%d/{x}", i), Name: fmt.Sprint(i)}, nil); err != nil {
			t.Fatal(err)
		}
		if err := srv.AddPrompt(mcp.Prompt{Name: fmt.Sprint("p", i)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, version := range []string{"", mcp.Version20251125} {
		sess := connect(t, &mcp.InMemoryTransport{Server: srv}, version)
		ctx := context.Background()
		count := func(n int, err error) string { return fmt.Sprint(n, " ", err) }
		tests := []struct {
			name string
			got  string
			want string
		}{
			{"tools", count(lenOf(sess.ListTools(ctx))), "3 <nil>"},
			{"resources", count(lenOf(sess.ListResources(ctx))), "5 <nil>"},
			{"templates", count(lenOf(sess.ListResourceTemplates(ctx))), "5 <nil>"},
			{"prompts", count(lenOf(sess.ListPrompts(ctx))), "5 <nil>"},
		}
		for _, tt := range tests {
			if tt.got != tt.want {
				t.Errorf("%s, version %q: %s, want %s", tt.name, version, tt.got, tt.want)
			}
		}
	}
}

func lenOf[T any](list []T, err error) (int, error) { return len(list), err }

// TestListPagingBound: a server that always gives a next cursor is given
// up on, saying so.
func TestListPagingBound(t *testing.T) {
	conn := &scriptConn{in: make(chan *jsonrpc.Message, 10), closed: make(chan struct{})}
	conn.answer = func(m *jsonrpc.Message) *jsonrpc.Message {
		res := any(map[string]any{"prompts": []any{}, "nextCursor": "again"})
		if m.Method == mcp.MethodInitialize {
			res = mcp.InitializeResult{ProtocolVersion: mcp.Version20251125, ServerInfo: mcp.Implementation{Name: "script"}}
		}
		b, _ := json.Marshal(res)
		return &jsonrpc.Message{ID: m.ID, Result: b}
	}
	sess := connect(t, scriptTransport{conn}, mcp.Version20251125)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := sess.ListPrompts(ctx)
	if err == nil || !strings.Contains(err.Error(), "more than 10000 pages") {
		t.Errorf("error = %v", err)
	}
}

// TestInitializeNotCancelled: a handshake cut short by its context sends
// no cancellation of initialize, which the protocol forbids.
func TestInitializeNotCancelled(t *testing.T) {
	conn := &scriptConn{in: make(chan *jsonrpc.Message, 10), closed: make(chan struct{}),
		answer: func(*jsonrpc.Message) *jsonrpc.Message { return nil }}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	c := &mcp.Client{ProtocolVersion: mcp.Version20251125}
	if _, err := c.Connect(ctx, scriptTransport{conn}); err == nil {
		t.Fatal("connected to a server that never answers")
	}
	conn.mu.Lock()
	defer conn.mu.Unlock()
	if fmt.Sprint(conn.sent) != "[initialize]" {
		t.Errorf("sent %v; want only initialize", conn.sent)
	}
}
