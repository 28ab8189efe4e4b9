package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/toolwire/toolwire/internal/wellknown"
)

// Bounds of the documents read.
const (
	maxMetadataBytes     = 128 << 10
	maxRegistrationBytes = 64 << 10
	maxTokenBytes        = 64 << 10
	// maxErrorBytes bounds an error response read for its error code.
	maxErrorBytes = 8 << 10
)

// resourceMetadata is a Protected Resource Metadata document (RFC 9728).
type resourceMetadata struct {
	Resource             string   `json:"resource"`
	AuthorizationServers []string `json:"authorization_servers"`
	ScopesSupported      []string `json:"scopes_supported"`
}

// serverMetadata is an authorization server's metadata (RFC 8414, or
// OpenID Connect Discovery).
type serverMetadata struct {
	Issuer                            string   `json:"issuer"`
	AuthorizationEndpoint             string   `json:"authorization_endpoint"`
	TokenEndpoint                     string   `json:"token_endpoint"`
	RegistrationEndpoint              string   `json:"registration_endpoint"`
	ScopesSupported                   []string `json:"scopes_supported"`
	CodeChallengeMethodsSupported     []string `json:"code_challenge_methods_supported"`
	TokenEndpointAuthMethodsSupported []string `json:"token_endpoint_auth_methods_supported"`
	ClientIDMetadataDocumentSupported bool     `json:"client_id_metadata_document_supported"`
	// IssParameterSupported is authorization_response_iss_parameter_supported
	// (RFC 9207): the authorization response must then carry iss.
	IssParameterSupported bool `json:"authorization_response_iss_parameter_supported"`
}

// discovered is what discovery found for one authorization.
type discovered struct {
	prm *resourceMetadata
	as  *serverMetadata
	// audience is the resource indicator (RFC 8707) sent with the
	// authorization and token requests: the resource the server's
	// metadata names (this server, or a prefix of its URL).
	audience string
}

// discover finds the server's authorization server: its Protected
// Resource Metadata (at the challenge's resource_metadata, else at the
// well-known URLs), then the first authorization server's metadata.
func (c *client) discover(ctx context.Context, ch challenge) (*discovered, error) {
	prm, err := c.resourceMetadata(ctx, ch)
	if err != nil {
		return nil, err
	}
	as, err := c.serverMetadata(ctx, prm.AuthorizationServers[0])
	if err != nil {
		return nil, err
	}
	return &discovered{prm: prm, as: as, audience: prm.Resource}, nil
}

// resourceMetadata fetches and checks the Protected Resource Metadata.
func (c *client) resourceMetadata(ctx context.Context, ch challenge) (*resourceMetadata, error) {
	urls := []string{ch.resourceMetadata}
	if ch.resourceMetadata == "" {
		// RFC 9728 §3.1: the well-known suffix goes between host and
		// path; the root document last (MCP's order).
		base := origin(c.resURL) + "/.well-known/oauth-protected-resource"
		urls = []string{base}
		if p := c.resURL.Path; p != "" {
			urls = []string{base + p, base}
		}
	}
	for i, u := range urls {
		status, body, err := c.get(ctx, u, maxMetadataBytes)
		if err != nil {
			return nil, fmt.Errorf("oauth: fetching the protected resource metadata of %s: %w", c.resource, err)
		}
		if status != http.StatusOK {
			if status >= 400 && status < 500 && i < len(urls)-1 {
				continue
			}
			return nil, fmt.Errorf("oauth: %s requires authorization but serves no protected resource metadata (RFC 9728): %s answered HTTP %d", c.resource, u, status)
		}
		prm, err := parseResourceMetadata(body, c.resource)
		if err != nil {
			return nil, fmt.Errorf("oauth: the protected resource metadata at %s: %w", u, err)
		}
		return prm, nil
	}
	panic("unreachable")
}

// parseResourceMetadata parses and checks a Protected Resource Metadata
// document fetched for server (canonical): its resource must be server,
// or an origin or path above it (RFC 9728 §3.3, §7.3: metadata about
// another resource is refused), and it must name at least one
// authorization server that tokens may be asked of.
func parseResourceMetadata(body []byte, server string) (*resourceMetadata, error) {
	var m resourceMetadata
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, fmt.Errorf("malformed JSON: %w", err)
	}
	if m.Resource == "" {
		return nil, errors.New(`it names no "resource"`)
	}
	if !resourceCovers(m.Resource, server) {
		return nil, fmt.Errorf("it describes resource %q, not this server (%s): refusing to authorize, the server's metadata may be forged", m.Resource, server)
	}
	if len(m.AuthorizationServers) == 0 {
		return nil, errors.New(`it names no "authorization_servers"`)
	}
	for _, as := range m.AuthorizationServers {
		if _, err := issuerURL(as); err != nil {
			return nil, fmt.Errorf("authorization server: %w", err)
		}
	}
	if err := checkScopes(m.ScopesSupported); err != nil {
		return nil, fmt.Errorf("scopes_supported: %w", err)
	}
	return &m, nil
}

