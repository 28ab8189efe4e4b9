package gateway_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolwire/toolwire/gateway"
	"github.com/toolwire/toolwire/host"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/tool"
)

// The test binary doubles as a stdio upstream that misbehaves: with
// GATEWAY_FAKE set it answers by hand (see fakeUpstream).
func TestMain(m *testing.M) {
	if os.Getenv("GATEWAY_FAKE") != "" {
		fakeUpstream()
		return
	}
	os.Exit(m.Run())
}

// fakeUpstream is a legacy MCP server over stdio whose tool "die" exits
// mid-call, "malformed" answers with a result that is not one, and "ok"
// answers.
func fakeUpstream() {
	in := bufio.NewScanner(os.Stdin)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ProtocolVersion string `json:"protocolVersion"`
				Name            string `json:"name"`
			} `json:"params"`
		}
		if json.Unmarshal(in.Bytes(), &m) != nil || m.ID == nil {
			continue
		}
		reply := map[string]any{"jsonrpc": "2.0", "id": m.ID}
		switch m.Method {
		case "initialize":
			reply["result"] = map[string]any{"protocolVersion": m.Params.ProtocolVersion, "capabilities": map[string]any{"tools": map[string]any{}}, "serverInfo": map[string]any{"name": "fake", "version": "1"}}
		case "tools/list":
			var tools []map[string]any
			for _, n := range []string{"die", "malformed", "ok"} {
				tools = append(tools, map[string]any{"name": n, "inputSchema": map[string]any{"type": "object"}})
			}
			reply["result"] = map[string]any{"tools": tools}
		case "tools/call":
			switch m.Params.Name {
			case "die":
				os.Exit(3)
			case "malformed":
				reply["result"] = map[string]any{"content": "not a list of blocks"}
			default:
				reply["result"] = map[string]any{"content": []any{map[string]any{"type": "text", "text": fmt.Sprintf("ok from %d", os.Getpid())}}}
			}
		default:
			reply["error"] = map[string]any{"code": -32601, "message": "method not found"}
		}
		_ = out.Encode(reply)
	}
}

// upstream is an MCP server in the test's process: echo returns the
// arguments it received; delete counts its calls; slow reports progress
// and a log message, then waits to be cancelled and says so on
// cancelled.
type upstream struct {
	srv       *mcp.Server
	deletes   atomic.Int32
	started   chan struct{}
	cancelled chan struct{}
}

