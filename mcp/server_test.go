package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/tool"
)

// era opens a stdio connection in one protocol era and returns the params
// to send with each request.
type era struct {
	name   string
	open   func(c *stdioClient)
	params func(p map[string]any, kv ...any) map[string]any
}

var eras = []era{
	{
		name: "legacy",
		open: func(c *stdioClient) { c.initialize(nil) },
		params: func(p map[string]any, kv ...any) map[string]any {
			out := map[string]any{}
			for k, v := range p {
				out[k] = v
			}
			if len(kv) > 0 {
				m := map[string]any{}
				for i := 0; i+1 < len(kv); i += 2 {
					m[kv[i].(string)] = kv[i+1]
				}
				out["_meta"] = m
			}
			return out
		},
	},
	{
		name:   "modern",
		open:   func(*stdioClient) {},
		params: modern,
	},
}

func TestConcurrentRequestsCompleteOutOfOrder(t *testing.T) {
	gate := make(chan struct{})
	slow := textTool("slow", func(ctx context.Context, _ map[string]any) (string, error) {
		select {
		case <-gate:
			return "slow done", nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	})
	fast := textTool("fast", func(context.Context, map[string]any) (string, error) { return "fast done", nil })
	srv := newServer(t, slow, fast)
	c := startStdio(t, srv)

	slowID := c.request(mcp.MethodToolsCall, modern(map[string]any{"name": "slow"}))
	fastID := c.request(mcp.MethodToolsCall, modern(map[string]any{"name": "fast"}))
	first := c.next()
	if !first.hasID(fastID) {
		t.Fatalf("first response is %s, want the fast request's (id %s)", first, fastID)
	}
	if text, _ := toolText(t, first); text != "fast done" {
		t.Errorf("fast result %q", text)
	}
	close(gate)
	second := c.next()
	if !second.hasID(slowID) {
		t.Fatalf("second response is %s, want the slow request's (id %s)", second, slowID)
	}
	if text, _ := toolText(t, second); text != "slow done" {
		t.Errorf("slow result %q", text)
	}
}

func TestPagination(t *testing.T) {
	var tools []tool.Tool
	for _, n := range []string{"e", "d", "c", "b", "a"} {
		tools = append(tools, textTool(n, func(context.Context, map[string]any) (string, error) { return n, nil }))
	}
	for _, e := range eras {
		t.Run(e.name, func(t *testing.T) {
			srv := newServer(t, tools...)
			srv.PageSize = 2
			c := startStdio(t, srv)
			e.open(c)

			var pages [][]string
			cursor := ""
			for range 10 {
				p := map[string]any{}
				if cursor != "" {
					p["cursor"] = cursor
				}
				var res mcp.ListToolsResult
				c.call(mcp.MethodToolsList, e.params(p)).decodeResult(t, &res)
				var names []string
				for _, tl := range res.Tools {
					names = append(names, tl.Name)
				}
				pages = append(pages, names)
				if res.NextCursor == "" {
					break
				}
				cursor = res.NextCursor
			}
			if got, want := fmt.Sprint(pages), "[[a b] [c d] [e]]"; got != want {
				t.Errorf("pages = %s, want %s", got, want)
			}

			for _, bad := range []string{"bogus", "o-1", "o99", cursor + "x"} {
				id := c.request(mcp.MethodToolsList, e.params(map[string]any{"cursor": bad}))
				resp, _ := c.await(id)
				expectError(t, resp, id, jsonrpc.CodeInvalidParams, "invalid cursor")
			}
		})
	}
}

func progressTool() tool.Tool {
	return textTool("work", func(ctx context.Context, _ map[string]any) (string, error) {
		for i := 1; i <= 3; i++ {
			if err := tool.Progress(ctx, float64(i), 3, fmt.Sprintf("step %d", i)); err != nil {
				return "", err
			}
		}
		return "worked", nil
	})
}

func TestProgressBeforeResponse(t *testing.T) {
	for _, e := range eras {
		for _, token := range []any{nil, "tok-1", 42} {
			t.Run(fmt.Sprintf("%s/token %v", e.name, token), func(t *testing.T) {
				srv := newServer(t, progressTool())
				c := startStdio(t, srv)
				e.open(c)
				var kv []any
				if token != nil {
					kv = []any{"progressToken", token}
				}
				resp, before := c.await(c.request(mcp.MethodToolsCall, e.params(map[string]any{"name": "work"}, kv...)))
				if text, isErr := toolText(t, resp); text != "worked" || isErr {
					t.Errorf("result %q (isError %v)", text, isErr)
				}
				var got []string
				for _, m := range before {
					if m.Method != mcp.NotificationProgress {
						t.Errorf("unexpected message %s", m)
						continue
					}
					var p mcp.ProgressParams
					if err := json.Unmarshal(m.Params, &p); err != nil {
						t.Fatal(err)
					}
					if string(p.ProgressToken) != mustJSON(t, token) {
						t.Errorf("progressToken = %s, want %s", p.ProgressToken, mustJSON(t, token))
					}
					if p.Total == nil || *p.Total != 3 {
						t.Errorf("total = %v, want 3", p.Total)
					}
					got = append(got, fmt.Sprintf("%g:%s", p.Progress, p.Message))
				}
				want := []string{"1:step 1", "2:step 2", "3:step 3"}
				if token == nil {
					want = nil
				}
				if !slices.Equal(got, want) {
					t.Errorf("progress = %q, want %q", got, want)
				}
			})
		}
	}
}

// TestProgressHTTP: progress switches a modern POST's response to an SSE
// stream whose last event is the response.
func TestProgressHTTP(t *testing.T) {
	c := startHTTP(t, newServer(t, progressTool()))
	r := c.postModern(1, mcp.MethodToolsCall, "work", modern(map[string]any{"name": "work"}, "progressToken", "p"))
	if ct := r.header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type = %q, want text/event-stream", ct)
	}
	if len(r.msgs) != 4 {
		t.Fatalf("%d events, want 3 progress notifications and the response: %s", len(r.msgs), r.body)
	}
	for _, m := range r.msgs[:3] {
		if m.Method != mcp.NotificationProgress {
			t.Errorf("event %s, want a progress notification", m)
		}
	}
	if text, _ := toolText(t, r.last(t)); text != "worked" {
		t.Errorf("result %q", text)
	}
}

