package oauth

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"golang.org/x/oauth2"
)

// offlineAccess is the scope that asks for a refresh token (OpenID
// Connect), added when the authorization server lists it.
const offlineAccess = "offline_access"

// Login runs the whole authorization now, as toolwire login does: it
// probes the server with an unauthenticated MCP request (which earns a 401
// naming the server's metadata), discovers its authorization server,
// registers the client, authorizes (client credentials, or the
// authorization code flow through Authorize), saves the grant in Store and
// returns it. The grant holds secrets: never print it.
func (c *Config) Login(ctx context.Context) (*Grant, error) {
	cl, err := c.prepare()
	if err != nil {
		return nil, err
	}
	ch, err := cl.probe(ctx)
	if err != nil {
		return nil, err
	}
	d, err := cl.discover(ctx, ch)
	if err != nil {
		return nil, err
	}
	prev, err := cl.store.Load(ctx, cl.resource)
	if errors.Is(err, ErrNoGrant) {
		prev = nil
	} else if err != nil {
		return nil, fmt.Errorf("oauth: reading the stored grant of %s: %w", cl.resource, err)
	}
	g, err := cl.obtain(ctx, d, prev, cl.selectScopes(ch, d, prev))
	if err != nil {
		return nil, err
	}
	if err := cl.store.Save(ctx, g); err != nil {
		return nil, fmt.Errorf("oauth: saving the grant of %s: %w", cl.resource, err)
	}
	return g, nil
}

