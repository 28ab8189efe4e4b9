package oauth

import (
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"golang.org/x/oauth2"
)

// FuzzChallenge parses arbitrary WWW-Authenticate values: never a panic,
// the bounds kept, and only valid parts believed.
func FuzzChallenge(f *testing.F) {
	for _, s := range []string{
		`Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource", scope="a b"`,
		`Basic realm="x", Bearer error="insufficient_scope", scope=mcp:write`,
		`Negotiate abc==, Bearer scope="a\"b"`,
		`Bearer scope="a`, `=`, `,,,`, `Bearer a=b, a=c`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cs, err := parseChallenges(s)
		if err == nil {
			if len(cs) > maxChallenges {
				t.Fatalf("%d challenges", len(cs))
			}
			for _, c := range cs {
				if c.scheme == "" || c.scheme != strings.ToLower(c.scheme) || len(c.params) > maxAuthParams {
					t.Fatalf("challenge %+v", c)
				}
			}
		}
		ch := parseChallenge(http.Header{"Www-Authenticate": {s, s}})
		if ch.resourceMetadata != "" {
			if _, err := endpointURL(ch.resourceMetadata); err != nil {
				t.Fatalf("resource_metadata %q believed: %v", ch.resourceMetadata, err)
			}
		}
		if len(ch.scopes) > maxScopes || slices.ContainsFunc(ch.scopes, func(s string) bool { return !validScope(s) }) {
			t.Fatalf("scopes %q", ch.scopes)
		}
	})
}

// FuzzResourceMetadata parses arbitrary Protected Resource Metadata: a
// document accepted describes the server and names a usable
// authorization server.
func FuzzResourceMetadata(f *testing.F) {
	const server = "https://mcp.example.com/mcp"
	for _, s := range []string{
		`{"resource":"https://mcp.example.com/mcp","authorization_servers":["https://auth.example.com"],"scopes_supported":["a"]}`,
		`{"resource":"https://mcp.example.com","authorization_servers":["http://127.0.0.1:9/t"]}`,
		`{"resource":"https://evil.example.com/mcp","authorization_servers":["https://auth.example.com"]}`,
		`{"resource":null}`, `[]`, `{`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		m, err := parseResourceMetadata(body, server)
		if err != nil {
			return
		}
		if !resourceCovers(m.Resource, server) || len(m.AuthorizationServers) == 0 {
			t.Fatalf("accepted %+v", m)
		}
		for _, as := range m.AuthorizationServers {
			if _, err := issuerURL(as); err != nil {
				t.Fatalf("authorization server %q accepted: %v", as, err)
			}
		}
	})
}

// FuzzServerMetadata parses arbitrary authorization server metadata: a
// document accepted is the issuer's, with endpoints codes may be sent to.
func FuzzServerMetadata(f *testing.F) {
	const issuer = "https://auth.example.com/tenant1"
	for _, s := range []string{
		`{"issuer":"https://auth.example.com/tenant1","authorization_endpoint":"https://auth.example.com/a","token_endpoint":"https://auth.example.com/t","code_challenge_methods_supported":["S256"]}`,
		`{"issuer":"https://auth.example.com/tenant1/","token_endpoint":"https://auth.example.com/t"}`,
		`{"issuer":"https://auth.example.com/tenant1","token_endpoint":"http://auth.example.com/t"}`,
		`{"issuer":1}`, `null`, `{"scopes_supported":[1]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		m, err := parseServerMetadata(body, issuer)
		if err != nil {
			return
		}
		if m.Issuer != issuer || m.TokenEndpoint == "" {
			t.Fatalf("accepted %+v", m)
		}
		for _, u := range []string{m.TokenEndpoint, m.AuthorizationEndpoint, m.RegistrationEndpoint} {
			if _, err := endpointURL(u); u != "" && err != nil {
				t.Fatalf("endpoint %q accepted: %v", u, err)
			}
		}
	})
}

// roundTripFunc is an http.RoundTripper in a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// FuzzTokenResponse feeds arbitrary token endpoint answers to the code
// exchange (x/oauth2 through the tokenTransport) and checkToken: never a
// panic, and a token accepted is a Bearer token a header can carry, with
// no secret of the answer in an error.
func FuzzTokenResponse(f *testing.F) {
	const issuer = "https://auth.example.com"
	f.Add(200, "application/json", `{"access_token":"a","token_type":"Bearer","expires_in":3600,"refresh_token":"r","scope":"x y"}`)
	f.Add(200, "application/json", `{"access_token":"a","token_type":"mac"}`)
	f.Add(200, "application/json", `{"access_token":"a","iss":"https://evil.example.com"}`)
	f.Add(200, "application/x-www-form-urlencoded", `access_token=a&token_type=bearer`)
	f.Add(400, "application/json", `{"error":"invalid_grant","error_description":"no"}`)
	f.Add(200, "application/json", `{"access_token":"a","expires_in":-1e300}`)
	f.Fuzz(func(t *testing.T, status int, contentType, body string) {
		if status < 100 || status > 599 {
			return
		}
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: status, Header: http.Header{"Content-Type": {contentType}}, Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
		})
		c := &client{http: &http.Client{Transport: base}}
		oc := &oauth2.Config{ClientID: "c", Endpoint: oauth2.Endpoint{TokenURL: issuer + "/token", AuthStyle: oauth2.AuthStyleInParams}}
		tok, err := oc.Exchange(c.tokenContext(context.Background(), "https://mcp.example.com/mcp"), "code")
		if err != nil {
			_ = wrapTokenError("exchange", err).Error()
			return
		}
		if err := checkToken(tok, issuer); err != nil {
			return
		}
		if tok.AccessToken == "" || strings.ContainsFunc(tok.AccessToken, func(r rune) bool { return r < 0x21 || r > 0x7e }) {
			t.Fatalf("access token %q accepted", tok.AccessToken)
		}
		if tok.TokenType != "" && !strings.EqualFold(tok.TokenType, "bearer") {
			t.Fatalf("token type %q accepted", tok.TokenType)
		}
		var g Grant
		setTokens(&g, tok, nil)
		if slices.ContainsFunc(g.Scopes, func(s string) bool { return !validScope(s) }) {
			t.Fatalf("scopes %q", g.Scopes)
		}
	})
}