func loggingTool() tool.Tool {
	return textTool("chatty", func(ctx context.Context, _ map[string]any) (string, error) {
		for _, l := range []tool.LogLevel{tool.LevelDebug, tool.LevelInfo, tool.LevelWarning, tool.LevelError} {
			if err := tool.Log(ctx, l, "chatty", map[string]string{"msg": string(l)}); err != nil {
				return "", err
			}
		}
		return "logged", nil
	})
}

func TestLogging(t *testing.T) {
	tests := []struct {
		name     string
		modern   bool
		setLevel mcp.LoggingLevel // legacy: logging/setLevel before the call
		logLevel mcp.LoggingLevel // modern: _meta logLevel
		want     string
	}{
		{name: "legacy default sends every level", want: "debug info warning error"},
		{name: "legacy after setLevel error", setLevel: mcp.LevelError, want: "error"},
		{name: "legacy after setLevel warning", setLevel: mcp.LevelWarning, want: "warning error"},
		{name: "legacy after setLevel emergency", setLevel: mcp.LevelEmergency, want: ""},
		{name: "modern without logLevel sends none", modern: true, want: ""},
		{name: "modern logLevel error", modern: true, logLevel: mcp.LevelError, want: "error"},
		{name: "modern logLevel debug", modern: true, logLevel: mcp.LevelDebug, want: "debug info warning error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, loggingTool())
			c := startStdio(t, srv)
			params := map[string]any{"name": "chatty"}
			if tt.modern {
				var kv []any
				if tt.logLevel != "" {
					kv = []any{mcp.MetaLogLevel, tt.logLevel}
				}
				params = modern(params, kv...)
			} else {
				c.initialize(nil)
				if tt.setLevel != "" {
					resp := c.call(mcp.MethodSetLevel, map[string]any{"level": tt.setLevel})
					if resp.Error != nil {
						t.Fatalf("logging/setLevel: %s", resp)
					}
				}
			}
			resp, before := c.await(c.request(mcp.MethodToolsCall, params))
			if text, _ := toolText(t, resp); text != "logged" {
				t.Errorf("result %q", text)
			}
			var got []string
			for _, m := range before {
				var p mcp.LoggingMessageParams
				if m.Method != mcp.NotificationMessage || json.Unmarshal(m.Params, &p) != nil {
					t.Errorf("unexpected message %s", m)
					continue
				}
				if p.Logger != "chatty" {
					t.Errorf("logger = %q", p.Logger)
				}
				got = append(got, string(p.Level))
			}
			if strings.Join(got, " ") != tt.want {
				t.Errorf("levels sent = %q, want %q", strings.Join(got, " "), tt.want)
			}
		})
	}
	t.Run("legacy setLevel with an unknown level", func(t *testing.T) {
		c := startStdio(t, newServer(t))
		c.initialize(nil)
		id := c.request(mcp.MethodSetLevel, map[string]any{"level": "loud"})
		resp, _ := c.await(id)
		expectError(t, resp, id, jsonrpc.CodeInvalidParams, `unknown level "loud"`)
	})
}