// probe sends the server an MCP request without credentials and returns
// the challenge of its 401 answer; another answer gives no challenge, and
// discovery then looks at the well-known URLs.
func (c *client) probe(ctx context.Context) (challenge, error) {
	const body = `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.resource, strings.NewReader(body))
	if err != nil {
		return challenge{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := c.http.Do(req)
	if err != nil {
		return challenge{}, fmt.Errorf("oauth: cannot reach %s: %w", c.resource, err)
	}
	drain(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		return challenge{}, nil
	}
	return parseChallenge(resp.Header), nil
}

// selectScopes returns the scopes to ask for (MCP's scope selection
// strategy): the configured ones; else the challenge's; else the
// metadata's scopes_supported; else none. Scopes granted before by the
// same authorization server are kept (the union).
func (c *client) selectScopes(ch challenge, d *discovered, prev *Grant) []string {
	var s []string
	switch {
	case len(c.cfg.Scopes) > 0:
		s = c.cfg.Scopes
	case ch.scopes != nil:
		s = ch.scopes
	default:
		s = d.prm.ScopesSupported
	}
	if prev != nil && prev.Issuer == d.as.Issuer {
		s = union(without(prev.Scopes, offlineAccess), s)
	}
	return s
}

// obtain authorizes anew: with client credentials when configured, else
// with the authorization code flow (registering the client first). prev,
// if not nil, is the grant held before, whose client is reused when it was
// registered at the same authorization server.
func (c *client) obtain(ctx context.Context, d *discovered, prev *Grant, scopes []string) (*Grant, error) {
	as := d.as
	g := &Grant{Resource: c.resource, Issuer: as.Issuer, TokenEndpoint: as.TokenEndpoint, ResourceIndicator: d.audience}
	if cc := c.cfg.ClientCredentials; cc != nil {
		method := authJWT
		if cc.ClientSecret != "" {
			var err error
			if method, err = chooseAuthMethod(c.cfg.TokenEndpointAuthMethod, as.TokenEndpointAuthMethodsSupported, true); err != nil {
				return nil, err
			}
		}
		tok, err := c.clientCredentials(ctx, as.Issuer, as.TokenEndpoint, method, d.audience, scopes)
		if err != nil {
			return nil, err
		}
		if err := checkToken(tok, as.Issuer); err != nil {
			return nil, err
		}
		g.ClientID, g.AuthMethod = cc.ClientID, method
		setTokens(g, tok, scopes)
		return g, nil
	}
	if c.cfg.Authorize == nil {
		return nil, fmt.Errorf("%w: %s needs an interactive login at authorization server %s", ErrLoginRequired, c.resource, as.Issuer)
	}
	reg, err := c.register(ctx, as, prev)
	if err != nil {
		return nil, err
	}
	if len(scopes) > 0 && slices.Contains(as.ScopesSupported, offlineAccess) && !slices.Contains(scopes, offlineAccess) {
		scopes = append(slices.Clip(scopes), offlineAccess)
	}
	tok, err := c.codeFlow(ctx, d, reg, scopes)
	if err != nil {
		return nil, err
	}
	g.ClientID, g.AuthMethod = reg.clientID, reg.method
	if reg.dynamic {
		g.ClientSecret = reg.secret
	}
	setTokens(g, tok, scopes)
	return g, nil
}

// codeFlow runs the authorization code flow with PKCE (S256), state and
// the resource parameter, checks the authorization response (state, iss
// as RFC 9207 says, error) and exchanges the code.
func (c *client) codeFlow(ctx context.Context, d *discovered, reg registration, scopes []string) (*oauth2.Token, error) {
	as := d.as
	if as.AuthorizationEndpoint == "" {
		return nil, fmt.Errorf("oauth: authorization server %s names no authorization_endpoint", as.Issuer)
	}
	if !slices.Contains(as.CodeChallengeMethodsSupported, "S256") {
		return nil, fmt.Errorf("oauth: authorization server %s does not list PKCE S256 in code_challenge_methods_supported: MCP forbids the authorization code flow without it", as.Issuer)
	}
	if c.redirect == nil {
		return nil, errors.New("oauth: no RedirectURL configured: the authorization code flow needs one")
	}
	oc := &oauth2.Config{
		ClientID:    reg.clientID,
		Endpoint:    oauth2.Endpoint{AuthURL: as.AuthorizationEndpoint, TokenURL: as.TokenEndpoint, AuthStyle: authStyle(reg.method)},
		RedirectURL: c.cfg.RedirectURL,
		Scopes:      scopes,
	}
	if reg.method == authBasic || reg.method == authPost {
		oc.ClientSecret = reg.secret
	}
	state, verifier := rand.Text(), oauth2.GenerateVerifier()
	authURL := oc.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("resource", d.audience))
	back, err := c.cfg.Authorize(ctx, authURL)
	if err != nil {
		return nil, fmt.Errorf("oauth: authorizing at %s: %w", as.Issuer, err)
	}
	code, err := authorizationCode(back, c.redirect, state, as.Issuer, as.IssParameterSupported)
	if err != nil {
		return nil, err
	}
	tok, err := oc.Exchange(c.tokenContext(ctx, d.audience), code, oauth2.VerifierOption(verifier))
	if err != nil {
		return nil, wrapTokenError("authorization code exchange", err)
	}
	if err := checkToken(tok, as.Issuer); err != nil {
		return nil, err
	}
	return tok, nil
}

// authorizationCode checks the URL the authorization server redirected
// back to and returns its code. It must come back to the redirect URI,
// carry the state sent, and, per RFC 9207 as MCP applies it, an iss equal
// to the issuer (simple string comparison) when present, and one at all
// when the server advertises it; only then is an error response believed.
func authorizationCode(back, redirect *url.URL, state, issuer string, issRequired bool) (string, error) {
	if back == nil {
		return "", errors.New("oauth: the login returned no redirect")
	}
	if back.Host != "" && (!strings.EqualFold(back.Scheme, redirect.Scheme) || !strings.EqualFold(back.Host, redirect.Host)) || back.Path != redirect.Path {
		return "", fmt.Errorf("oauth: the authorization response came to %s, not to the redirect URI %s", (&url.URL{Scheme: back.Scheme, Host: back.Host, Path: back.Path}).String(), redirect.String())
	}
	q := back.Query()
	if got := q["state"]; len(got) != 1 || got[0] != state {
		return "", errors.New("oauth: the authorization response does not carry this login's state: it answers another request (or a forged one): log in again")
	}
	if iss, ok := q["iss"]; ok {
		if len(iss) != 1 || iss[0] != issuer {
			return "", fmt.Errorf("oauth: the authorization response comes from issuer %q, not %q that was asked (RFC 9207): refusing it, a mix-up attack is possible", bound(strings.Join(iss, ","), 200), issuer)
		}
	} else if issRequired {
		return "", fmt.Errorf("oauth: the authorization response has no iss, though authorization server %s says it sends one (RFC 9207): refusing it", issuer)
	}
	if e := q.Get("error"); e != "" {
		return "", fmt.Errorf("oauth: the authorization server refused the authorization: %s", describeError(e, q.Get("error_description")))
	}
	code := q.Get("code")
	if code == "" {
		return "", errors.New("oauth: the authorization response has no code")
	}
	return code, nil
}

// union returns the scopes of a, then those of b not in a.
func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// without returns scopes without s.
func without(scopes []string, s string) []string {
	return slices.DeleteFunc(slices.Clone(scopes), func(x string) bool { return x == s })
}
