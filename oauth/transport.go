package oauth

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// refreshSkew is how long before its expiry an access token is refreshed.
const refreshSkew = 30 * time.Second

// Transport returns an http.RoundTripper that authorizes the requests to
// the Resource's origin (and leaves requests to other origins alone)
// through base (nil means http.DefaultTransport). It adds the grant's access token to each
// request, refreshes it shortly before it expires, and answers the
// server's challenges:
//
//   - a 401 refreshes the token, or runs the whole authorization
//     (discovery, registration, authorization, as Login does) when it
//     cannot, or when the server now names another authorization server;
//   - a 403 with error="insufficient_scope" asks again for the scopes held
//     and those the challenge names (step-up), once per request and once
//     per set of scopes over the transport's life: a server that keeps
//     refusing gets its 403 passed on.
//
// Each new grant is saved in Store, and the request is sent again (its
// body through GetBody). A configuration error, or an authorization that
// fails, is returned as the request's error; with Authorize nil, one that
// would need a login wraps ErrLoginRequired.
//
// The authorization runs within the request's context, whose deadline
// bounds the login too: mcp.Client's first request, the server/discover
// probe, has one (mcp.DefaultProbeTimeout), too short for a user to log
// in. Raise mcp.Client.ProbeTimeout, or call Login before connecting.
func (c *Config) Transport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	cl, err := c.prepare()
	return &transport{c: cl, err: err, base: base, stepUps: map[string]bool{}}
}

// transport is the RoundTripper of Config.Transport.
type transport struct {
	c    *client
	err  error // the Config's error, returned by every request
	base http.RoundTripper

	// mu serializes loading, refreshing and authorizing: one
	// authorization at a time, whose grant the waiting requests use.
	mu      sync.Mutex
	loaded  bool
	grant   *Grant          // nil: none yet
	stepUps map[string]bool // the scope sets a step-up asked for
}

// RoundTrip implements http.RoundTripper.
func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.err != nil {
		closeBody(req)
		return nil, t.err
	}
	if !t.c.covers(req.URL) {
		return t.base.RoundTrip(req)
	}
	ctx := req.Context()
	tok, err := t.current(ctx)
	if err != nil {
		closeBody(req)
		return nil, err
	}
	resp, err := t.send(req, tok, false)
	if err != nil {
		return nil, err
	}
	var authorized, steppedUp bool
	for {
		var next string
		switch {
		case resp.StatusCode == http.StatusUnauthorized && !authorized:
			authorized = true
			ch := parseChallenge(resp.Header)
			discard(resp)
			if next, err = t.reauthorize(ctx, tok, ch); err != nil {
				return nil, err
			}
		case resp.StatusCode == http.StatusForbidden && !steppedUp:
			ch := parseChallenge(resp.Header)
			if ch.err != "insufficient_scope" {
				return resp, nil
			}
			steppedUp = true
			keep(resp)
			var ok bool
			if next, ok, err = t.stepUp(ctx, tok, ch); err != nil {
				return nil, err
			} else if !ok {
				return resp, nil
			}
		default:
			return resp, nil
		}
		if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
			return nil, errors.New("oauth: authorized, but the request's body cannot be sent again (it has no GetBody): send the request again")
		}
		tok = next
		if resp, err = t.send(req, tok, true); err != nil {
			return nil, err
		}
	}
}

// send sends req with the access token tok (none if empty); again is set
// when req was sent before, so that its body comes from GetBody.
func (t *transport) send(req *http.Request, tok string, again bool) (*http.Response, error) {
	r := req.Clone(req.Context())
	if again && req.GetBody != nil {
		body, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		r.Body = body
	}
	if tok != "" {
		r.Header.Set("Authorization", "Bearer "+tok)
	}
	return t.base.RoundTrip(r)
}

// current returns the access token to send: the grant's, refreshed first
// when it expires within refreshSkew; "" before any grant. A refresh that
// fails leaves the old token (a 401 then starts a new authorization); a
// refresh token the server no longer accepts is dropped, and so is a
// client it no longer knows (see refused).
func (t *transport) current(ctx context.Context) (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	g, err := t.load(ctx)
	if err != nil || g == nil {
		return "", err
	}
	if g.AccessToken != "" && (g.Expiry.IsZero() || time.Until(g.Expiry) > refreshSkew) {
		return g.AccessToken, nil
	}
	ng, err := t.c.refresh(ctx, g)
	if err == nil {
		return ng.AccessToken, t.save(ctx, ng)
	}
	if dead := refused(g, err); dead != nil {
		return "", t.save(ctx, dead)
	}
	return g.AccessToken, nil
}

