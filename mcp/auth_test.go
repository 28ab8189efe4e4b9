package mcp_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/bearer"
	"github.com/toolwire/toolwire/handle"
	"github.com/toolwire/toolwire/internal/testas"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/tool"
)

// authServer is an MCP server over HTTP (NewHTTPEndpoints) whose tokens
// a test authorization server issues.
type authServer struct {
	url string // the MCP endpoint, http://127.0.0.1:PORT/mcp: also the tokens' audience
	as  *testas.Server
}

// startAuthHTTP serves srv on NewHTTPEndpoints with HTTPConfig.Auth:
// every request needs scope "mcp", and tools/call of a tool the scopes
// toolScopes give it.
func startAuthHTTP(t *testing.T, srv *mcp.Server, toolScopes map[string][]string) *authServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &authServer{url: "http://" + ln.Addr().String() + "/mcp"}
	s.as = testas.New(t, s.url)
	v, err := bearer.NewJWT(context.Background(), bearer.JWTConfig{Issuer: s.as.URL, Audience: s.url})
	if err != nil {
		t.Fatal(err)
	}
	a, err := bearer.New(v, bearer.Options{Resource: s.url, AuthorizationServers: []string{s.as.URL}, Scopes: []string{"mcp"}, ToolScopes: toolScopes})
	if err != nil {
		t.Fatal(err)
	}
	hs, end := mcp.NewHTTPEndpoints(srv, mcp.HTTPConfig{Auth: a})
	go hs.Serve(ln)
	t.Cleanup(func() {
		hs.Close()
		end()
	})
	return s
}

// token returns a fresh token of sub (a new one each time: another
// jti), with extra claims.
func (s *authServer) token(t *testing.T, sub string, extra map[string]any) http.Header {
	t.Helper()
	return http.Header{"Authorization": {"Bearer " + s.as.Token(t, sub, extra)}}
}

// dropTool releases a note (handle.Release), for TestAuthTwoUsers.
func dropTool(store handle.Store) tool.Tool {
	return tool.Must(tool.New("drop", "Releases a note.", func(ctx context.Context, in struct {
		Note string `json:"note"`
	}) (string, error) {
		if err := handle.Release[*note](ctx, store, in.Note); err != nil {
			return "", err
		}
		return "released", nil
	}))
}

// whoamiTool answers with the caller and the scopes of the token of the
// request it serves (bearer.InfoFrom).
func whoamiTool() tool.Tool {
	return tool.Must(tool.New("whoami", "Says who calls.", func(ctx context.Context, _ struct{}) (string, error) {
		c, _ := tool.CallerFrom(ctx)
		info, ok := bearer.InfoFrom(ctx)
		if !ok {
			return c.ID + " without a token", nil
		}
		return c.ID + " " + c.Client + " " + info.Subject + " " + strings.Join(info.Scopes, ","), nil
	}))
}