// resourceCovers reports whether resource (as a server's metadata names
// it) identifies server: the same origin, a path that is server's path or
// above it, and no other query.
func resourceCovers(resource, server string) bool {
	r, err := CanonicalResource(resource)
	if err != nil {
		return false
	}
	ru, err1 := url.Parse(r)
	su, err2 := url.Parse(server)
	if err1 != nil || err2 != nil || origin(ru) != origin(su) {
		return false
	}
	if ru.RawQuery != "" && ru.RawQuery != su.RawQuery {
		return false
	}
	return pathWithin(su.Path, ru.Path)
}

// serverMetadata fetches and checks the metadata of the authorization
// server issuer, at the well-known URLs in MCP's order: OAuth (RFC 8414)
// then OpenID Connect, path-inserted, then OpenID path-appended for an
// issuer with a path.
func (c *client) serverMetadata(ctx context.Context, issuer string) (*serverMetadata, error) {
	iu, err := issuerURL(issuer)
	if err != nil {
		return nil, fmt.Errorf("oauth: authorization server: %w", err)
	}
	canonical := *iu
	canonical.Scheme, canonical.Host = strings.ToLower(iu.Scheme), canonicalHost(iu)
	var statuses []string
	for _, u := range wellknown.AuthorizationServer(&canonical) {
		status, body, err := c.get(ctx, u, maxMetadataBytes)
		if err != nil {
			return nil, fmt.Errorf("oauth: fetching the metadata of authorization server %s: %w", issuer, err)
		}
		if status >= 400 && status < 500 {
			statuses = append(statuses, fmt.Sprintf("%s: HTTP %d", u, status))
			continue
		}
		if status != http.StatusOK {
			return nil, fmt.Errorf("oauth: the metadata of authorization server %s: %s answered HTTP %d", issuer, u, status)
		}
		m, err := parseServerMetadata(body, issuer)
		if err != nil {
			return nil, fmt.Errorf("oauth: the authorization server metadata at %s: %w", u, err)
		}
		return m, nil
	}
	return nil, fmt.Errorf("oauth: authorization server %s serves no metadata (RFC 8414 or OpenID Connect Discovery): %s", issuer, strings.Join(statuses, "; "))
}

// parseServerMetadata parses and checks authorization server metadata
// fetched for issuer: its issuer must be issuer exactly (RFC 8414 §3.3),
// and its endpoints URLs that codes and secrets may be sent to.
func parseServerMetadata(body []byte, issuer string) (*serverMetadata, error) {
	var m serverMetadata
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, fmt.Errorf("malformed JSON: %w", err)
	}
	if m.Issuer != issuer {
		return nil, fmt.Errorf("it names issuer %q, not %q, whose metadata was asked for: refusing to use it (RFC 8414 §3.3)", m.Issuer, issuer)
	}
	if m.TokenEndpoint == "" {
		return nil, errors.New(`it names no "token_endpoint"`)
	}
	for name, u := range map[string]string{"token_endpoint": m.TokenEndpoint, "authorization_endpoint": m.AuthorizationEndpoint, "registration_endpoint": m.RegistrationEndpoint} {
		if u == "" {
			continue
		}
		if _, err := endpointURL(u); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	if err := checkScopes(m.ScopesSupported); err != nil {
		return nil, fmt.Errorf("scopes_supported: %w", err)
	}
	return &m, nil
}

// issuerURL checks an authorization server's issuer identifier (RFC 8414
// §2): an https URL (or http to a loopback host) without query or
// fragment.
func issuerURL(issuer string) (*url.URL, error) {
	u, err := endpointURL(issuer)
	if err != nil {
		return nil, err
	}
	if u.RawQuery != "" || u.ForceQuery {
		return nil, fmt.Errorf("issuer %s has a query", issuer)
	}
	return u, nil
}

// checkScopes checks a scopes_supported list.
func checkScopes(scopes []string) error {
	if len(scopes) > maxScopes {
		return fmt.Errorf("more than %d scopes", maxScopes)
	}
	for _, s := range scopes {
		if !validScope(s) {
			return fmt.Errorf("%q is not a valid scope", s)
		}
	}
	return nil
}

// get GETs u, reading at most limit bytes of a 200 response's body. For
// another status it returns the status and no body.
func (c *client) get(ctx context.Context, u string, limit int64) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		drain(resp.Body)
		return resp.StatusCode, nil, nil
	}
	body, err := readBounded(resp.Body, limit, u)
	return resp.StatusCode, body, err
}

// readBounded reads r to its end, failing if it holds more than limit
// bytes; what names the document in the error.
func readBounded(r io.Reader, limit int64, what string) ([]byte, error) {
	return io.ReadAll(&boundedReader{r: r, left: limit, limit: limit, what: what})
}

// boundedReader reads r, failing once more than limit bytes have come.
type boundedReader struct {
	r     io.Reader
	left  int64
	limit int64
	what  string
}

func (b *boundedReader) Read(p []byte) (int, error) {
	if b.left <= 0 {
		var one [1]byte
		n, err := b.r.Read(one[:])
		if n > 0 {
			return 0, fmt.Errorf("%s is larger than %d bytes: refusing it", b.what, b.limit)
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	return n, err
}

// drain reads a little of an unwanted body so that its connection may be
// reused.
func drain(r io.Reader) { _, _ = io.Copy(io.Discard, io.LimitReader(r, maxErrorBytes)) }
