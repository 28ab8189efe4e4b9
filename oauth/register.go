package oauth

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// registration is the client the authorization code flow runs as.
type registration struct {
	clientID string
	// secret is the client secret; stored in the grant only when dynamic
	// (a configured one stays in the Config).
	secret  string
	method  string // token endpoint auth method
	dynamic bool
}

// register returns the client to use at the authorization server, in the
// specification's order of preference: the configured (pre-registered)
// client; the one registered before at the same issuer; the Client ID
// Metadata Document URL, where the server supports it; a Dynamic Client
// Registration. A client registered at another issuer is never reused
// (SEP-2352: registrations belong to the authorization server that made
// them).
func (c *client) register(ctx context.Context, as *serverMetadata, prev *Grant) (registration, error) {
	cfg := &c.cfg
	if cfg.ClientID != "" {
		m, err := chooseAuthMethod(cfg.TokenEndpointAuthMethod, as.TokenEndpointAuthMethodsSupported, cfg.ClientSecret != "")
		return registration{clientID: cfg.ClientID, secret: cfg.ClientSecret, method: m}, err
	}
	if prev != nil && prev.Issuer == as.Issuer && prev.ClientID != "" && prev.AuthMethod != "" {
		return registration{clientID: prev.ClientID, secret: prev.ClientSecret, method: prev.AuthMethod, dynamic: prev.ClientSecret != ""}, nil
	}
	if cfg.ClientMetadataURL != "" && as.ClientIDMetadataDocumentSupported {
		return registration{clientID: cfg.ClientMetadataURL, method: authNone}, nil
	}
	if as.RegistrationEndpoint != "" {
		return c.registerDynamic(ctx, as)
	}
	cimd := "it does not support Client ID Metadata Documents"
	if cfg.ClientMetadataURL == "" {
		cimd = "no ClientMetadataURL is configured"
	}
	return registration{}, fmt.Errorf("oauth: no way to register a client at authorization server %s (%s, and it has no registration_endpoint): register a client there and configure its client id", as.Issuer, cimd)
}

// registerDynamic registers the client (RFC 7591, with OpenID's
// application_type).
func (c *client) registerDynamic(ctx context.Context, as *serverMetadata) (registration, error) {
	if c.redirect == nil {
		return registration{}, errors.New("oauth: no RedirectURL configured: the authorization code flow needs one")
	}
	appType := "web"
	if isLoopback(c.redirect.Hostname()) {
		appType = "native"
	}
	req := map[string]any{
		"client_name":      cmp.Or(c.cfg.ClientName, "toolwire"),
		"redirect_uris":    []string{c.cfg.RedirectURL},
		"grant_types":      []string{"authorization_code", "refresh_token"},
		"response_types":   []string{"code"},
		"application_type": appType,
	}
	asked := dcrAuthMethod(c.cfg.TokenEndpointAuthMethod, as.TokenEndpointAuthMethodsSupported)
	if asked != "" {
		req["token_endpoint_auth_method"] = asked
	}
	body, _ := json.Marshal(req)
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, as.RegistrationEndpoint, bytes.NewReader(body))
	if err != nil {
		return registration{}, err
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(hreq)
	if err != nil {
		return registration{}, fmt.Errorf("oauth: registering at %s: %w", as.RegistrationEndpoint, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
		return registration{}, fmt.Errorf("oauth: the authorization server refused to register this client (%s): %s", as.RegistrationEndpoint, errorResponse(resp))
	}
	raw, err := readBounded(resp.Body, maxRegistrationBytes, "the registration response")
	if err != nil {
		return registration{}, fmt.Errorf("oauth: registering at %s: %w", as.RegistrationEndpoint, err)
	}
	r, err := parseRegistration(raw, asked, as.TokenEndpointAuthMethodsSupported)
	if err != nil {
		return registration{}, fmt.Errorf("oauth: the registration response of %s: %w", as.RegistrationEndpoint, err)
	}
	return r, nil
}

// parseRegistration reads a client information response (RFC 7591 §3.2.1).
func parseRegistration(raw []byte, asked string, supported []string) (registration, error) {
	var info struct {
		ClientID                string `json:"client_id"`
		ClientSecret            string `json:"client_secret"`
		TokenEndpointAuthMethod string `json:"token_endpoint_auth_method"`
	}
	if err := json.Unmarshal(raw, &info); err != nil {
		return registration{}, fmt.Errorf("malformed JSON: %w", err)
	}
	if info.ClientID == "" {
		return registration{}, errors.New("it has no client_id")
	}
	m := cmp.Or(info.TokenEndpointAuthMethod, asked)
	var err error
	switch m {
	case "":
		m, err = chooseAuthMethod("", supported, info.ClientSecret != "")
	case authBasic, authPost:
		if info.ClientSecret == "" {
			return registration{}, fmt.Errorf("it sets token_endpoint_auth_method %s but gives no client_secret", m)
		}
	case authNone:
	default:
		return registration{}, fmt.Errorf("it sets token_endpoint_auth_method %q, which this client does not support", m)
	}
	return registration{clientID: info.ClientID, secret: info.ClientSecret, method: m, dynamic: true}, err
}

// dcrAuthMethod returns the token endpoint auth method to ask for in a
// registration: the configured one, else none (a native client keeps no
// secret) where the server supports it, else what chooseAuthMethod takes
// for a client with a secret; "" lets the server choose.
func dcrAuthMethod(configured string, supported []string) string {
	if configured != "" {
		return configured
	}
	if len(supported) == 0 {
		return ""
	}
	if slices.Contains(supported, authNone) {
		return authNone
	}
	m, _ := chooseAuthMethod("", supported, true)
	return m
}

// chooseAuthMethod returns how a client authenticates to the token
// endpoint: the configured method; none without a secret; else
// client_secret_basic, then client_secret_post, then none, as the server
// supports (RFC 8414's default is client_secret_basic).
func chooseAuthMethod(configured string, supported []string, hasSecret bool) (string, error) {
	switch {
	case configured != "":
		return configured, nil
	case !hasSecret:
		return authNone, nil
	case len(supported) == 0 || slices.Contains(supported, authBasic):
		return authBasic, nil
	case slices.Contains(supported, authPost):
		return authPost, nil
	case slices.Contains(supported, authNone):
		return authNone, nil
	}
	return "", fmt.Errorf("oauth: the authorization server supports none of client_secret_basic, client_secret_post and none at its token endpoint (it lists %s)", strings.Join(supported, ", "))
}

// errorResponse describes an OAuth error response (RFC 6749 §5.2, RFC
// 7591 §3.2.2): its status and error code, and its description bounded.
func errorResponse(resp *http.Response) string {
	var e struct {
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	raw, _ := readBounded(resp.Body, maxErrorBytes, "the error response")
	_ = json.Unmarshal(raw, &e)
	s := fmt.Sprintf("HTTP %d", resp.StatusCode)
	if e.Error != "" {
		s += ": " + describeError(e.Error, e.Description)
	}
	return s
}

// describeError quotes an OAuth error code and description, bounded: they
// come from another server.
func describeError(code, desc string) string {
	s := fmt.Sprintf("%q", bound(code, 64))
	if desc != "" {
		s += fmt.Sprintf(" (%q)", bound(desc, 200))
	}
	return s
}

// bound cuts s to at most n bytes, on a rune boundary.
func bound(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xc0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}