func newUpstream(t *testing.T) *upstream {
	t.Helper()
	u := &upstream{srv: &mcp.Server{Info: mcp.Implementation{Name: "up", Version: "1"}}, started: make(chan struct{}, 8), cancelled: make(chan struct{}, 8)}
	err := u.srv.AddTools(
		tool.NewFunc(tool.Info{Name: "echo", InputSchema: json.RawMessage(`{"type":"object","properties":{"message":{"type":"string"},"tenant":{"type":"string"}},"required":["message","tenant"]}`)},
			func(_ context.Context, args json.RawMessage) (*tool.Result, error) {
				return tool.Text(string(args)), nil
			}),
		tool.NewFunc(tool.Info{Name: "delete", InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"token":{"type":"string"}}}`), Annotations: &tool.Annotations{ReadOnlyHint: ptr(true)}},
			func(context.Context, json.RawMessage) (*tool.Result, error) {
				u.deletes.Add(1)
				return tool.Text("deleted"), nil
			}),
		tool.NewFunc(tool.Info{Name: "ask", InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(ctx context.Context, _ json.RawMessage) (*tool.Result, error) {
				ans, err := tool.Elicit(ctx, &tool.Elicitation{Message: "your name?", Schema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`)})
				if err != nil {
					return nil, err
				}
				return tool.Text(fmt.Sprintf("%s %v", ans.Action, ans.Content["name"])), nil
			}),
		tool.NewFunc(tool.Info{Name: "slow", InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(ctx context.Context, _ json.RawMessage) (*tool.Result, error) {
				_ = tool.Progress(ctx, 1, 2, "halfway")
				_ = tool.Log(ctx, tool.LevelWarning, "slow", "still working")
				u.started <- struct{}{}
				<-ctx.Done()
				u.cancelled <- struct{}{}
				return nil, ctx.Err()
			}),
	)
	if err != nil {
		t.Fatal(err)
	}
	if err := u.srv.AddPrompt(mcp.Prompt{Name: "greet", Arguments: []mcp.PromptArgument{{Name: "who", Required: true}}},
		func(_ context.Context, args map[string]string) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: "user", Content: tool.TextContent("hello " + args["who"])}}}, nil
		}); err != nil {
		t.Fatal(err)
	}
	if err := u.srv.AddResource(mcp.Resource{URI: "up://readme", Name: "readme"}, func(_ context.Context, uri string) ([]mcp.ResourceContents, error) {
		return []mcp.ResourceContents{{URI: uri, Text: "read me"}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := u.srv.AddResourceTemplate(mcp.ResourceTemplate{URITemplate: "up://item/{id}", Name: "item"}, func(_ context.Context, uri string) ([]mcp.ResourceContents, error) {
		return []mcp.ResourceContents{{URI: uri, Text: "item " + strings.TrimPrefix(uri, "up://item/")}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	return u
}

func ptr[T any](v T) *T { return &v }

// startGateway serves the servers of cfgs (named by their keys) through a
// gateway, and returns its server.
// The gateway speaks to its upstreams in the era upEra ("": the newest
// they speak).
func startGateway(t testing.TB, cfgs map[string]*host.ServerConfig, upEra string) *mcp.Server {
	t.Helper()
	for name, sc := range cfgs {
		sc.Name = name
	}
	h := &host.Host{Config: &host.Config{Servers: cfgs, Path: "test.json"}}
	h.Client.ProtocolVersion = upEra
	srv := &mcp.Server{Info: mcp.Implementation{Name: "gateway", Version: "1"}}
	g := gateway.New(h, srv)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { cancel(); h.Close() })
	if err := g.Start(ctx); err != nil {
		t.Fatal(err)
	}
	return srv
}

// counting is a transport to an upstream that counts the requests sent
// to it, by method.
type counting struct {
	mcp.ClientTransport
	mu sync.Mutex
	n  map[string]int
}

func (c *counting) Connect(ctx context.Context) (mcp.ClientConn, error) {
	c.mu.Lock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n["connect"]++
	c.mu.Unlock()
	conn, err := c.ClientTransport.Connect(ctx)
	return countingConn{conn, c}, err
}

func (c *counting) count(method string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[method]
}

type countingConn struct {
	mcp.ClientConn
	c *counting
}

func (cc countingConn) Write(ctx context.Context, m *jsonrpc.Message) error {
	if m.IsRequest() {
		cc.c.mu.Lock()
		if cc.c.n == nil {
			cc.c.n = map[string]int{}
		}
		cc.c.n[m.Method]++
		cc.c.mu.Unlock()
	}
	return cc.ClientConn.Write(ctx, m)
}

func inMemory(u *upstream, sc *host.ServerConfig) *host.ServerConfig {
	sc.Transport = &mcp.InMemoryTransport{Server: u.srv}
	return sc
}

// eras are the protocol revisions a downstream client speaks.
var eras = []string{"2026-07-28", "2025-11-25"}

// connect opens a downstream client's session with the gateway, in
// memory (as over stdio).
func connect(t testing.TB, srv *mcp.Server, c *mcp.Client, version string) *mcp.ClientSession {
	t.Helper()
	return connectOver(t, &mcp.InMemoryTransport{Server: srv}, c, version)
}

// connectHTTP opens a downstream client's session with the gateway over
// Streamable HTTP.
func connectHTTP(t *testing.T, srv *mcp.Server, c *mcp.Client, version string) *mcp.ClientSession {
	t.Helper()
	hs := httptest.NewServer(&mcp.HTTPHandler{Server: srv})
	t.Cleanup(hs.Close)
	return connectOver(t, &mcp.HTTPTransport{URL: hs.URL}, c, version)
}

func connectOver(t testing.TB, tr mcp.ClientTransport, c *mcp.Client, version string) *mcp.ClientSession {
	t.Helper()
	c.Info = mcp.Implementation{Name: "downstream", Version: "1"}
	c.ProtocolVersion = version
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sess, err := c.Connect(ctx, tr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close() })
	return sess
}

func callText(t *testing.T, sess *mcp.ClientSession, name, args string) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := sess.CallTool(ctx, name, json.RawMessage(args))
	if err != nil {
		return "error: " + err.Error(), true
	}
	var texts []string
	for _, c := range res.Content {
		texts = append(texts, c.Text)
	}
	return strings.Join(texts, "\n"), res.IsError
}

// An injected parameter is not in the schema the client sees, and reaches
// the upstream with the configured value whatever the client sends.
func TestInjectHidden(t *testing.T) {
	u := newUpstream(t)
	srv := startGateway(t, map[string]*host.ServerConfig{"up": inMemory(u, &host.ServerConfig{Inject: map[string]json.RawMessage{"tenant": json.RawMessage(`"acme"`)}})}, "")
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			sess := connect(t, srv, &mcp.Client{}, era)
			tools, err := sess.ListTools(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			var echo *tool.Info
			for i := range tools {
				if tools[i].Name == "up__echo" {
					echo = &tools[i]
				}
			}
			if echo == nil {
				t.Fatalf("no up__echo among %v", tools)
			}
			if strings.Contains(string(echo.InputSchema), "tenant") {
				t.Errorf("the schema the client sees names the injected parameter: %s", echo.InputSchema)
			}
			got, isErr := callText(t, sess, "up__echo", `{"message":"hi"}`)
			if isErr || !strings.Contains(got, `"tenant":"acme"`) || !strings.Contains(got, `"message":"hi"`) {
				t.Errorf("the upstream received %s (isError %v), want message hi and tenant acme", got, isErr)
			}
			got, _ = callText(t, sess, "up__echo", `{"message":"hi","tenant":"evil"}`)
			if strings.Contains(got, "evil") && !strings.Contains(got, "tenant") {
				t.Errorf("a client's value of an injected parameter reached the upstream: %s", got)
			}
			if strings.Contains(got, `"tenant":"evil"`) {
				t.Errorf("a client's value of an injected parameter reached the upstream: %s", got)
			}
		})
	}
}

