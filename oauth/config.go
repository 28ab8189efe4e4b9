package oauth

import (
	"context"
	"crypto"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// ErrLoginRequired reports that a server needs an interactive login (the
// authorization code flow) and the Config has no Authorize function: run
// the login (toolwire login SERVER, or Config.Login with Authorize set),
// then try again.
var ErrLoginRequired = errors.New("oauth: the server requires a login")

// Config says how a client authorizes to one MCP server. Its fields are
// read when Transport or Login is called; don't change them afterwards.
type Config struct {
	// Resource is the MCP server's URL, e.g. https://mcp.example.com/mcp.
	// It is canonicalized (CanonicalResource) and keys the grant in
	// Store. It must be https, or http to a loopback host: tokens never
	// travel in clear text.
	Resource string
	// Store keeps the grant between requests and runs; nil means a fresh
	// MemoryStore.
	Store Store
	// HTTPClient sends the metadata, registration and token requests; nil
	// means http.DefaultClient. Every response body read is bounded.
	HTTPClient *http.Client

	// ClientID and ClientSecret are a client registered beforehand with
	// the server's authorization server (pre-registration). When set they
	// are used, else ClientMetadataURL where the authorization server
	// supports Client ID Metadata Documents, else Dynamic Client
	// Registration.
	ClientID, ClientSecret string
	// TokenEndpointAuthMethod is how the client authenticates to the token
	// endpoint: "client_secret_basic", "client_secret_post" or "none";
	// empty chooses from the authorization server's metadata.
	TokenEndpointAuthMethod string
	// ClientMetadataURL is the https URL (with a path) of this client's
	// Client ID Metadata Document, used as its client id where the
	// authorization server supports it.
	ClientMetadataURL string
	// ClientName names the client in a Dynamic Client Registration
	// (default "toolwire").
	ClientName string
	// Scopes, when set, are the scopes asked for instead of those the
	// server names (WWW-Authenticate's scope, else its metadata's
	// scopes_supported).
	Scopes []string
	// RedirectURL is the redirect URI of the authorization code flow:
	// http to a loopback host (127.0.0.1, [::1] or localhost), or https.
	RedirectURL string
	// Authorize sends the user agent to authURL and returns the URL the
	// authorization server redirected it back to (with code and state, or
	// error). Nil means no interactive login: a request that would need
	// one fails with an error wrapping ErrLoginRequired.
	Authorize func(ctx context.Context, authURL string) (*url.URL, error)
	// ClientCredentials, when set, authorizes as the client itself, with
	// no user (the io.modelcontextprotocol/oauth-client-credentials
	// extension); the fields above about the authorization code flow are
	// then unused.
	ClientCredentials *ClientCredentials
}

// ClientCredentials is a client of the client credentials grant: a
// ClientID with either a ClientSecret or a private key that signs a JWT
// assertion (private_key_jwt, RFC 7523).
type ClientCredentials struct {
	// ClientID is the client's id at the authorization server.
	ClientID string
	// ClientSecret authenticates with client_secret_basic or
	// client_secret_post (Config.TokenEndpointAuthMethod, else the
	// metadata's choice).
	ClientSecret string
	// PrivateKey (an *ecdsa.PrivateKey, *rsa.PrivateKey or
	// ed25519.PrivateKey) or PrivateKeyPEM (the same in PEM: PKCS #8, EC
	// or PKCS #1) signs the assertion instead.
	PrivateKey    crypto.Signer
	PrivateKeyPEM string
	// KeyID, if set, is the assertion's kid header.
	KeyID string
	// Alg is the assertion's signature algorithm (e.g. ES256, RS256,
	// EdDSA); empty chooses from the key.
	Alg string
}

// client is a Config checked and completed, shared by a Transport and
// Login.
type client struct {
	cfg      Config
	resource string   // canonical
	resURL   *url.URL // resource, parsed
	redirect *url.URL // RedirectURL, parsed; nil when unset
	store    Store
	http     *http.Client
}

// Token endpoint authentication methods.
const (
	authBasic = "client_secret_basic"
	authPost  = "client_secret_post"
	authNone  = "none"
	authJWT   = "private_key_jwt"
)

// prepare checks the Config and returns the client it describes.
func (c *Config) prepare() (*client, error) {
	res, err := CanonicalResource(c.Resource)
	if err != nil {
		return nil, fmt.Errorf("oauth: Resource: %w", err)
	}
	ru, _ := url.Parse(res)
	if !isSecure(ru) {
		return nil, fmt.Errorf("oauth: refusing to send tokens to %s: use https (http only to a loopback host)", res)
	}
	cl := &client{cfg: *c, resource: res, resURL: ru, store: c.Store, http: c.HTTPClient}
	cl.cfg.Scopes = append([]string(nil), c.Scopes...)
	if cl.store == nil {
		cl.store = &MemoryStore{}
	}
	if cl.http == nil {
		cl.http = http.DefaultClient
	}
	for _, s := range c.Scopes {
		if !validScope(s) {
			return nil, fmt.Errorf("oauth: Scopes: %q is not a valid scope (printable ASCII, no space, quote or backslash)", s)
		}
	}
	switch c.TokenEndpointAuthMethod {
	case "", authBasic, authPost, authNone:
	default:
		return nil, fmt.Errorf("oauth: TokenEndpointAuthMethod %q: want client_secret_basic, client_secret_post or none", c.TokenEndpointAuthMethod)
	}
	if c.RedirectURL != "" {
		u, err := url.Parse(c.RedirectURL)
		if err != nil || u.Host == "" || u.Fragment != "" {
			return nil, fmt.Errorf("oauth: RedirectURL %q is not an absolute URL without fragment", c.RedirectURL)
		}
		if u.Scheme != "https" && !(u.Scheme == "http" && isLoopback(u.Hostname())) {
			return nil, fmt.Errorf("oauth: RedirectURL %s is neither https nor http to a loopback host (127.0.0.1, [::1], localhost): the authorization code would travel in clear text", c.RedirectURL)
		}
		cl.redirect = u
	}
	if c.ClientMetadataURL != "" {
		u, err := url.Parse(c.ClientMetadataURL)
		if err != nil || u.Scheme != "https" || u.Host == "" || u.Path == "" || u.Path == "/" || u.Fragment != "" {
			return nil, fmt.Errorf("oauth: ClientMetadataURL %q must be an https URL with a path (a Client ID Metadata Document)", c.ClientMetadataURL)
		}
	}
	if cc := c.ClientCredentials; cc != nil {
		if cc.ClientID == "" {
			return nil, errors.New("oauth: ClientCredentials.ClientID is empty")
		}
		keyed := cc.PrivateKey != nil || cc.PrivateKeyPEM != ""
		if keyed == (cc.ClientSecret != "") {
			return nil, errors.New("oauth: ClientCredentials needs exactly one of ClientSecret and PrivateKey (or PrivateKeyPEM)")
		}
		if keyed {
			// Sign once now, so that a key that cannot sign with Alg
			// fails here rather than at the first 401.
			if _, err := cc.assertion("https://audience.invalid", time.Now()); err != nil {
				return nil, err
			}
		}
	}
	return cl, nil
}

// CanonicalResource returns the canonical form of an MCP server's URL
// (the resource of RFC 8707 and RFC 9728): scheme and host in lower case,
// no default port, no trailing slash, no fragment. It is the key of the
// server's grant in a Store.
func CanonicalResource(raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return "", fmt.Errorf("%q is not a URL: %w", raw, err)
	}
	u.Scheme = strings.ToLower(u.Scheme)
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return "", fmt.Errorf("%q: want an absolute http:// or https:// URL", raw)
	}
	if u.User != nil {
		return "", fmt.Errorf("%q: a server URL must not carry credentials", raw)
	}
	if u.Fragment != "" || strings.HasSuffix(u.Opaque, "#") {
		return "", fmt.Errorf("%q: a resource must not have a fragment (RFC 8707)", raw)
	}
	u.Host = canonicalHost(u)
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	u.ForceQuery = false
	return u.String(), nil
}

