package mcp_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/toolwire/toolwire/bearer"
	"github.com/toolwire/toolwire/handle/redisstore"
	"github.com/toolwire/toolwire/internal/testhydra"
	"github.com/toolwire/toolwire/internal/testredis"
	"github.com/toolwire/toolwire/mcp"
)

// TestAuthHydraReplicas: two users with tokens from a real authorization
// server (Ory Hydra), on two replicas of one MCP server that keep handles
// in one Redis. A user's handle, made in a legacy session on one replica,
// works from a modern request and from another session on the other
// replica; the other user can neither read nor release it on either.
func TestAuthHydraReplicas(t *testing.T) {
	h := testhydra.Start(t)
	rs := testredis.Start(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	const aud = "http://mcp.test/mcp" // the replicas' one canonical URL, behind a load balancer
	replica := func() string {
		store, err := redisstore.New(rs.Addr, 0)
		if err != nil {
			t.Fatal(err)
		}
		v, err := bearer.NewJWT(ctx, bearer.JWTConfig{Issuer: h.Issuer(), Audience: aud})
		if err != nil {
			t.Fatal(err)
		}
		a, err := bearer.New(v, bearer.Options{Resource: aud, AuthorizationServers: []string{h.Issuer()}, Scopes: []string{"mcp"}})
		if err != nil {
			t.Fatal(err)
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		hs, end := mcp.NewHTTPEndpoints(newServer(t, append(noteTools(store), dropTool(store))...), mcp.HTTPConfig{Auth: a})
		go hs.Serve(ln)
		t.Cleanup(func() { hs.Close(); end() })
		return "http://" + ln.Addr().String() + "/mcp"
	}
	urls := []string{replica(), replica()}

	const redirect = "http://127.0.0.1/callback"
	id, secret, err := h.CreateClient(ctx, testhydra.Client{GrantTypes: []string{"authorization_code"}, RedirectURIs: []string{redirect}, Scopes: []string{"mcp"}})
	if err != nil {
		t.Fatal(err)
	}
	cfg := &oauth2.Config{ClientID: id, ClientSecret: secret, RedirectURL: redirect, Scopes: []string{"mcp"}}
	// call opens a session (legacy, or modern requests) for user on a
	// replica, with a token of its own, and calls a tool.
	call := func(user string, replica int, version, name, args string) (string, bool) {
		tok, err := h.UserToken(ctx, cfg, user, aud)
		if err != nil {
			t.Fatal(err)
		}
		s := connect(t, &mcp.HTTPTransport{URL: urls[replica], Header: http.Header{"Authorization": {"Bearer " + tok.AccessToken}}}, version)
		res, err := s.CallTool(ctx, name, json.RawMessage(args))
		if err != nil {
			t.Fatalf("%s on replica %d: %s: %v", user, replica, name, err)
		}
		return res.Content[0].Text, res.IsError
	}
	text, isErr := call("alice", 0, mcp.Version20251125, "keep", `{"text":"alice's"}`)
	var ref struct{ Note string }
	if err := json.Unmarshal([]byte(text), &ref); isErr || err != nil {
		t.Fatalf("keep: %q", text)
	}
	args := `{"note":"` + ref.Note + `"}`
	for _, tt := range []struct {
		user    string
		replica int
		version string
	}{
		{"alice", 1, ""},
		{"alice", 1, mcp.Version20251125},
		{"alice", 0, ""},
		{"bob", 0, ""},
		{"bob", 1, ""},
		{"bob", 1, mcp.Version20251125},
	} {
		text, isErr := call(tt.user, tt.replica, tt.version, "read", args)
		if alice := tt.user == "alice"; alice == isErr || alice != (text == "alice's") {
			t.Errorf("%s on replica %d (protocol %q) reading alice's note: %q (error %v)", tt.user, tt.replica, tt.version, text, isErr)
		}
		if tt.user == "bob" {
			if text, isErr := call(tt.user, tt.replica, tt.version, "drop", args); !isErr || !strings.Contains(text, "expired") {
				t.Errorf("bob on replica %d releasing alice's note: %q (error %v)", tt.replica, text, isErr)
			}
		}
	}
	if text, isErr := call("alice", 1, "", "drop", args); isErr || text != "released" {
		t.Errorf("alice releasing her note on the other replica: %q (error %v)", text, isErr)
	}
}
