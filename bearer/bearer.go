// Package bearer is the resource-server side of MCP authorization: it
// verifies the OAuth 2.1 access tokens that clients send as
// "Authorization: Bearer …", so that an MCP server over HTTP knows who
// calls it.
//
// A Verifier checks one token and says whose it is (Info). Two are built
// in: JWT verifies JWT access tokens (RFC 9068) against the keys the
// authorization server publishes (found through its metadata, RFC 8414 or
// OpenID Connect discovery), checking issuer, audience (the MCP server's
// canonical URL, RFC 8707), expiry and not-before; Introspection asks the
// authorization server about opaque tokens (RFC 7662).
//
// Auth puts a Verifier in front of HTTP handlers: its Require middleware
// refuses a request without a valid token with 401 and a
// WWW-Authenticate challenge that points the client to the Protected
// Resource Metadata (RFC 9728, served by Metadata), and a token without
// the scopes a request needs with 403 insufficient_scope. The verified
// user becomes the caller (tool.CallerFrom), so that what is kept per
// caller, such as handles, follows the user across sessions, protocol
// eras and replicas; tools read the token's details with InfoFrom.
//
// mcp.HTTPConfig.Auth wires an Auth into the HTTP endpoints of an MCP
// server (toolwire serve --auth-issuer …).
package bearer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"slices"
	"time"
)

// Verifier verifies an access token and tells whose it is.
type Verifier interface {
	// Verify returns what the token says once it is verified: signed (or
	// vouched for) by the authorization server, for this resource, and
	// valid now. Its error wraps ErrInvalidToken when the token is not
	// acceptable, ErrUnavailable when it cannot be checked now (the
	// authorization server or its keys cannot be reached). The error
	// never contains the token.
	Verify(ctx context.Context, token string) (*Info, error)
}

// Errors a Verifier returns, told apart with errors.Is.
var (
	// ErrInvalidToken: the token is malformed, forged, expired, not yet
	// valid, or for another issuer or audience (401 invalid_token).
	ErrInvalidToken = errors.New("invalid token")
	// ErrUnavailable: the token cannot be checked now, because the
	// authorization server or its keys are out of reach (503).
	ErrUnavailable = errors.New("token verification unavailable")
)

// Info is what a verified access token says.
type Info struct {
	// Issuer is the authorization server that issued the token.
	Issuer string
	// Subject is the user (or, for a client acting on its own behalf,
	// the client) the token was issued for, as the issuer names it.
	Subject string
	// ClientID is the OAuth client the token was issued to, when the
	// token says.
	ClientID string
	// Scopes are the scopes granted.
	Scopes []string
	// Audience are the resources the token is for; they include this
	// server's canonical URL.
	Audience []string
	// Expiry is when the token expires.
	Expiry time.Time
	// Claims are the token's claims as verified (a JWT's payload, or the
	// introspection response), for claims this struct does not carry.
	Claims json.RawMessage

	// callerID is CallerID, computed once by the verifier that made the
	// Info (the Info is then shared by the requests of the token).
	callerID string
}

// HasScopes reports whether the token grants every one of scopes.
func (i *Info) HasScopes(scopes ...string) bool {
	for _, s := range scopes {
		if !slices.Contains(i.Scopes, s) {
			return false
		}
	}
	return true
}

// CallerID is the caller the token's user is (tool.Caller's ID): "user:"
// and the first 128 bits, in hex, of the SHA-256 of the issuer and the
// subject. It is the same for every token of that user from that issuer,
// whichever client, session or replica, and differs between users.
func (i *Info) CallerID() string {
	if i.callerID != "" {
		return i.callerID
	}
	h := sha256.New()
	h.Write([]byte(i.Issuer))
	h.Write([]byte{0})
	h.Write([]byte(i.Subject))
	return "user:" + hex.EncodeToString(h.Sum(nil)[:16])
}

type infoKey struct{}

// withInfo returns ctx carrying info.
func withInfo(ctx context.Context, info *Info) context.Context {
	return context.WithValue(ctx, infoKey{}, info)
}

// InfoFrom returns the verified token of the request ctx belongs to (set
// by Auth's middleware); ok is false when there is none. The Info is
// shared: do not modify it.
func InfoFrom(ctx context.Context) (info *Info, ok bool) {
	info, ok = ctx.Value(infoKey{}).(*Info)
	return info, ok
}