// reauthorize answers a 401 to a request sent with the token failed: it
// returns the token to send instead. That is a token obtained meanwhile
// (by another request, or another process through the Store), else a
// refreshed one, else one from a new authorization. A grant from another
// authorization server than the one the server names now is not refreshed
// and its client not reused; nor is a client whose refresh the server
// refuses as unknown (see refused).
func (t *transport) reauthorize(ctx context.Context, failed string, ch challenge) (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	g, err := t.load(ctx)
	if err != nil {
		return "", err
	}
	if tok := t.newer(ctx, g, failed); tok != "" {
		return tok, nil
	}
	d, err := t.c.discover(ctx, ch)
	if err != nil {
		return "", err
	}
	if g != nil && g.Issuer == d.as.Issuer && g.RefreshToken != "" {
		ng, err := t.c.refresh(ctx, g)
		if err == nil {
			return ng.AccessToken, t.save(ctx, ng)
		}
		if dead := refused(g, err); dead != nil {
			if err := t.save(ctx, dead); err != nil {
				return "", err
			}
			g = dead
		}
	}
	ng, err := t.c.obtain(ctx, d, g, t.c.selectScopes(ch, d, g))
	if err != nil {
		return "", err
	}
	return ng.AccessToken, t.save(ctx, ng)
}

// stepUp answers a 403 insufficient_scope to a request sent with the
// token failed: it authorizes again for the scopes held and those the
// challenge names, and returns the new token. It reports false, to pass
// the 403 on, when the challenge names no scope, when the grant already
// holds them all (asking again would bring the same refusal), or when
// these scopes were asked for once already.
func (t *transport) stepUp(ctx context.Context, failed string, ch challenge) (string, bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	g, err := t.load(ctx)
	if err != nil {
		return "", false, err
	}
	if tok := t.newer(ctx, g, failed); tok != "" {
		return tok, true, nil
	}
	if len(ch.scopes) == 0 {
		return "", false, nil
	}
	var held []string
	if g != nil {
		held = g.Scopes
	}
	want := union(without(held, offlineAccess), ch.scopes)
	if !slices.ContainsFunc(want, func(s string) bool { return !slices.Contains(held, s) }) {
		return "", false, nil
	}
	key := strings.Join(slices.Sorted(slices.Values(want)), " ")
	if t.stepUps[key] {
		return "", false, nil
	}
	t.stepUps[key] = true
	d, err := t.c.discover(ctx, ch)
	if err != nil {
		return "", false, err
	}
	ng, err := t.c.obtain(ctx, d, g, want)
	if err != nil {
		return "", false, err
	}
	return ng.AccessToken, true, t.save(ctx, ng)
}

// newer returns the access token obtained since the request sent with
// failed: by another request (the grant g now holds), or by another
// process (the Store holds), which then becomes the grant. It returns ""
// when there is none. t.mu must be held.
func (t *transport) newer(ctx context.Context, g *Grant, failed string) string {
	if g != nil && g.AccessToken != "" && g.AccessToken != failed {
		return g.AccessToken
	}
	if stored, err := t.c.store.Load(ctx, t.c.resource); err == nil && stored.AccessToken != "" && stored.AccessToken != failed {
		t.grant = stored
		return stored.AccessToken
	}
	return ""
}

// load returns the grant, read from the Store the first time; nil when
// there is none.
func (t *transport) load(ctx context.Context) (*Grant, error) {
	if t.loaded {
		return t.grant, nil
	}
	g, err := t.c.store.Load(ctx, t.c.resource)
	if errors.Is(err, ErrNoGrant) {
		g, err = nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("oauth: reading the stored grant of %s: %w", t.c.resource, err)
	}
	t.grant, t.loaded = g, true
	return g, nil
}

// save makes g the grant and stores it. When the Store fails, g stays the
// transport's grant (the request may be sent again) and the error is
// returned.
func (t *transport) save(ctx context.Context, g *Grant) error {
	t.grant, t.loaded = g, true
	if err := t.c.store.Save(ctx, g); err != nil {
		return fmt.Errorf("oauth: saving the grant of %s: %w", t.c.resource, err)
	}
	return nil
}

// discard drains and closes a response that will not be returned.
func discard(resp *http.Response) {
	drain(resp.Body)
	resp.Body.Close()
}

// keep reads a response's body into memory, at most maxErrorBytes of it
// (a longer one is cut), and closes the connection's, so that the
// response can still be returned after an authorization.
func keep(resp *http.Response) {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBytes))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(b))
}

// closeBody closes a request's body that will not be sent.
func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}