// A tool in "confirm" asks the client by elicitation and runs only on
// accept; a client that cannot be asked is refused, and nothing runs.
func TestConfirm(t *testing.T) {
	u := newUpstream(t)
	srv := startGateway(t, map[string]*host.ServerConfig{"up": inMemory(u, &host.ServerConfig{Confirm: []string{"delete"}, Inject: map[string]json.RawMessage{"delete": json.RawMessage(`{"token":"s3cret"}`)}})}, "")
	answer := func(action string, asked *string) func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		return func(_ context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			*asked = p.Message
			return &mcp.ElicitResult{Action: action}, nil
		}
	}
	for _, era := range eras {
		for _, tt := range []struct {
			action    string // "" for a client without elicitation
			runs      bool
			wantError string
		}{
			{"accept", true, ""},
			{"decline", false, "the user declined the call of up__delete"},
			{"cancel", false, "the user declined the call of up__delete"},
			{"", false, "this client cannot ask its user (it does not support elicitation)"},
		} {
			t.Run(era+" "+tt.action, func(t *testing.T) {
				var asked string
				c := &mcp.Client{}
				if tt.action != "" {
					c.Elicitation = answer(tt.action, &asked)
				}
				sess := connect(t, srv, c, era)
				before := u.deletes.Load()
				got, isErr := callText(t, sess, "up__delete", `{"path":"/tmp/x"}`)
				if ran := u.deletes.Load() > before; ran != tt.runs {
					t.Errorf("the tool ran: %v, want %v (result %q)", ran, tt.runs, got)
				}
				if tt.runs && (isErr || got != "deleted") {
					t.Errorf("result %q (isError %v), want deleted", got, isErr)
				}
				if !tt.runs && (!isErr || !strings.Contains(got, tt.wantError)) {
					t.Errorf("result %q (isError %v), want an error with %q", got, isErr, tt.wantError)
				}
				if tt.action != "" && !strings.Contains(asked, `up__delete`) || tt.action != "" && !strings.Contains(asked, `"/tmp/x"`) {
					t.Errorf("the client was asked %q: want the tool and its arguments", asked)
				}
				if strings.Contains(asked, "s3cret") {
					t.Errorf("the client was shown an injected value: %q", asked)
				}
			})
		}
	}
	// A tool not in "confirm" runs without asking.
	sess := connect(t, srv, &mcp.Client{}, eras[0])
	if got, isErr := callText(t, sess, "up__echo", `{"message":"m","tenant":"t"}`); isErr {
		t.Errorf("up__echo: %s", got)
	}
}

