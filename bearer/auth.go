package bearer

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/toolwire/toolwire/tool"
)

// wellKnown is the path prefix of Protected Resource Metadata (RFC 9728).
const wellKnown = "/.well-known/oauth-protected-resource"

// retryAfter is the Retry-After of a 503 for a token that cannot be
// checked now.
const retryAfter = 10

// Options configures an Auth.
type Options struct {
	// Resource is this MCP server's canonical URL, as clients reach it
	// (https://mcp.example.com/mcp): the "resource" of its Protected
	// Resource Metadata, and the audience its tokens must name. Required.
	Resource string
	// AuthorizationServers are the issuers clients get tokens from, for
	// the metadata. Required: at least one.
	AuthorizationServers []string
	// Scopes are the scopes every request needs.
	Scopes []string
	// ToolScopes are the scopes a tools/call of a tool needs besides
	// Scopes, by tool name.
	ToolScopes map[string][]string
}

// Auth guards an MCP server's HTTP endpoints with bearer tokens: Require
// verifies each request's token, Authorize checks the scopes of each
// call, and Metadata serves the Protected Resource Metadata that tells
// clients where to get tokens. mcp.HTTPConfig.Auth wires all three.
type Auth struct {
	verifier     Verifier
	scopes       []string
	toolScopes   map[string][]string
	metadataURL  string
	metadata     []byte
	challengeURL string // metadataURL quoted for WWW-Authenticate
}

// New returns an Auth that verifies tokens with v, as o says.
func New(v Verifier, o Options) (*Auth, error) {
	if v == nil {
		return nil, errors.New("bearer: no Verifier: give one, such as NewJWT's")
	}
	if err := checkAudience(o.Resource); err != nil {
		return nil, fmt.Errorf("bearer: Options.Resource: %w", err)
	}
	if len(o.AuthorizationServers) == 0 {
		return nil, errors.New("bearer: Options.AuthorizationServers is empty: name the issuer clients get tokens from")
	}
	for _, s := range append(slices.Clone(o.Scopes), slices.Concat(slices.Collect(maps.Values(o.ToolScopes))...)...) {
		if !validScope(s) {
			return nil, fmt.Errorf("bearer: scope %q: a scope is printable ASCII without spaces, quotes or backslashes (RFC 6749 section 3.3)", s)
		}
	}
	u, _ := url.Parse(o.Resource)
	mu := url.URL{Scheme: u.Scheme, Host: u.Host, Path: wellKnown + strings.TrimSuffix(u.Path, "/")}
	a := &Auth{
		verifier:    v,
		scopes:      slices.Clone(o.Scopes),
		toolScopes:  maps.Clone(o.ToolScopes),
		metadataURL: mu.String(),
	}
	a.challengeURL = strconv.Quote(a.metadataURL)
	supported := slices.Clone(o.Scopes)
	for _, s := range o.ToolScopes {
		supported = append(supported, s...)
	}
	slices.Sort(supported)
	md, err := json.Marshal(map[string]any{
		"resource":                 o.Resource,
		"authorization_servers":    o.AuthorizationServers,
		"scopes_supported":         slices.Compact(supported),
		"bearer_methods_supported": []string{"header"},
	})
	if err != nil {
		return nil, fmt.Errorf("bearer: %w", err)
	}
	a.metadata = md
	return a, nil
}

// validScope reports whether s is a scope token (RFC 6749 section 3.3):
// %x21 / %x23-5B / %x5D-7E, at least one.
func validScope(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x21 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// MetadataURL is the URL of the Protected Resource Metadata, as
// WWW-Authenticate challenges give it: the resource's URL with
// /.well-known/oauth-protected-resource inserted before its path (RFC
// 9728 section 3.1).
func (a *Auth) MetadataURL() string { return a.metadataURL }

// Metadata returns the handler of the Protected Resource Metadata
// document (RFC 9728): mount it at the path of MetadataURL (and at
// /.well-known/oauth-protected-resource, where clients look next). It
// needs no token, and any origin may read it.
func (a *Auth) Metadata() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed: GET the metadata", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Access-Control-Allow-Origin", "*")
		_, _ = w.Write(a.metadata)
	})
}

