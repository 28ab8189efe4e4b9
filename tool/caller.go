package tool

import (
	"context"

	"github.com/toolwire/toolwire/internal/ctxkey"
)

// Caller identifies who a call is made for, so that tools and middleware
// can keep state per caller (handles) and refuse what a caller may not do.
//
// The MCP server sets it for each request (see mcp.Server.Caller); an
// in-process host sets it with WithCaller. Tools read it with CallerFrom.
type Caller struct {
	// ID is stable across a caller's calls and differs between callers:
	// "user:…" for the user of a verified OAuth access token (a digest
	// of its issuer and subject: see bearer.Info.CallerID), "session:…"
	// for a legacy MCP session, "token:…" for a 2026-07-28 request
	// carrying credentials the server does not verify (a digest of them,
	// never the credentials), or what the embedding program chose. Empty
	// means anonymous: a caller that cannot be told apart from other
	// anonymous callers.
	ID string
	// Client names the client program: the OAuth client id of a verified
	// token, else the name and version it introduced itself with (MCP
	// clientInfo), which prove nothing; for display and logs.
	Client string
}

// WithCaller returns a context carrying c as the caller of every call made
// with it.
func WithCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, ctxkey.Caller{}, c)
}

// CallerFrom returns the caller ctx carries; ok is false when it carries
// none.
func CallerFrom(ctx context.Context) (c Caller, ok bool) {
	c, ok = ctx.Value(ctxkey.Caller{}).(Caller)
	return c, ok
}