// TestAuthTwoUsers: two users, each with their own tokens, on one
// server. A handle follows its user across legacy sessions (Streamable
// HTTP and HTTP+SSE), modern requests and fresh tokens; the other user
// can neither read nor release it, whatever the transport.
func TestAuthTwoUsers(t *testing.T) {
	store := &handle.Memory{}
	srv := newServer(t, append(noteTools(store), dropTool(store), whoamiTool())...)
	s := startAuthHTTP(t, srv, nil)
	base := strings.TrimSuffix(s.url, "/mcp")

	type caller func(name, args string) (string, bool)
	over := func(sess *mcp.ClientSession) caller {
		return func(name, args string) (string, bool) {
			res, err := sess.CallTool(context.Background(), name, json.RawMessage(args))
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			return res.Content[0].Text, res.IsError
		}
	}
	legacy := func(user string) caller {
		return over(connect(t, &mcp.HTTPTransport{URL: s.url, Header: s.token(t, user, nil)}, mcp.Version20251125))
	}
	modern := func(user string) caller {
		return over(connect(t, &mcp.HTTPTransport{URL: s.url, Header: s.token(t, user, nil)}, ""))
	}
	sse := func(user string) caller {
		return over(connect(t, &mcp.SSETransport{URL: base + "/sse", Header: s.token(t, user, nil)}, ""))
	}
	callers := map[string]caller{
		"alice legacy":   legacy("alice"),
		"alice legacy 2": legacy("alice"),
		"alice modern":   modern("alice"),
		"alice sse":      sse("alice"),
		"bob legacy":     legacy("bob"),
		"bob modern":     modern("bob"),
		"bob sse":        sse("bob"),
	}
	for creator, c := range callers {
		text, isErr := c("keep", `{"text":"from `+creator+`"}`)
		var ref struct{ Note string }
		if err := json.Unmarshal([]byte(text), &ref); isErr || err != nil || !strings.HasPrefix(ref.Note, "note_") {
			t.Fatalf("%s: keep answered %q (error %v)", creator, text, isErr)
		}
		args := `{"note":"` + ref.Note + `"}`
		user, _, _ := strings.Cut(creator, " ")
		for name, call := range callers {
			same := strings.HasPrefix(name, user+" ")
			text, isErr := call("read", args)
			switch {
			case same && (isErr || text != "from "+creator):
				t.Errorf("%s reading %s's note: %q (error %v), want the note", name, creator, text, isErr)
			case !same && (!isErr || text != "handle "+ref.Note+" is unknown to this server: it may belong to another session or user, the server may have restarted since it was made, or it expired; if you still need the note, keep it again"):
				t.Errorf("%s reading %s's note: %q (error %v), want it to read as unknown", name, creator, text, isErr)
			}
			if !same {
				if text, isErr := call("drop", args); !isErr || !strings.Contains(text, "expired") {
					t.Errorf("%s releasing %s's note: %q (error %v), want it to read as unknown", name, creator, text, isErr)
				}
			}
		}
		// Still there for its user, after the other's attempts.
		if text, isErr := callers[user+" modern"]("drop", args); isErr || text != "released" {
			t.Errorf("%s releasing its own note: %q (error %v)", user, text, isErr)
		}
	}
	if text, _ := callers["alice sse"]("whoami", `{}`); !strings.Contains(text, " test-client alice mcp") || !strings.HasPrefix(text, "user:") {
		t.Errorf("whoami over HTTP+SSE: %q", text)
	}
}

// rawPost POSTs a JSON-RPC body to url with headers, and returns the
// status, the headers and the body.
func rawPost(t *testing.T, url, body string, header http.Header) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if header != nil {
		req.Header = header.Clone()
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	return rawDo(t, req)
}

// rawDo sends req and returns the status, the headers and the body; an
// event stream's body is left unread (it would stay open).
func rawDo(t *testing.T, req *http.Request) (int, http.Header, string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return resp.StatusCode, resp.Header, ""
	}
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

