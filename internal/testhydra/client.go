package testhydra

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// Client is an OAuth client to register at Hydra. Empty fields take
// Hydra's defaults.
type Client struct {
	// ID is the client_id; Hydra makes one up when it is empty.
	ID string
	// Secret is the client secret; Hydra makes one up when it is empty,
	// unless TokenEndpointAuthMethod is "none" (a public client).
	Secret string
	// GrantTypes are the grants the client may use (default:
	// authorization_code); a refresh token needs "refresh_token" here and
	// the offline_access scope.
	GrantTypes []string
	// ResponseTypes default to "code".
	ResponseTypes []string
	// RedirectURIs are the client's redirect URIs. Hydra matches a
	// loopback one (http://127.0.0.1/path, http://[::1]/path) on any port
	// (RFC 8252), but not http://localhost.
	RedirectURIs []string
	// Scopes are the scopes the client may ask for.
	Scopes []string
	// Audience are the audiences the client may ask for with Hydra's
	// audience parameter (the consent application grants the resource
	// parameter's URL whatever this says).
	Audience []string
	// TokenEndpointAuthMethod is client_secret_basic (the default),
	// client_secret_post or none.
	TokenEndpointAuthMethod string
	// AccessTokenLifespan, when not zero, is how long the access tokens
	// of the client's authorization code and refresh grants live,
	// instead of the server's AccessTokenTTL: a test gets an expired
	// token from one client while the others' live on.
	AccessTokenLifespan time.Duration
}

// CreateClient registers a client through Hydra's admin API and returns
// its id and secret ("" for a public client).
func (s *Server) CreateClient(ctx context.Context, c Client) (id, secret string, err error) {
	body := map[string]any{}
	set := func(k string, v any, present bool) {
		if present {
			body[k] = v
		}
	}
	set("client_id", c.ID, c.ID != "")
	set("client_secret", c.Secret, c.Secret != "")
	set("grant_types", c.GrantTypes, c.GrantTypes != nil)
	set("response_types", c.ResponseTypes, c.ResponseTypes != nil)
	set("redirect_uris", c.RedirectURIs, c.RedirectURIs != nil)
	set("scope", strings.Join(c.Scopes, " "), c.Scopes != nil)
	set("audience", c.Audience, c.Audience != nil)
	set("token_endpoint_auth_method", c.TokenEndpointAuthMethod, c.TokenEndpointAuthMethod != "")
	for _, grant := range []string{"authorization_code_grant", "refresh_token_grant"} {
		set(grant+"_access_token_lifespan", c.AccessTokenLifespan.String(), c.AccessTokenLifespan != 0)
	}
	var created struct {
		ID     string `json:"client_id"`
		Secret string `json:"client_secret"`
	}
	if err := s.doJSON(ctx, http.MethodPost, s.adminURL+"/admin/clients", body, &created); err != nil {
		return "", "", fmt.Errorf("registering a client at hydra: %w", err)
	}
	return created.ID, created.Secret, nil
}

// DeleteClient removes a client through Hydra's admin API: its tokens
// are refused from then on (at the token endpoint; a JWT access token
// stays valid for a resource server until it expires).
func (s *Server) DeleteClient(ctx context.Context, id string) error {
	if err := s.doJSON(ctx, http.MethodDelete, s.adminURL+"/admin/clients/"+url.PathEscape(id), nil, nil); err != nil {
		return fmt.Errorf("deleting client %s at hydra: %w", id, err)
	}
	return nil
}

// RevokeConsent revokes, through Hydra's admin API, what subject
// consented to for every client, and with it the refresh tokens (and
// access tokens) issued under that consent: a refresh is then refused
// with invalid_grant. A JWT access token stays valid for a resource
// server until it expires.
func (s *Server) RevokeConsent(ctx context.Context, subject string) error {
	u := s.adminURL + "/admin/oauth2/auth/sessions/consent?all=true&subject=" + url.QueryEscape(subject)
	if err := s.doJSON(ctx, http.MethodDelete, u, nil, nil); err != nil {
		return fmt.Errorf("revoking the consent of %s at hydra: %w", subject, err)
	}
	return nil
}

// Endpoint returns Hydra's authorization and token endpoints, for a
// client authenticating with client_secret_basic (set AuthStyle to
// oauth2.AuthStyleInParams for client_secret_post).
func (s *Server) Endpoint() oauth2.Endpoint {
	return oauth2.Endpoint{
		AuthURL:   s.publicURL + "/oauth2/auth",
		TokenURL:  s.publicURL + "/oauth2/token",
		AuthStyle: oauth2.AuthStyleInHeader,
	}
}

// ClientCredentialsToken obtains a token with the client credentials
// grant (client_secret_basic). Hydra grants each audience only if the
// client was registered with it; its sub is the client id.
func (s *Server) ClientCredentialsToken(ctx context.Context, id, secret string, scopes, audience []string) (*oauth2.Token, error) {
	cfg := clientcredentials.Config{
		ClientID: id, ClientSecret: secret, TokenURL: s.Endpoint().TokenURL,
		Scopes: scopes, AuthStyle: oauth2.AuthStyleInHeader,
	}
	if len(audience) > 0 {
		cfg.EndpointParams = url.Values{"audience": audience}
	}
	return cfg.Token(ctx)
}

