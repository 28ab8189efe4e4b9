// Package oauth is the client side of MCP authorization: it finds a
// server's authorization server (Protected Resource Metadata, RFC 9728;
// authorization server metadata, RFC 8414 and OpenID discovery), registers
// a client, obtains tokens (authorization code with PKCE, or client
// credentials), keeps them in a Store, and attaches them to requests as an
// http.RoundTripper.
package oauth

import (
	"context"
	"errors"
	"sync"
	"time"
)

// ErrNoGrant reports that a Store holds no grant for a resource.
var ErrNoGrant = errors.New("oauth: no stored grant for this server")

// Grant is what an authorization leaves for one protected resource: the
// client that was registered or configured for it at its authorization
// server, and the tokens issued. It holds secrets: never print or log it.
type Grant struct {
	// Resource is the canonical URL of the MCP server (RFC 8707).
	Resource string `json:"resource"`
	// Issuer is the authorization server's issuer identifier.
	Issuer string `json:"issuer"`
	// ClientID and ClientSecret identify the client at Issuer (registered
	// dynamically, or configured); ClientSecret is empty for public
	// clients.
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret,omitempty"`
	// AccessToken, RefreshToken, TokenType and Expiry are the token
	// response's; a zero Expiry means unknown.
	AccessToken  string    `json:"access_token"`
	RefreshToken string    `json:"refresh_token,omitempty"`
	TokenType    string    `json:"token_type,omitempty"`
	Expiry       time.Time `json:"expiry,omitempty"`
	// Scopes are the scopes granted (or asked for, when the token
	// response named none).
	Scopes []string `json:"scopes,omitempty"`
	// Subject names the user the tokens were issued to, when known (an ID
	// token's sub, or what the authorization server said), for display.
	Subject string `json:"subject,omitempty"`
	// TokenEndpoint and AuthMethod (the token endpoint auth method:
	// client_secret_basic, client_secret_post, none or private_key_jwt)
	// say where and how the tokens are refreshed.
	TokenEndpoint string `json:"token_endpoint,omitempty"`
	AuthMethod    string `json:"token_endpoint_auth_method,omitempty"`
	// ResourceIndicator is the resource the tokens were asked for (RFC
	// 8707): the one the server's metadata names, Resource or a URL above
	// it; empty means Resource.
	ResourceIndicator string `json:"resource_indicator,omitempty"`
}

// Store keeps grants, one per resource. Implementations must be safe for
// concurrent use and must keep secrets out of errors.
type Store interface {
	// Load returns the grant stored for resource, or an error wrapping
	// ErrNoGrant.
	Load(ctx context.Context, resource string) (*Grant, error)
	// Save stores g under g.Resource, replacing any grant stored there.
	Save(ctx context.Context, g *Grant) error
	// Delete removes the grant stored for resource; deleting a grant that
	// is not there is not an error.
	Delete(ctx context.Context, resource string) error
}

// MemoryStore is a Store in memory, for programs that keep no tokens
// between runs, and for tests. The zero value is ready to use.
type MemoryStore struct {
	mu     sync.Mutex
	grants map[string]Grant
}

// Load implements Store.
func (s *MemoryStore) Load(_ context.Context, resource string) (*Grant, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.grants[resource]
	if !ok {
		return nil, ErrNoGrant
	}
	g.Scopes = append([]string(nil), g.Scopes...)
	return &g, nil
}

// Save implements Store.
func (s *MemoryStore) Save(_ context.Context, g *Grant) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.grants == nil {
		s.grants = make(map[string]Grant)
	}
	c := *g
	c.Scopes = append([]string(nil), g.Scopes...)
	s.grants[g.Resource] = c
	return nil
}

// Delete implements Store.
func (s *MemoryStore) Delete(_ context.Context, resource string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.grants, resource)
	return nil
}
