package bearer_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/toolwire/toolwire/bearer"
	"github.com/toolwire/toolwire/internal/testhydra"
)

// hydraClient registers a client of h for the authorization code flow
// that may ask for scope "mcp", and returns its configuration.
func hydraClient(ctx context.Context, t *testing.T, h *testhydra.Server) *oauth2.Config {
	t.Helper()
	const redirect = "http://127.0.0.1/callback"
	id, secret, err := h.CreateClient(ctx, testhydra.Client{GrantTypes: []string{"authorization_code"}, RedirectURIs: []string{redirect}, Scopes: []string{"mcp"}})
	if err != nil {
		t.Fatal(err)
	}
	return &oauth2.Config{ClientID: id, ClientSecret: secret, RedirectURL: redirect, Scopes: []string{"mcp"}}
}

// TestHydra verifies access tokens a real authorization server (Ory
// Hydra) issued: users' tokens from the authorization code flow with
// resource=this server, a client's own from the client credentials
// grant, as JWTs against Hydra's published keys and by introspection;
// and refuses its tokens for another audience, and tampered ones.
func TestHydra(t *testing.T) {
	h := testhydra.Start(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	jwtV, err := bearer.NewJWT(ctx, bearer.JWTConfig{Issuer: h.Issuer(), Audience: audience})
	if err != nil {
		t.Fatal(err)
	}
	introV, err := bearer.NewIntrospection(ctx, bearer.IntrospectionConfig{Issuer: h.Issuer(), Audience: audience, Endpoint: h.AdminURL() + "/admin/oauth2/introspect"})
	if err != nil {
		t.Fatal(err)
	}
	cfg := hydraClient(ctx, t, h)
	token := func(sub, resource string) string {
		tok, err := h.UserToken(ctx, cfg, sub, resource)
		if err != nil {
			t.Fatal(err)
		}
		return tok.AccessToken
	}
	alice, bob := token("alice", audience), token("bob", audience)
	machineID, machineSecret, err := h.CreateClient(ctx, testhydra.Client{GrantTypes: []string{"client_credentials"}, Scopes: []string{"mcp"}, Audience: []string{audience}})
	if err != nil {
		t.Fatal(err)
	}
	machine, err := h.ClientCredentialsToken(ctx, machineID, machineSecret, []string{"mcp"}, []string{audience})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []struct {
		name string
		v    bearer.Verifier
	}{{"jwt", jwtV}, {"introspection", introV}} {
		t.Run(v.name, func(t *testing.T) {
			ids := map[string]string{}
			for _, tt := range []struct{ token, sub, client string }{
				{alice, "alice", cfg.ClientID},
				{bob, "bob", cfg.ClientID},
				{machine.AccessToken, machineID, machineID},
			} {
				info, err := v.v.Verify(ctx, tt.token)
				if err != nil {
					t.Fatalf("%s's token: %v", tt.sub, err)
				}
				if info.Issuer != h.Issuer() || info.Subject != tt.sub || info.ClientID != tt.client || !info.HasScopes("mcp") || !slices.Contains(info.Audience, audience) || time.Until(info.Expiry) < time.Minute {
					t.Errorf("%s's token: %+v", tt.sub, info)
				}
				ids[info.CallerID()] = tt.sub
			}
			if len(ids) != 3 {
				t.Errorf("caller ids %v: want three", ids)
			}
			other := token("alice", "http://other.test/mcp")
			if _, err := v.v.Verify(ctx, other); !errors.Is(err, bearer.ErrInvalidToken) || !strings.Contains(err.Error(), "another audience") {
				t.Errorf("alice's token for another audience: %v", err)
			}
			parts := strings.Split(alice, ".")
			tampered := parts[0] + "." + parts[1] + "." + flip(parts[2])
			if _, err := v.v.Verify(ctx, tampered); !errors.Is(err, bearer.ErrInvalidToken) {
				t.Errorf("a tampered token: %v", err)
			}
		})
	}
}