const (
	initLegacy = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	callWhoami = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"whoami","arguments":{}}}`
)

// TestAuthSessionBinding: a legacy session is bound to the user who
// opened it. Another user's token finds no such session (404, as if it
// had ended), for POST, GET and DELETE; the same user's fresh token uses
// it, and the tools see that token, not the one that opened the session.
func TestAuthSessionBinding(t *testing.T) {
	srv := newServer(t, whoamiTool())
	s := startAuthHTTP(t, srv, nil)
	alice := s.token(t, "alice", nil)
	status, h, body := rawPost(t, s.url, initLegacy, alice)
	sid := h.Get(mcp.HeaderSessionID)
	if status != 200 || sid == "" {
		t.Fatalf("initialize: %d %s", status, body)
	}
	withSession := func(h http.Header) http.Header {
		h = h.Clone()
		h.Set(mcp.HeaderSessionID, sid)
		h.Set(mcp.HeaderProtocolVersion, "2025-11-25")
		return h
	}
	bob := withSession(s.token(t, "bob", nil))
	if status, _, body := rawPost(t, s.url, callWhoami, bob); status != http.StatusNotFound || !strings.Contains(body, "not found") {
		t.Errorf("bob's POST on alice's session: %d %s", status, body)
	}
	get, _ := http.NewRequest(http.MethodGet, s.url, nil)
	get.Header = bob.Clone()
	get.Header.Set("Accept", "text/event-stream")
	if status, _, body := rawDo(t, get); status != http.StatusNotFound {
		t.Errorf("bob's GET on alice's session: %d %s", status, body)
	}
	del, _ := http.NewRequest(http.MethodDelete, s.url, nil)
	del.Header = bob.Clone()
	if status, _, body := rawDo(t, del); status != http.StatusNotFound {
		t.Errorf("bob's DELETE of alice's session: %d %s", status, body)
	}
	// Alice, with a fresh token granting more, still has her session, and
	// its tool sees the fresh token.
	fresh := withSession(s.token(t, "alice", map[string]any{"scope": "mcp extra"}))
	status, _, body = rawPost(t, s.url, callWhoami, fresh)
	if status != 200 || !strings.Contains(body, "test-client alice mcp,extra") {
		t.Errorf("alice's fresh token on her session: %d %s", status, body)
	}
	del.Header = fresh.Clone()
	if status, _, body := rawDo(t, del); status != http.StatusOK {
		t.Errorf("alice's DELETE of her session: %d %s", status, body)
	}
}

// TestAuthSSEBinding: an HTTP+SSE session is bound to the user who
// opened its stream: another user's POSTs to it find no session. A call
// POSTed without the scopes of its tool is refused (403).
func TestAuthSSEBinding(t *testing.T) {
	srv := newServer(t, whoamiTool())
	s := startAuthHTTP(t, srv, map[string][]string{"whoami": {"identity"}})
	base := strings.TrimSuffix(s.url, "/mcp")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/sse", nil)
	req.Header = s.token(t, "alice", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	buf := make([]byte, 512)
	n, _ := resp.Body.Read(buf)
	_, endpoint, ok := strings.Cut(string(buf[:n]), "data: ")
	if resp.StatusCode != 200 || !ok {
		t.Fatalf("GET /sse: %d %q", resp.StatusCode, buf[:n])
	}
	endpoint = base + strings.TrimSpace(endpoint)
	if status, _, body := rawPost(t, endpoint, initLegacy, s.token(t, "bob", nil)); status != http.StatusNotFound {
		t.Errorf("bob's POST to alice's stream: %d %s", status, body)
	}
	if status, _, body := rawPost(t, endpoint, initLegacy, s.token(t, "alice", nil)); status != http.StatusAccepted {
		t.Errorf("alice's POST to her stream: %d %s", status, body)
	}
	if status, h, body := rawPost(t, endpoint, callWhoami, s.token(t, "alice", nil)); status != http.StatusForbidden || !strings.Contains(h.Get("WWW-Authenticate"), `error="insufficient_scope"`) {
		t.Errorf("alice's call of whoami without its scope: %d %q %s", status, h.Get("WWW-Authenticate"), body)
	}
	if status, _, body := rawPost(t, endpoint, callWhoami, s.token(t, "alice", map[string]any{"scope": "mcp identity"})); status != http.StatusAccepted {
		t.Errorf("alice's call of whoami with its scope: %d %s", status, body)
	}
}

// TestAuthHTTP checks the endpoints' answers to requests without a good
// token, and to calls without the scopes their tool needs, in both eras
// and on both transports; and the Protected Resource Metadata.
func TestAuthHTTP(t *testing.T) {
	srv := newServer(t, whoamiTool(), echoTool())
	s := startAuthHTTP(t, srv, map[string][]string{"whoami": {"identity"}})
	base := strings.TrimSuffix(s.url, "/mcp")
	md := `resource_metadata="` + base + `/.well-known/oauth-protected-resource/mcp"`

	for _, path := range []string{"/mcp", "/sse", "/message?sessionId=x"} {
		status, h, _ := rawPost(t, base+path, initLegacy, nil)
		if status != 401 || h.Get("WWW-Authenticate") != `Bearer `+md+`, scope="mcp"` {
			t.Errorf("POST %s without a token: %d %q", path, status, h.Get("WWW-Authenticate"))
		}
	}
	status, h, _ := rawPost(t, s.url, initLegacy, s.token(t, "alice", map[string]any{"aud": "https://other.example.com/mcp"}))
	if status != 401 || !strings.Contains(h.Get("WWW-Authenticate"), `error="invalid_token", error_description="invalid token: issued for another audience`) {
		t.Errorf("token for another audience: %d %q", status, h.Get("WWW-Authenticate"))
	}

	// whoami needs scope identity: a modern call without it gets 403
	// naming both scopes; echo does not.
	call := func(name string) string {
		args := map[string]any{}
		if name == "echo" {
			args["text"] = "echoed"
		}
		return mustJSON(t, map[string]any{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": modern(map[string]any{"name": name, "arguments": args})})
	}
	modernHeader := func(token http.Header, name string) http.Header {
		h := token.Clone()
		for k, v := range modernHeaders("tools/call", name) {
			h.Set(k, v)
		}
		return h
	}
	plain := s.token(t, "alice", nil)
	const insufficient = `, scope="identity mcp", error="insufficient_scope", error_description="tool whoami needs scope identity mcp"`
	if status, h, body := rawPost(t, s.url, call("whoami"), modernHeader(plain, "whoami")); status != 403 || h.Get("WWW-Authenticate") != `Bearer `+md+insufficient {
		t.Errorf("modern whoami without its scope: %d %q %s", status, h.Get("WWW-Authenticate"), body)
	}
	if status, _, body := rawPost(t, s.url, call("echo"), modernHeader(plain, "echo")); status != 200 || !strings.Contains(body, `"text":"echoed"`) {
		t.Errorf("modern echo: %d %s", status, body)
	}
	if status, _, body := rawPost(t, s.url, call("whoami"), modernHeader(s.token(t, "alice", map[string]any{"scope": "mcp identity"}), "whoami")); status != 200 || !strings.Contains(body, "alice mcp,identity") {
		t.Errorf("modern whoami with its scope: %d %s", status, body)
	}
	// A name the dispatcher reads differently from encoding/json (keys
	// are case-insensitive to it) must not slip past the check.
	sneaky := `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"whoami","NAME":"echo","arguments":{}}}`
	_, lh, _ := rawPost(t, s.url, initLegacy, plain)
	legacyHeader := plain.Clone()
	legacyHeader.Set(mcp.HeaderSessionID, lh.Get(mcp.HeaderSessionID))
	if status, h, body := rawPost(t, s.url, sneaky, legacyHeader); status != 403 || h.Get("WWW-Authenticate") != `Bearer `+md+insufficient {
		t.Errorf("legacy whoami, with NAME echo, without its scope: %d %q %s", status, h.Get("WWW-Authenticate"), body)
	}
	if status, _, body := rawPost(t, s.url, callWhoami, legacyHeader); status != 403 {
		t.Errorf("legacy whoami without its scope: %d %s", status, body)
	}

	// The metadata, where clients look for it, without a token.
	for _, path := range []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Resource             string   `json:"resource"`
			AuthorizationServers []string `json:"authorization_servers"`
			ScopesSupported      []string `json:"scopes_supported"`
		}
		err = json.NewDecoder(resp.Body).Decode(&doc)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 || doc.Resource != s.url || len(doc.AuthorizationServers) != 1 || doc.AuthorizationServers[0] != s.as.URL || strings.Join(doc.ScopesSupported, " ") != "identity mcp" {
			t.Errorf("GET %s: %d %+v %v", path, resp.StatusCode, doc, err)
		}
	}
}