// UserToken runs the authorization code flow with PKCE (S256) for cfg's
// client (cfg.RedirectURL one of its redirect URIs; cfg.Endpoint defaults
// to Hydra's): it logs subject in (when not empty, else SetSubject's),
// asks for resource (RFC 8707) when not empty, consents as SetConsent
// says, and exchanges the code.
func (s *Server) UserToken(ctx context.Context, cfg *oauth2.Config, subject, resource string) (*oauth2.Token, error) {
	c := *cfg
	if c.Endpoint.AuthURL == "" {
		c.Endpoint = s.Endpoint()
	}
	verifier := oauth2.GenerateVerifier()
	// Hydra wants a state of 8 characters or more; checking it on the way
	// back is the client's job, not this helper's.
	state := rand.Text()
	opts := []oauth2.AuthCodeOption{oauth2.S256ChallengeOption(verifier)}
	var extra []oauth2.AuthCodeOption
	if resource != "" {
		extra = append(extra, oauth2.SetAuthURLParam("resource", resource))
	}
	if subject != "" {
		opts = append(opts, oauth2.SetAuthURLParam("login_hint", subject))
	}
	back, err := s.Browse(ctx, c.AuthCodeURL(state, append(opts, extra...)...))
	if err != nil {
		return nil, err
	}
	if q := back.Query(); q.Get("error") != "" {
		return nil, fmt.Errorf("the authorization was refused: %s: %s", q.Get("error"), q.Get("error_description"))
	}
	return c.Exchange(ctx, back.Query().Get("code"), append(extra, oauth2.VerifierOption(verifier))...)
}

// browseTimeout bounds Browse when its context has no deadline (the flow
// takes a tenth of a second on an idle machine, seconds on a loaded one).
const browseTimeout = time.Minute

// Browse plays the user agent: it follows the redirects from authURL
// through Hydra and its login and consent application, with a cookie jar
// of its own, and returns the URL Hydra finally redirects to (the
// client's redirect URI, with code and state or error), without fetching
// it. It fails when Hydra answers with an error page instead.
func (s *Server) Browse(ctx context.Context, authURL string) (*url.URL, error) {
	u, err := url.Parse(authURL)
	if err != nil {
		return nil, fmt.Errorf("the authorization URL does not parse: %w", err)
	}
	if !s.flowHost(u) {
		return nil, fmt.Errorf("the authorization URL %s is not hydra's (%s)", u.Redacted(), s.publicURL)
	}
	jar, err := cookiejar.New(nil)
	if err != nil {
		return nil, err
	}
	// The whole flow (six requests) within ctx's deadline, else within
	// browseTimeout: that bounds a redirect loop too.
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, browseTimeout)
		defer cancel()
	}
	agent := &http.Client{
		Jar: jar,
		// A connection per request: net/http sends a GET again when a
		// reused connection closes under it, and a consent verifier
		// sent twice is refused ("already been used"; seen under load).
		Transport: &http.Transport{DisableKeepAlives: true},
		CheckRedirect: func(req *http.Request, _ []*http.Request) error {
			if !s.flowHost(req.URL) {
				return http.ErrUseLastResponse
			}
			return nil
		},
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := agent.Do(req)
	if err != nil {
		return nil, fmt.Errorf("browsing the authorization flow: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	loc, err := resp.Location()
	if resp.StatusCode/100 != 3 || err != nil {
		// Without the query: it may hold a code.
		at := resp.Request.URL
		return nil, fmt.Errorf("the authorization flow stopped at %s://%s%s with %s: %s",
			at.Scheme, at.Host, at.Path, resp.Status, strings.TrimSpace(string(body)))
	}
	return loc, nil
}

// Visit browses like Browse, then fetches the URL Hydra redirects to, as
// a browser does: for a client whose loopback listener waits there (like
// a command-line login). It returns that URL, and fails if it is not a
// loopback one or its answer is an error status.
func (s *Server) Visit(ctx context.Context, authURL string) (*url.URL, error) {
	back, err := s.Browse(ctx, authURL)
	if err != nil {
		return nil, err
	}
	if !loopback(back) {
		return nil, fmt.Errorf("the authorization flow redirects to %s://%s%s, which is no loopback redirect URI: not fetched", back.Scheme, back.Host, back.Path)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, back.String(), nil)
	if err != nil {
		return nil, err
	}
	resp, err := s.http.Do(req)
	if err != nil {
		// Without the URL, which holds the code.
		if ue := (*url.Error)(nil); errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("delivering the authorization response to the redirect URI %s://%s%s: %w", back.Scheme, back.Host, back.Path, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode >= 400 {
		return nil, fmt.Errorf("the redirect URI answered %s: %s", resp.Status, strings.TrimSpace(string(body)))
	}
	return back, nil
}

// loopback reports whether u is a loopback redirect URI (RFC 8252): http
// to a loopback address or localhost.
func loopback(u *url.URL) bool {
	ip := net.ParseIP(u.Hostname())
	return u.Scheme == "http" && (ip != nil && ip.IsLoopback() || u.Hostname() == "localhost")
}

// flowHost reports whether u is Hydra's public endpoint or the login and
// consent application: where the user agent follows redirects.
func (s *Server) flowHost(u *url.URL) bool {
	return u.Scheme+"://"+u.Host == s.publicURL || u.Scheme+"://"+u.Host == s.app.URL
}

// Claims decodes a JWT's payload WITHOUT verifying it, for tests to look
// at the claims of a token Hydra issued (verifying is the resource
// server's job).
func Claims(jwt string) (map[string]any, error) {
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		return nil, fmt.Errorf("a JWT has 3 dot-separated parts, this has %d", len(parts))
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return nil, fmt.Errorf("the JWT's payload is not base64url: %w", err)
	}
	var claims map[string]any
	if err := json.Unmarshal(payload, &claims); err != nil {
		return nil, fmt.Errorf("the JWT's payload is not a JSON object: %w", err)
	}
	return claims, nil
}