func TestListChangedStdio(t *testing.T) {
	noop := func(context.Context, map[string]string) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{}, nil
	}
	read := func(context.Context, string) ([]mcp.ResourceContents, error) { return nil, nil }
	tests := []struct {
		name   string
		change func(srv *mcp.Server) error
		want   string
	}{
		{"AddTools", func(s *mcp.Server) error { return s.AddTools(echoTool()) }, mcp.NotificationToolsListChanged},
		{"RemoveTools", func(s *mcp.Server) error { s.RemoveTools("seed"); return nil }, mcp.NotificationToolsListChanged},
		{"AddPrompt", func(s *mcp.Server) error { return s.AddPrompt(mcp.Prompt{Name: "p"}, noop) }, mcp.NotificationPromptsListChanged},
		{"AddResource", func(s *mcp.Server) error { return s.AddResource(mcp.Resource{URI: "mem://r", Name: "r"}, read) }, mcp.NotificationResourcesListChanged},
		{"NotifyListChanged", func(s *mcp.Server) error { s.NotifyListChanged(mcp.NotificationPromptsListChanged); return nil }, mcp.NotificationPromptsListChanged},
		// Changes made on the registry itself reach clients too.
		{"Tools().Add", func(s *mcp.Server) error { return s.Registry().Add(echoTool()) }, mcp.NotificationToolsListChanged},
		{"Registry().SetSource", func(s *mcp.Server) error { return s.Registry().SetSource("up", []tool.Tool{echoTool()}) }, mcp.NotificationToolsListChanged},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, textTool("seed", func(context.Context, map[string]any) (string, error) { return "", nil }))
			legacy := startStdio(t, srv)
			legacy.initialize(nil)
			modernOnly := startStdio(t, srv) // never initialized: no session to notify
			expectTools(t, modernOnly.call(mcp.MethodToolsList, modern(nil)), "seed")

			if err := tt.change(srv); err != nil {
				t.Fatal(err)
			}
			m := legacy.next()
			if m.Method != tt.want || !m.hasID("null") {
				t.Errorf("got %s, want a %s notification", m, tt.want)
			}
			modernOnly.expectQuiet()
		})
	}
	t.Run("RemoveTools of an unknown name", func(t *testing.T) {
		srv := newServer(t)
		c := startStdio(t, srv)
		c.initialize(nil)
		srv.RemoveTools("nothing")
		c.expectQuiet()
	})
}