// A 2026-07-28 upstream's question during a call reaches the user of the
// client that made it, whichever era that client speaks.
func TestUpstreamElicits(t *testing.T) {
	u := newUpstream(t)
	up := &counting{ClientTransport: &mcp.InMemoryTransport{Server: u.srv}}
	srv := startGateway(t, map[string]*host.ServerConfig{"up": {Transport: up}}, eras[0])
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			var asked []string
			sess := connect(t, srv, &mcp.Client{Elicitation: func(_ context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
				asked = append(asked, p.Message)
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "ada"}}, nil
			}}, era)
			if got, isErr := callText(t, sess, "up__ask", `{}`); isErr || got != "accept ada" || len(asked) == 0 || asked[0] != "your name?" {
				t.Errorf("up__ask: %q (isError %v) after asking %q", got, isErr, asked)
			}
			if n := up.count("connect"); n != 1 {
				t.Errorf("the gateway connected to the upstream %d times: asking its client for input broke the connection", n)
			}
		})
	}
}

// The upstream's progress and log messages about a call reach the client
// that made it; the client cancelling the call, or going away during it,
// cancels it at the upstream.
func TestProgressLogCancel(t *testing.T) {
	u := newUpstream(t)
	srv := startGateway(t, map[string]*host.ServerConfig{"up": inMemory(u, &host.ServerConfig{})}, "")
	for _, era := range eras {
		for _, how := range []string{"cancel", "disconnect", "http cancel", "http disconnect"} {
			t.Run(era+" "+how, func(t *testing.T) {
				var mu sync.Mutex
				var heard []string
				c := &mcp.Client{LogLevel: mcp.LevelInfo, Notify: func(method string, params json.RawMessage) {
					mu.Lock()
					heard = append(heard, method+" "+string(params))
					mu.Unlock()
				}}
				var sess *mcp.ClientSession
				if strings.HasPrefix(how, "http ") {
					sess = connectHTTP(t, srv, c, era)
				} else {
					sess = connect(t, srv, c, era)
				}
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				done := make(chan error, 1)
				go func() {
					p := &mcp.CallToolParams{Name: "up__slow", Arguments: json.RawMessage(`{}`), Params: mcp.Params{Meta: &mcp.RequestMeta{ProgressToken: json.RawMessage(`"p1"`)}}}
					done <- sess.Call(ctx, mcp.MethodToolsCall, p, &mcp.CallToolResult{})
				}()
				select {
				case <-u.started:
				case <-time.After(10 * time.Second):
					t.Fatal("the upstream's slow tool never started")
				}
				if strings.HasSuffix(how, "cancel") {
					waitFor(t, func() bool {
						mu.Lock()
						defer mu.Unlock()
						all := strings.Join(heard, "\n")
						return strings.Contains(all, `notifications/progress {"progressToken":"p1","progress":1,"total":2,"message":"halfway"}`) &&
							strings.Contains(all, `"still working"`)
					}, func() string { mu.Lock(); defer mu.Unlock(); return strings.Join(heard, "\n") })
					cancel()
				} else {
					sess.Close()
				}
				select {
				case <-u.cancelled:
				case <-time.After(10 * time.Second):
					t.Fatalf("the call was not cancelled at the upstream after the client's %s", how)
				}
				if err := <-done; err == nil {
					t.Error("the cancelled call returned no error")
				}
			})
		}
	}
}

func waitFor(t *testing.T, ok func() bool, what func() string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting; saw:\n%s", what())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Resources, templates and prompts of the upstream are the gateway's,
// prompts under the host's names; a prompt added upstream shows
// downstream.
func TestResourcesPrompts(t *testing.T) {
	u := newUpstream(t)
	// A legacy upstream tells of its changes by notification.
	srv := startGateway(t, map[string]*host.ServerConfig{"up": inMemory(u, &host.ServerConfig{})}, eras[1])
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			sess := connect(t, srv, &mcp.Client{}, era)
			ctx := context.Background()
			var read mcp.ReadResourceResult
			if err := sess.Call(ctx, mcp.MethodResourcesRead, &mcp.ReadResourceParams{URI: "up://readme"}, &read); err != nil || len(read.Contents) != 1 || read.Contents[0].Text != "read me" {
				t.Errorf("read up://readme: %v %+v", err, read.Contents)
			}
			read = mcp.ReadResourceResult{}
			if err := sess.Call(ctx, mcp.MethodResourcesRead, &mcp.ReadResourceParams{URI: "up://item/7"}, &read); err != nil || len(read.Contents) != 1 || read.Contents[0].Text != "item 7" {
				t.Errorf("read up://item/7 (a template's): %v %+v", err, read.Contents)
			}
			tmpls, err := sess.ListResourceTemplates(ctx)
			if err != nil || len(tmpls) != 1 || tmpls[0].URITemplate != "up://item/{id}" {
				t.Errorf("templates: %v %+v", err, tmpls)
			}
			var got mcp.GetPromptResult
			if err := sess.Call(ctx, mcp.MethodPromptsGet, &mcp.GetPromptParams{Name: "up__greet", Arguments: map[string]string{"who": "ada"}}, &got); err != nil || len(got.Messages) != 1 || got.Messages[0].Content.Text != "hello ada" {
				t.Errorf("prompt up__greet: %v %+v", err, got)
			}
		})
	}
	sess := connect(t, srv, &mcp.Client{}, eras[1])
	if err := u.srv.AddPrompt(mcp.Prompt{Name: "later"}, func(context.Context, map[string]string) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{}, nil
	}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		ps, _ := sess.ListPrompts(context.Background())
		for _, p := range ps {
			if p.Name == "up__later" {
				return true
			}
		}
		return false
	}, func() string { return "no up__later among the gateway's prompts" })
}