// Require is net/http middleware that lets through only requests with a
// valid bearer token granting Scopes. It answers the others itself:
//
//   - no token (no Authorization header, or another scheme): 401 with a
//     challenge naming the metadata and the scopes;
//   - a malformed header (two of them, no token after "Bearer", a token
//     with characters RFC 6750 does not allow): 400 invalid_request;
//   - a token longer than MaxTokenSize, or one the Verifier refuses: 401
//     invalid_token, saying why;
//   - a token that cannot be checked now (ErrUnavailable): 503 with
//     Retry-After;
//   - a token without Scopes: 403 insufficient_scope.
//
// A request let through carries the token's Info (InfoFrom) and its user
// as the caller (tool.CallerFrom: ID from Info.CallerID, Client the
// token's client id).
func (a *Auth) Require(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, err := bearerToken(r.Header)
		switch {
		case errors.Is(err, errNoToken):
			a.refuse(w, http.StatusUnauthorized, "", "", a.scopes)
			return
		case errors.Is(err, ErrInvalidToken):
			a.refuse(w, http.StatusUnauthorized, "invalid_token", err.Error(), nil)
			return
		case err != nil:
			a.refuse(w, http.StatusBadRequest, "invalid_request", err.Error(), nil)
			return
		}
		info, err := a.verifier.Verify(r.Context(), token)
		switch {
		case errors.Is(err, ErrUnavailable):
			w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
			writeError(w, http.StatusServiceUnavailable, "temporarily_unavailable", "the access token cannot be checked now: "+err.Error()+"; retry later")
			return
		case err != nil:
			a.refuse(w, http.StatusUnauthorized, "invalid_token", err.Error(), nil)
			return
		case !info.HasScopes(a.scopes...):
			a.refuse(w, http.StatusForbidden, "insufficient_scope", "this server needs scope "+strings.Join(a.scopes, " "), a.scopes)
			return
		}
		ctx := tool.WithCaller(withInfo(r.Context(), info), tool.Caller{ID: info.CallerID(), Client: info.ClientID})
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// Authorize checks that the token of r (which Require verified) grants
// the scopes a request needs besides Scopes: for a tools/call of tool
// name, ToolScopes[name]. If not, it answers 403 insufficient_scope,
// naming every scope the call needs, and returns false. method and name
// are the request's JSON-RPC method and the tool, prompt or resource it
// names; mcp.HTTPHandler.Authorize calls it for each request.
func (a *Auth) Authorize(w http.ResponseWriter, r *http.Request, method, name string) bool {
	if method != "tools/call" {
		return true
	}
	need := a.toolScopes[name]
	if len(need) == 0 {
		return true
	}
	info, ok := InfoFrom(r.Context())
	if !ok {
		a.refuse(w, http.StatusUnauthorized, "", "", a.scopes)
		return false
	}
	if info.HasScopes(need...) {
		return true
	}
	all := slices.Compact(slices.Sorted(slices.Values(slices.Concat(a.scopes, need))))
	a.refuse(w, http.StatusForbidden, "insufficient_scope", fmt.Sprintf("tool %s needs scope %s", name, strings.Join(all, " ")), all)
	return false
}

// refuse answers with status and a Bearer challenge (RFC 6750 section
// 3): the metadata's URL, the scopes needed (if any), the error code and
// its description (if any).
func (a *Auth) refuse(w http.ResponseWriter, status int, code, desc string, scopes []string) {
	var b strings.Builder
	b.WriteString("Bearer resource_metadata=")
	b.WriteString(a.challengeURL)
	if len(scopes) > 0 {
		b.WriteString(`, scope="` + strings.Join(scopes, " ") + `"`)
	}
	if code != "" {
		b.WriteString(`, error="` + code + `"`)
		desc = headerText(desc)
		b.WriteString(`, error_description="` + desc + `"`)
	}
	w.Header().Set("WWW-Authenticate", b.String())
	if code == "" {
		code, desc = "unauthorized", "send an access token for this server: Authorization: Bearer TOKEN (its metadata: "+a.metadataURL+")"
	}
	writeError(w, status, code, desc)
}

// writeError answers with status and an OAuth error body.
func writeError(w http.ResponseWriter, status int, code, desc string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	b, _ := json.Marshal(struct {
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}{code, desc})
	_, _ = w.Write(b)
}

// maxDescription bounds an error_description in a challenge.
const maxDescription = 300

// headerText makes s fit an error_description (RFC 6750 section 3: %x20-21
// / %x23-5B / %x5D-7E): quotes and backslashes become apostrophes, other
// characters outside it question marks, and it is cut to maxDescription
// bytes.
func headerText(s string) string {
	b := []byte(s[:min(len(s), maxDescription)])
	for i, c := range b {
		switch {
		case c == '"' || c == '\\':
			b[i] = '\''
		case c < 0x20 || c > 0x7e:
			b[i] = '?'
		}
	}
	return string(b)
}

// errNoToken: the request carries no bearer token.
var errNoToken = errors.New("no bearer token")

// bearerToken returns the token of the request's Authorization header
// (RFC 6750 section 2.1: "Bearer", case-insensitive, then the token). It
// returns errNoToken when there is no header or it uses another scheme,
// an error wrapping ErrInvalidToken for a token longer than
// MaxTokenSize (unread), and another error for a malformed header.
func bearerToken(h http.Header) (string, error) {
	values := h.Values("Authorization")
	if len(values) == 0 {
		return "", errNoToken
	}
	if len(values) > 1 {
		return "", fmt.Errorf("%d Authorization headers: send one", len(values))
	}
	v := values[0]
	scheme, rest, _ := strings.Cut(v, " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return "", errNoToken
	}
	token := strings.TrimLeft(rest, " ")
	switch {
	case len(token) > MaxTokenSize:
		return "", fmt.Errorf("%w: longer than %d bytes", ErrInvalidToken, MaxTokenSize)
	case token == "":
		return "", errors.New(`no token after "Bearer": send Authorization: Bearer TOKEN`)
	case !isB64Token(token):
		return "", errors.New(`the token has characters a bearer token cannot have (RFC 6750 b64token: letters, digits, -._~+/ and trailing =)`)
	}
	return token, nil
}

// isB64Token reports whether s is an RFC 6750 b64token:
// 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=".
func isB64Token(s string) bool {
	end := len(strings.TrimRight(s, "="))
	if end == 0 {
		return false
	}
	for i := 0; i < end; i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/') {
			return false
		}
	}
	return true
}