func TestResourceSubscribe(t *testing.T) {
	srv := newServer(t)
	read := func(_ context.Context, uri string) ([]mcp.ResourceContents, error) {
		return []mcp.ResourceContents{{URI: uri, Text: "hi"}}, nil
	}
	srv.AddResource(mcp.Resource{URI: "file:///a.txt", Name: "a"}, read)
	srv.AddResource(mcp.Resource{URI: "file:///b.txt", Name: "b"}, read)
	c := startStdio(t, srv)
	c.initialize(nil)

	if resp := c.call(mcp.MethodResourcesSubscribe, map[string]any{"uri": "file:///a.txt"}); resp.Error != nil {
		t.Fatalf("subscribe: %s", resp)
	}
	srv.NotifyResourceUpdated("file:///b.txt") // not subscribed
	srv.NotifyResourceUpdated("file:///a.txt")
	m := c.next()
	var p mcp.ResourceUpdatedParams
	if m.Method != mcp.NotificationResourceUpdated || json.Unmarshal(m.Params, &p) != nil || p.URI != "file:///a.txt" {
		t.Fatalf("got %s, want an update of file:///a.txt only", m)
	}

	if resp := c.call(mcp.MethodResourcesUnsubscribe, map[string]any{"uri": "file:///a.txt"}); resp.Error != nil {
		t.Fatalf("unsubscribe: %s", resp)
	}
	srv.NotifyResourceUpdated("file:///a.txt")
	c.expectQuiet()

	id := c.request(mcp.MethodResourcesSubscribe, map[string]any{})
	resp, _ := c.await(id)
	expectError(t, resp, id, jsonrpc.CodeInvalidParams, "uri is missing")
	id = c.request(mcp.MethodResourcesSubscribe, modern(map[string]any{"uri": "file:///a.txt"}))
	resp, _ = c.await(id)
	expectError(t, resp, id, jsonrpc.CodeMethodNotFound, "resources/subscribe is not part of protocol 2026-07-28")
}