// An upstream that sends list_changed in a loop costs the clients a
// bounded number of notifications, and the gateway stays usable.
func TestListChangedLoop(t *testing.T) {
	for _, upEra := range eras {
		t.Run("upstream "+upEra, func(t *testing.T) { listChangedLoop(t, upEra) })
	}
}

func listChangedLoop(t *testing.T, upEra string) {
	u := newUpstream(t)
	up := &counting{ClientTransport: &mcp.InMemoryTransport{Server: u.srv}}
	srv := startGateway(t, map[string]*host.ServerConfig{"up": {Transport: up}}, upEra)
	promptLists := up.count(mcp.MethodPromptsList)
	var toolsChanged, promptsChanged atomic.Int32
	c := &mcp.Client{Notify: func(method string, _ json.RawMessage) {
		switch method {
		case mcp.NotificationToolsListChanged:
			toolsChanged.Add(1)
		case mcp.NotificationPromptsListChanged:
			promptsChanged.Add(1)
		}
	}}
	sess := connect(t, srv, c, eras[1])
	// Told that its tools changed when they did not, the gateway lists
	// them again and tells its clients nothing.
	for range 50 {
		u.srv.NotifyListChanged(mcp.NotificationToolsListChanged)
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(400 * time.Millisecond) // the last relisting
	if n := toolsChanged.Swap(0); n != 0 {
		t.Errorf("%d tools list_changed sent downstream, though the upstream's tools never changed", n)
	}
	toolLists := up.count(mcp.MethodToolsList)
	// The upstream's tools change as fast as it can tell (each change a
	// list_changed), and it tells of unchanged prompts too.
	extra := tool.NewFunc(tool.Info{Name: "extra"}, func(context.Context, json.RawMessage) (*tool.Result, error) { return tool.Text(""), nil })
	const loop = 1500 * time.Millisecond
	var sent int
	for end := time.Now().Add(loop); time.Now().Before(end); sent++ {
		if sent%2 == 0 {
			_ = u.srv.AddTools(extra)
		} else {
			u.srv.RemoveTools("extra")
		}
		u.srv.NotifyListChanged(mcp.NotificationPromptsListChanged)
		time.Sleep(time.Millisecond)
	}
	time.Sleep(600 * time.Millisecond) // the last relisting
	// At most one relisting per 250 ms, and one at the start of the loop.
	limit := int32(loop/(250*time.Millisecond)) + 3
	n := toolsChanged.Load()
	if n > limit || n == 0 && upEra == eras[1] {
		// (A 2026-07-28 upstream's notifications need a stream the host
		// does not open: its tools are listed once a second, as its
		// ttlMs is 0, and may be found as they were.)
		t.Errorf("%d tools list_changed sent downstream for %d upstream, want 1 to %d", n, sent, limit)
	}
	if n := promptsChanged.Load(); n != 0 {
		t.Errorf("%d prompts list_changed sent downstream, though the prompts never changed", n)
	}
	if n := up.count(mcp.MethodToolsList) - toolLists; n > int(limit) {
		t.Errorf("the upstream's tools were listed %d times for %d list_changed, want at most %d", n, sent, limit)
	}
	if n := up.count(mcp.MethodPromptsList) - promptLists; n > int(limit) {
		t.Errorf("the upstream's prompts were listed %d times for %d list_changed, want at most %d", n, sent, limit)
	}
	if got, isErr := callText(t, sess, "up__echo", `{"message":"still","tenant":"t"}`); isErr {
		t.Errorf("after the loop: %s", got)
	}
}

// An upstream that dies mid-call gives the client a clear error; the
// gateway stays up and the next call restarts the upstream. One that
// returns a malformed result gives a clear error too.
func TestUpstreamFailures(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			srv := startGateway(t, map[string]*host.ServerConfig{"bad": {Command: os.Args[0], Env: map[string]string{"GATEWAY_FAKE": "1"}}}, "")
			sess := connect(t, srv, &mcp.Client{}, era)
			first, isErr := callText(t, sess, "bad__ok", `{}`)
			if isErr || !strings.HasPrefix(first, "ok from ") {
				t.Fatalf("bad__ok: %q", first)
			}
			got, isErr := callText(t, sess, "bad__malformed", `{}`)
			if !isErr || !strings.Contains(got, "malformed result") {
				t.Errorf("a malformed result: %q (isError %v), want an error saying so", got, isErr)
			}
			waitFor(t, func() bool { // the malformed answer may have cost the session
				got, isErr = callText(t, sess, "bad__ok", `{}`)
				return !isErr
			}, func() string { return got })
			first = got
			waitFor(t, func() bool { // the tool is back once the gateway has listed it again
				got, isErr = callText(t, sess, "bad__die", `{}`)
				return !strings.Contains(got, "not available now")
			}, func() string { return got })
			if !isErr || !strings.Contains(got, "bad__die") || !strings.Contains(got, "exited with status 3") {
				t.Errorf("a call whose upstream died: %q (isError %v), want an error naming the tool", got, isErr)
			}
			var again string
			waitFor(t, func() bool {
				var isErr bool
				again, isErr = callText(t, sess, "bad__ok", `{}`)
				return !isErr
			}, func() string { return again })
			if again == first {
				t.Errorf("bad__ok answered %q by the same process after it died", again)
			}
		})
	}
}