// canonicalHost returns u's host in lower case, without the scheme's
// default port.
func canonicalHost(u *url.URL) string {
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if port == "" || u.Scheme == "https" && port == "443" || u.Scheme == "http" && port == "80" {
		if strings.Contains(host, ":") {
			return "[" + host + "]"
		}
		return host
	}
	return net.JoinHostPort(host, port)
}

// origin returns u's scheme and canonical host.
func origin(u *url.URL) string {
	return strings.ToLower(u.Scheme) + "://" + canonicalHost(u)
}

// isLoopback reports whether host (without port or brackets) is the local
// machine: localhost or a loopback address.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// isSecure reports whether tokens or codes may be sent to u: https, or
// http to a loopback host.
func isSecure(u *url.URL) bool {
	return u.Scheme == "https" || u.Scheme == "http" && isLoopback(u.Hostname())
}

// endpointURL checks a URL that an authorization or resource server
// names (an issuer, an endpoint, a metadata document): absolute, https (or
// http to a loopback host), without fragment.
func endpointURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Fragment != "" || u.User != nil {
		return nil, fmt.Errorf("%q is not an absolute URL without fragment or credentials", raw)
	}
	if !isSecure(u) {
		return nil, fmt.Errorf("%s is neither https nor http to a loopback host", raw)
	}
	return u, nil
}

// covers reports whether a request to u goes to the resource: same
// origin, and u's path is the resource's path or below it.
func (c *client) covers(u *url.URL) bool {
	if origin(u) != origin(c.resURL) {
		return false
	}
	return pathWithin(u.Path, c.resURL.Path)
}

// pathWithin reports whether path p is base or below it (base has no
// trailing slash; "" is the root).
func pathWithin(p, base string) bool {
	return base == "" || p == base || strings.HasPrefix(p, base+"/")
}

// validScope reports whether s is one scope token (RFC 6749 §3.3).
func validScope(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		b := s[i]
		if b < 0x21 || b == '"' || b == '\\' || b > 0x7e {
			return false
		}
	}
	return true
}