// greetTool asks the user's name by elicitation. On the first round it
// saves state, which a modern retry must hand back.
func greetTool() tool.Tool {
	return textTool("greet", func(ctx context.Context, _ map[string]any) (string, error) {
		state := "none"
		if s := mcp.State(ctx); s != nil {
			state = string(s)
		} else if err := mcp.SetState(ctx, map[string]int{"round": 1}); err != nil {
			return "", err
		}
		res, err := mcp.Elicit(ctx, &mcp.ElicitParams{
			Message:         "What is your name?",
			RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`),
		})
		if err != nil {
			return "", err
		}
		if res.Action != "accept" {
			return "no name: " + res.Action, nil
		}
		return fmt.Sprintf("hello %v (state %s)", res.Content["name"], state), nil
	})
}

func TestElicitationLegacyStdio(t *testing.T) {
	tests := []struct {
		name     string
		caps     map[string]any
		answer   string // the result or error member of the client's response
		want     string // the tool's text
		wantErr  bool   // isError result
		wantCode int    // a protocol error instead
	}{
		{name: "accept", caps: map[string]any{"elicitation": map[string]any{}},
			answer: `"result":{"action":"accept","content":{"name":"Ada"}}`, want: "hello Ada (state none)"},
		{name: "decline", caps: map[string]any{"elicitation": map[string]any{}},
			answer: `"result":{"action":"decline"}`, want: "no name: decline"},
		{name: "client answers with an error", caps: map[string]any{"elicitation": map[string]any{}},
			answer: `"error":{"code":-1,"message":"user closed the dialog"}`, want: "user closed the dialog", wantErr: true},
		{name: "client without the capability", caps: map[string]any{},
			wantCode: mcp.CodeMissingRequiredClientCapability, want: "did not declare the elicitation capability"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := startStdio(t, newServer(t, greetTool()))
			c.initialize(tt.caps)
			id := c.request(mcp.MethodToolsCall, map[string]any{"name": "greet"})
			if tt.wantCode != 0 {
				resp, _ := c.await(id)
				expectError(t, resp, id, tt.wantCode, tt.want)
				return
			}
			ask := c.next()
			if ask.Method != mcp.MethodElicit || len(ask.ID) == 0 {
				t.Fatalf("got %s, want an elicitation/create request", ask)
			}
			var p mcp.ElicitParams
			if err := json.Unmarshal(ask.Params, &p); err != nil || p.Message != "What is your name?" {
				t.Fatalf("elicitation params %s (%v)", ask.Params, err)
			}
			c.send(`{"jsonrpc":"2.0","id":` + string(ask.ID) + `,` + tt.answer + `}`)
			resp, before := c.await(id)
			if len(before) > 0 {
				t.Errorf("unexpected messages: %v", before)
			}
			text, isErr := toolText(t, resp)
			if !strings.Contains(text, tt.want) || isErr != tt.wantErr {
				t.Errorf("result %q (isError %v), want %q (isError %v)", text, isErr, tt.want, tt.wantErr)
			}
		})
	}
}

func TestInputRequiredModernStdio(t *testing.T) {
	c := startStdio(t, newServer(t, greetTool(), echoTool()))
	caps := map[string]any{"elicitation": map[string]any{}}
	call := func(p map[string]any) *rpcMsg {
		return c.call(mcp.MethodToolsCall, modern(p, mcp.MetaClientCapabilities, caps))
	}

	// Round 1: the server asks.
	var ir struct {
		ResultType    string                      `json:"resultType"`
		InputRequests map[string]mcp.InputRequest `json:"inputRequests"`
		RequestState  string                      `json:"requestState"`
	}
	call(map[string]any{"name": "greet"}).decodeResult(t, &ir)
	if ir.ResultType != mcp.ResultInputRequired || ir.RequestState == "" {
		t.Fatalf("round 1: %+v, want an input_required result with requestState", ir)
	}
	q, ok := ir.InputRequests["elicitation-1"]
	if !ok || q.Method != mcp.MethodElicit || !strings.Contains(string(q.Params), "What is your name?") {
		t.Fatalf("round 1 inputRequests = %v", ir.InputRequests)
	}
	answers := map[string]any{"elicitation-1": map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}}}

	// Round 2: the client retries with the answer and the state echoed.
	resp := call(map[string]any{"name": "greet", "inputResponses": answers, "requestState": ir.RequestState})
	var done struct {
		ResultType string `json:"resultType"`
	}
	resp.decodeResult(t, &done)
	if done.ResultType != mcp.ResultComplete {
		t.Errorf("round 2 resultType = %q", done.ResultType)
	}
	if text, _ := toolText(t, resp); text != `hello Ada (state {"round":1})` {
		t.Errorf("round 2 result %q", text)
	}

	// What a client must not do with a requestState.
	tampered := []byte(ir.RequestState)
	tampered[len(tampered)-2] ^= 1
	body, sig, _ := strings.Cut(ir.RequestState, ".")
	otherBody := []byte(body)
	otherBody[3] ^= 1
	bad := []struct {
		name string
		p    map[string]any
		msg  string
	}{
		{"signature changed", map[string]any{"name": "greet", "inputResponses": answers, "requestState": string(tampered)},
			"it was not issued by this server or has been modified"},
		{"payload changed", map[string]any{"name": "greet", "inputResponses": answers, "requestState": string(otherBody) + "." + sig},
			"it was not issued by this server or has been modified"},
		{"no signature", map[string]any{"name": "greet", "requestState": body},
			"it was not issued by this server or has been modified"},
		{"state of another tool", map[string]any{"name": "echo", "requestState": ir.RequestState},
			`it was issued for "greet", not "echo"`},
	}
	for _, b := range bad {
		t.Run(b.name, func(t *testing.T) {
			id := c.request(mcp.MethodToolsCall, modern(b.p, mcp.MetaClientCapabilities, caps))
			resp, _ := c.await(id)
			expectError(t, resp, id, jsonrpc.CodeInvalidParams, "invalid requestState: "+b.msg)
		})
	}

	t.Run("state from another server", func(t *testing.T) {
		other := startStdio(t, newServer(t, greetTool()))
		id := other.request(mcp.MethodToolsCall, modern(map[string]any{"name": "greet", "requestState": ir.RequestState}, mcp.MetaClientCapabilities, caps))
		resp, _ := other.await(id)
		expectError(t, resp, id, jsonrpc.CodeInvalidParams, "invalid requestState")
	})
	t.Run("client without the capability", func(t *testing.T) {
		id := c.request(mcp.MethodToolsCall, modern(map[string]any{"name": "greet"}))
		resp, _ := c.await(id)
		expectError(t, resp, id, mcp.CodeMissingRequiredClientCapability, "elicitation")
	})
}

func TestSubscriptionsListenStdio(t *testing.T) {
	srv := newServer(t, echoTool())
	srv.AddResource(mcp.Resource{URI: "file:///watched", Name: "w"}, func(context.Context, string) ([]mcp.ResourceContents, error) { return nil, nil })
	c := startStdio(t, srv)

	c.sendRequest(`"L1"`, mcp.MethodSubscriptionsListen, modern(map[string]any{
		"notifications": map[string]any{"toolsListChanged": true, "resourceSubscriptions": []string{"file:///watched"}},
	}))
	subID := func(m *rpcMsg) string {
		var p struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		}
		_ = json.Unmarshal(m.Params, &p)
		return string(p.Meta[mcp.MetaSubscriptionID])
	}

	ack := c.next()
	var ap mcp.SubscriptionsAcknowledgedParams
	if ack.Method != mcp.NotificationSubscriptionsAcknowledged || json.Unmarshal(ack.Params, &ap) != nil {
		t.Fatalf("got %s, want notifications/subscriptions/acknowledged", ack)
	}
	if subID(ack) != `"L1"` || !ap.Notifications.ToolsListChanged || !slices.Equal(ap.Notifications.ResourceSubscriptions, []string{"file:///watched"}) {
		t.Errorf("acknowledgement %s", ack)
	}
	g := goroutineRunning("mcp.(*Server).listen")
	if g == 0 {
		t.Fatal("found no goroutine serving subscriptions/listen")
	}

	if err := srv.AddTools(textTool("new", func(context.Context, map[string]any) (string, error) { return "", nil })); err != nil {
		t.Fatal(err)
	}
	if m := c.next(); m.Method != mcp.NotificationToolsListChanged || subID(m) != `"L1"` {
		t.Errorf("got %s, want tools/list_changed for subscription L1", m)
	}
	srv.NotifyResourceUpdated("file:///other")
	srv.NotifyResourceUpdated("file:///watched")
	if m := c.next(); m.Method != mcp.NotificationResourceUpdated || subID(m) != `"L1"` || !strings.Contains(string(m.Params), "file:///watched") {
		t.Errorf("got %s, want resources/updated of file:///watched for subscription L1", m)
	}
	// Other requests are served while the stream is open.
	expectTools(t, c.call(mcp.MethodToolsList, modern(nil)), "echo", "new")

	c.notify(mcp.NotificationCancelled, map[string]any{"requestId": "L1"})
	eventually(t, "the listen request ends", func() bool { return !goroutineAlive(g) })
	srv.RemoveTools("new")
	resp, before := c.await(c.request(mcp.MethodToolsList, modern(nil)))
	expectTools(t, resp, "echo")
	for _, m := range before {
		t.Errorf("message after the subscription was cancelled: %s", m)
	}

	t.Run("legacy session", func(t *testing.T) {
		c := startStdio(t, srv)
		c.initialize(nil)
		id := c.request(mcp.MethodSubscriptionsListen, map[string]any{"notifications": map[string]any{"toolsListChanged": true}})
		resp, _ := c.await(id)
		expectError(t, resp, id, jsonrpc.CodeMethodNotFound, "subscriptions/listen")
	})
}

// TestListenNotifiesRightAfterAck: a change made as soon as the client has
// the acknowledgement of subscriptions/listen must reach it (the server once
// acknowledged before registering the stream, and lost such changes).
func TestListenNotifiesRightAfterAck(t *testing.T) {
	srv := newServer(t)
	c := startStdio(t, srv)
	for i := range 200 {
		id := fmt.Sprintf(`"L%d"`, i)
		c.sendRequest(id, mcp.MethodSubscriptionsListen, modern(map[string]any{"notifications": map[string]any{"toolsListChanged": true}}))
		if m := c.next(); m.Method != mcp.NotificationSubscriptionsAcknowledged {
			t.Fatalf("got %s, want the acknowledgement", m)
		}
		name := fmt.Sprintf("t%d", i)
		if err := srv.AddTools(textTool(name, func(context.Context, map[string]any) (string, error) { return "", nil })); err != nil {
			t.Fatal(err)
		}
		m, ok := c.nextWithin(time.Second)
		if !ok || m.Method != mcp.NotificationToolsListChanged {
			t.Fatalf("round %d: got %v, want tools/list_changed", i, m)
		}
		c.notify(mcp.NotificationCancelled, map[string]any{"requestId": json.RawMessage(id)})
	}
}

// TestServeStreamDrainsOnEOF: when the client closes stdin, requests in
// flight still finish and write their responses before ServeStream returns.
func TestServeStreamDrainsOnEOF(t *testing.T) {
	hang := newBlockingTool("hang")
	srv := newServer(t, hang)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- srv.ServeStream(context.Background(), inR, outW); outW.Close() }()
	out := make(chan []byte, 1)
	go func() { b, _ := io.ReadAll(outR); out <- b }()

	if _, err := io.WriteString(inW, rpc(1, mcp.MethodToolsCall, modern(map[string]any{"name": "hang"}))+"\n"); err != nil {
		t.Fatal(err)
	}
	hang.waitStarted(t)
	inW.Close()
	select {
	case err := <-done:
		t.Fatalf("ServeStream returned (%v) with a request in flight", err)
	case <-time.After(quietWait):
	}
	hang.unblock()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("ServeStream = %v, want nil at end of input", err)
		}
	case <-time.After(waitTimeout):
		t.Fatal("ServeStream did not return")
	}
	b := <-out
	if !strings.Contains(string(b), `"id":1,"result"`) || !strings.Contains(string(b), "released") {
		t.Errorf("output %q, want the response of the request in flight", b)
	}
}

// TestServeStreamContextCancel: cancelling ServeStream's context ends it.
func TestServeStreamContextCancel(t *testing.T) {
	srv := newServer(t)
	inR, inW := io.Pipe()
	defer inW.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.ServeStream(ctx, inR, io.Discard) }()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("ServeStream = %v, want context.Canceled", err)
		}
	case <-time.After(waitTimeout):
		t.Fatal("ServeStream did not return after its context was cancelled")
	}
}

// TestLegacyHTTPSession runs a legacy session over Streamable HTTP:
// initialize, then requests carrying the session id.
func TestLegacyHTTPSession(t *testing.T) {
	c := startHTTP(t, newServer(t, echoTool()))
	r := c.post(context.Background(), rpc(1, mcp.MethodInitialize, map[string]any{
		"protocolVersion": mcp.Version20250618, "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "c", "version": "1"},
	}), nil)
	sid := r.header.Get(mcp.HeaderSessionID)
	if r.status != http.StatusOK || sid == "" {
		t.Fatalf("initialize: HTTP %d, session %q: %s", r.status, sid, r.body)
	}
	var ir mcp.InitializeResult
	r.last(t).decodeResult(t, &ir)
	if ir.ProtocolVersion != mcp.Version20250618 {
		t.Errorf("negotiated %q", ir.ProtocolVersion)
	}
	h := map[string]string{mcp.HeaderSessionID: sid, mcp.HeaderProtocolVersion: mcp.Version20250618}
	if r := c.post(context.Background(), rpc(nil, mcp.NotificationInitialized, nil), h); r.status != http.StatusAccepted {
		t.Errorf("initialized notification: HTTP %d", r.status)
	}
	r = c.post(context.Background(), rpc(2, mcp.MethodToolsCall, map[string]any{"name": "echo", "arguments": map[string]any{"text": "hi"}}), h)
	if text, _ := toolText(t, r.last(t)); text != "hi" {
		t.Errorf("echo = %q", text)
	}
	h[mcp.HeaderSessionID] = "no-such-session"
	r = c.post(context.Background(), rpc(3, mcp.MethodToolsList, nil), h)
	if r.status != http.StatusNotFound {
		t.Errorf("unknown session: HTTP %d, want 404", r.status)
	}
}

// TestSharedResultMeta calls, concurrently and in the modern era, a tool
// that returns the same result every time: each response carries the
// server's identity in _meta, and the tool's own map is left as it was
// (under -race, writing to it would be a data race).
func TestSharedResultMeta(t *testing.T) {
	shared := &tool.Result{Content: []tool.Content{tool.TextContent("x")}, Meta: map[string]any{"k": "v"}}
	srv := newServer(t, tool.NewFunc(
		tool.Info{Name: "shared", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, json.RawMessage) (*tool.Result, error) { return shared, nil }))
	ts := httptest.NewServer(&mcp.HTTPHandler{Server: srv})
	defer ts.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := (&mcp.Client{Info: mcp.Implementation{Name: "c", Version: "1"}}).Connect(ctx, &mcp.HTTPTransport{URL: ts.URL})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.ProtocolVersion() != mcp.Version20260728 {
		t.Fatalf("protocol %s, want the modern one", s.ProtocolVersion())
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				res, err := s.CallTool(ctx, "shared", nil)
				if err != nil {
					t.Error(err)
					return
				}
				if res.Meta["k"] != "v" || res.Meta[mcp.MetaServerInfo] == nil {
					t.Errorf("_meta %v, want k and %s", res.Meta, mcp.MetaServerInfo)
					return
				}
			}
		}()
	}
	wg.Wait()
	if len(shared.Meta) != 1 {
		t.Errorf("the tool's own _meta became %v", shared.Meta)
	}
}

// TestToolNameSpelling: a tool name is routed by its decoded value, however
// the JSON spells it; escapes are never matched as written.
func TestToolNameSpelling(t *testing.T) {
	plain := textTool("add", func(context.Context, map[string]any) (string, error) { return "plain", nil })
	dashed := textTool("a-b", func(context.Context, map[string]any) (string, error) { return "dash", nil })
	c := startStdio(t, newServer(t, plain, dashed))
	c.initialize(nil)
	tests := []struct {
		raw  string // the name as JSON
		want string
	}{
		{`"add"`, "plain"},
		{`"\u0061dd"`, "plain"},
		{`"a-b"`, "dash"},
		{`"a\u002db"`, "dash"},
		{`"a\u002Db"`, "dash"},
	}
	for _, tt := range tests {
		resp := c.call(mcp.MethodToolsCall, json.RawMessage(`{"name":`+tt.raw+`}`))
		if got, isErr := toolText(t, resp); got != tt.want || isErr {
			t.Errorf("name %s: got %q (error %v), want %q", tt.raw, got, isErr, tt.want)
		}
	}
	// A backslash written as an escape names no tool.
	resp := c.call(mcp.MethodToolsCall, json.RawMessage(`{"name":"a\\u002db"}`))
	if resp.Error == nil || resp.Error.Code != jsonrpc.CodeInvalidParams || !strings.Contains(resp.Error.Message, "unknown tool") {
		t.Errorf("a name with a backslash: got %s, want an unknown tool error", resp)
	}
}

// TestRegistrationsAlike: tools, resources, templates and prompts refuse
// a second registration under one name alike, and removing notifies.
func TestRegistrationsAlike(t *testing.T) {
	noop := func(context.Context, map[string]string) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{}, nil
	}
	read := func(context.Context, string) ([]mcp.ResourceContents, error) { return nil, nil }
	srv := newServer(t)
	adds := []struct {
		name string
		add  func() error
	}{
		{"tool", func() error { return srv.AddTools(echoTool()) }},
		{"resource", func() error { return srv.AddResource(mcp.Resource{URI: "mem://r", Name: "r"}, read) }},
		{"template", func() error {
			return srv.AddResourceTemplate(mcp.ResourceTemplate{URITemplate: "mem://{x}", Name: "t"}, read)
		}},
		{"prompt", func() error { return srv.AddPrompt(mcp.Prompt{Name: "p"}, noop) }},
	}
	for _, a := range adds {
		if err := a.add(); err != nil {
			t.Fatalf("first %s: %v", a.name, err)
		}
		if err := a.add(); err == nil || !strings.Contains(err.Error(), "already") {
			t.Errorf("second %s: %v, want an error saying it is registered already", a.name, err)
		}
	}
	c := startStdio(t, srv)
	c.initialize(nil)
	srv.RemoveResources("mem://r")
	if m := c.next(); m.Method != mcp.NotificationResourcesListChanged {
		t.Errorf("RemoveResources: got %s", m)
	}
	srv.RemovePrompts("p")
	if m := c.next(); m.Method != mcp.NotificationPromptsListChanged {
		t.Errorf("RemovePrompts: got %s", m)
	}
	if err := srv.AddResource(mcp.Resource{URI: "mem://r", Name: "r"}, read); err != nil {
		t.Errorf("adding a removed resource again: %v", err)
	}
}