// With more tools than the threshold, a client lists the search tool and
// the tools always shown; what it finds by searching is listed to it
// (after a list_changed), not to another client; every tool stays
// callable by name.
func TestSearchTools(t *testing.T) {
	u := newUpstream(t)
	for i := range 60 {
		name := fmt.Sprintf("gadget%02d", i)
		desc := fmt.Sprintf("Frobnicates widget number %d", i)
		if i == 42 {
			desc = "Converts temperatures between celsius and fahrenheit"
		}
		if err := u.srv.AddTools(tool.NewFunc(tool.Info{Name: name, Description: desc, InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, json.RawMessage) (*tool.Result, error) { return tool.Text(name + " ran"), nil })); err != nil {
			t.Fatal(err)
		}
	}
	h := &host.Host{Config: &host.Config{Servers: map[string]*host.ServerConfig{"up": inMemory(u, &host.ServerConfig{Name: "up"})}, Path: "test.json"}}
	srv := &mcp.Server{Info: mcp.Implementation{Name: "gateway", Version: "1"}}
	g := gateway.New(h, srv)
	if err := g.SearchTools(10, []string{"up__echo"}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { cancel(); h.Close() })
	if err := g.Start(ctx); err != nil {
		t.Fatal(err)
	}
	names := func(sess *mcp.ClientSession) []string {
		tools, err := sess.ListTools(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, tl := range tools {
			out = append(out, tl.Name)
		}
		slices.Sort(out)
		return out
	}
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			var changed atomic.Int32
			a := connect(t, srv, &mcp.Client{Notify: func(method string, _ json.RawMessage) {
				if method == mcp.NotificationToolsListChanged {
					changed.Add(1)
				}
			}}, era)
			b := connect(t, srv, &mcp.Client{}, era)
			if got := names(a); !slices.Equal(got, []string{"search_tools", "up__echo"}) {
				t.Fatalf("first listing: %v, want the search tool and up__echo", got)
			}
			got, isErr := callText(t, a, "search_tools", `{"query":"convert celsius to fahrenheit","limit":3}`)
			if isErr || !strings.Contains(got, "up__gadget42") {
				t.Fatalf("search: %q", got)
			}
			if era == eras[1] {
				waitFor(t, func() bool { return changed.Load() > 0 }, func() string { return "no tools/list_changed after the search" })
			}
			if got := names(a); !slices.Contains(got, "up__gadget42") || len(got) > 5 {
				t.Errorf("after the search, the client lists %v: want up__gadget42 among a few", got)
			}
			if got := names(b); slices.Contains(got, "up__gadget42") {
				t.Errorf("another client lists what the first found: %v", got)
			}
			if got, isErr := callText(t, b, "up__gadget07", `{}`); isErr || got != "gadget07 ran" {
				t.Errorf("a tool not listed is not callable by name: %q", got)
			}
		})
	}
}
