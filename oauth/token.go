package oauth

import (
	"cmp"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// assertionLifetime is how long a private_key_jwt assertion is valid.
const assertionLifetime = 5 * time.Minute

// jwtBearerAssertion is the client_assertion_type of private_key_jwt.
const jwtBearerAssertion = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

// errTokenRedirect refuses a token endpoint's redirect.
var errTokenRedirect = errors.New("the token endpoint redirected the request: refusing to send the client's credentials and the code elsewhere")

// tokenContext returns ctx carrying the HTTP client that x/oauth2 sends
// the token requests with: c's, through a tokenTransport, following no
// redirect (a 307 would carry the form, secrets included, to wherever it
// points).
func (c *client) tokenContext(ctx context.Context, resource string) context.Context {
	hc := &http.Client{
		Transport:     &tokenTransport{base: c.http.Transport, resource: resource},
		CheckRedirect: func(*http.Request, []*http.Request) error { return errTokenRedirect },
		Jar:           c.http.Jar,
		Timeout:       c.http.Timeout,
	}
	return context.WithValue(ctx, oauth2.HTTPClient, hc)
}

// tokenTransport sends x/oauth2's token requests: it adds the resource
// parameter (RFC 8707) to every one, which x/oauth2 has no option for on
// a refresh, and bounds the response body.
type tokenTransport struct {
	base     http.RoundTripper // nil: http.DefaultTransport
	resource string
}

func (t *tokenTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	var form url.Values
	if req.Body != nil {
		raw, err := readBounded(req.Body, maxTokenBytes, "the token request")
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		if form, err = url.ParseQuery(string(raw)); err != nil {
			return nil, fmt.Errorf("the token request's form: %w", err)
		}
	} else {
		form = url.Values{}
	}
	if t.resource != "" && form.Get("resource") == "" {
		form.Set("resource", t.resource)
	}
	enc := form.Encode()
	r := req.Clone(req.Context())
	r.Body = io.NopCloser(strings.NewReader(enc))
	r.ContentLength = int64(len(enc))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(enc)), nil }
	base := t.base
	if base == nil {
		base = http.DefaultTransport
	}
	resp, err := base.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	resp.Body = boundedBody{&boundedReader{r: resp.Body, left: maxTokenBytes, limit: maxTokenBytes, what: "the token response"}, resp.Body}
	return resp, nil
}

// boundedBody is a response body read through a boundedReader.
type boundedBody struct {
	io.Reader
	io.Closer
}

// tokenError is a token endpoint's refusal (RFC 6749 §5.2).
type tokenError struct {
	op     string // "token request", "refresh", ...
	status int
	code   string
	desc   string
}

func (e *tokenError) Error() string {
	if e.code == "" {
		return fmt.Sprintf("oauth: the token endpoint answered the %s with HTTP %d", e.op, e.status)
	}
	return fmt.Sprintf("oauth: the token endpoint refused the %s: %s (HTTP %d)", e.op, describeError(e.code, e.desc), e.status)
}

// wrapTokenError describes an x/oauth2 error of operation op. An error
// response becomes a tokenError holding its code and description only:
// x/oauth2's own message quotes the whole response body.
func wrapTokenError(op string, err error) error {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		status := 0
		if re.Response != nil {
			status = re.Response.StatusCode
		}
		return &tokenError{op: op, status: status, code: re.ErrorCode, desc: re.ErrorDescription}
	}
	return fmt.Errorf("oauth: %s: %w", op, err)
}

// refused returns g without what the token endpoint's refusal err says
// is dead: its tokens, when the refresh token is no longer good
// (invalid_grant), and its client's registration too, when the server no
// longer knows the client (invalid_client: deleted), so that the next
// authorization registers again instead of sending the user to log in
// for a client the server refuses. It returns nil when err is no such
// refusal (the server may be out of reach for a while).
func refused(g *Grant, err error) *Grant {
	var te *tokenError
	if !errors.As(err, &te) || te.code != "invalid_grant" && te.code != "invalid_client" {
		return nil
	}
	ng := *g
	ng.AccessToken, ng.RefreshToken = "", ""
	if te.code == "invalid_client" {
		ng.ClientID, ng.ClientSecret, ng.AuthMethod = "", "", ""
	}
	return &ng
}

// checkToken checks a token response (after x/oauth2 parsed it): an
// access token a header can carry, of type Bearer (an absent token_type
// is taken as Bearer), an iss, if there is one, that is the issuer asked,
// and a well-formed scope.
func checkToken(tok *oauth2.Token, issuer string) error {
	if tok.AccessToken == "" {
		return errors.New("oauth: the token response has no access_token")
	}
	for i := 0; i < len(tok.AccessToken); i++ {
		if b := tok.AccessToken[i]; b < 0x21 || b > 0x7e {
			return errors.New("oauth: the access token holds characters other than visible ASCII: refusing it")
		}
	}
	if tok.TokenType != "" && !strings.EqualFold(tok.TokenType, "Bearer") {
		return fmt.Errorf("oauth: the token response's token_type is %q, not Bearer: this client sends Bearer tokens only", bound(tok.TokenType, 32))
	}
	if iss, ok, err := extraString(tok, "iss"); err != nil {
		return err
	} else if ok && iss != issuer {
		return fmt.Errorf("oauth: the token response names issuer %q, not %q that was asked: refusing its tokens", bound(iss, 200), issuer)
	}
	if s, ok, err := extraString(tok, "scope"); err != nil {
		return err
	} else if ok {
		if _, err := parseScopes(s); err != nil {
			return fmt.Errorf("oauth: the token response's scope: %w", err)
		}
	}
	return nil
}

// extraString returns the string field key of a token response, and
// whether it is there (an empty value counts as absent).
func extraString(tok *oauth2.Token, key string) (string, bool, error) {
	switch v := tok.Extra(key).(type) {
	case nil:
		return "", false, nil
	case string:
		return v, v != "", nil
	default:
		return "", false, fmt.Errorf("oauth: the token response's %s is a %T, not a string", key, v)
	}
}

// setTokens stores a token response in g; asked are the scopes asked
// for, kept as the grant's when the response names none.
func setTokens(g *Grant, tok *oauth2.Token, asked []string) {
	g.AccessToken, g.RefreshToken = tok.AccessToken, tok.RefreshToken
	g.TokenType = "Bearer"
	g.Expiry = tok.Expiry
	g.Scopes = append([]string(nil), asked...)
	if s, ok, _ := extraString(tok, "scope"); ok {
		g.Scopes, _ = parseScopes(s)
	}
}

// authStyle is how x/oauth2 sends the client's credentials for a token
// endpoint auth method.
func authStyle(method string) oauth2.AuthStyle {
	if method == authBasic {
		return oauth2.AuthStyleInHeader
	}
	return oauth2.AuthStyleInParams
}

// secretFor returns the client secret of g's client: the registered one,
// or the configured one when g's client is the configured client.
func (c *client) secretFor(g *Grant) string {
	switch cc := c.cfg.ClientCredentials; {
	case g.ClientSecret != "":
		return g.ClientSecret
	case cc != nil && g.ClientID == cc.ClientID:
		return cc.ClientSecret
	case g.ClientID == c.cfg.ClientID:
		return c.cfg.ClientSecret
	}
	return ""
}

// errCannotRefresh reports a grant with neither a refresh token nor client
// credentials to get a new token with.
var errCannotRefresh = errors.New("oauth: the grant has no refresh token")

// refresh returns g with new tokens: from its refresh token, or, for a
// client credentials grant, a new client credentials token.
func (c *client) refresh(ctx context.Context, g *Grant) (*Grant, error) {
	if g.TokenEndpoint == "" {
		return nil, errors.New("oauth: the stored grant names no token endpoint to refresh at")
	}
	var tok *oauth2.Token
	var err error
	switch {
	case g.RefreshToken != "":
		oc := &oauth2.Config{ClientID: g.ClientID, Endpoint: oauth2.Endpoint{TokenURL: g.TokenEndpoint, AuthStyle: authStyle(g.AuthMethod)}}
		if g.AuthMethod == authBasic || g.AuthMethod == authPost {
			oc.ClientSecret = c.secretFor(g)
		}
		ctx := c.tokenContext(ctx, cmp.Or(g.ResourceIndicator, g.Resource))
		if tok, err = oc.TokenSource(ctx, &oauth2.Token{RefreshToken: g.RefreshToken}).Token(); err != nil {
			return nil, wrapTokenError("refresh", err)
		}
	case c.cfg.ClientCredentials != nil && g.ClientID == c.cfg.ClientCredentials.ClientID:
		if tok, err = c.clientCredentials(ctx, g.Issuer, g.TokenEndpoint, g.AuthMethod, cmp.Or(g.ResourceIndicator, g.Resource), g.Scopes); err != nil {
			return nil, err
		}
	default:
		return nil, errCannotRefresh
	}
	if err := checkToken(tok, g.Issuer); err != nil {
		return nil, err
	}
	ng := *g
	setTokens(&ng, tok, g.Scopes)
	return &ng, nil
}

// clientCredentials gets a token with the client credentials grant.
func (c *client) clientCredentials(ctx context.Context, issuer, tokenURL, method, audience string, scopes []string) (*oauth2.Token, error) {
	cc := c.cfg.ClientCredentials
	conf := &clientcredentials.Config{ClientID: cc.ClientID, TokenURL: tokenURL, Scopes: scopes, AuthStyle: authStyle(method)}
	switch method {
	case authJWT:
		a, err := cc.assertion(issuer, time.Now())
		if err != nil {
			return nil, err
		}
		conf.EndpointParams = url.Values{"client_assertion_type": {jwtBearerAssertion}, "client_assertion": {a}}
	case authBasic, authPost:
		conf.ClientSecret = cc.ClientSecret
	}
	tok, err := conf.Token(c.tokenContext(ctx, audience))
	if err != nil {
		return nil, wrapTokenError("client credentials token request", err)
	}
	return tok, nil
}

// assertion returns a JWT (RFC 7523 §3) that authenticates the client to
// the authorization server audience (its issuer identifier).
func (cc *ClientCredentials) assertion(audience string, now time.Time) (string, error) {
	key, alg, err := cc.signingKey()
	if err != nil {
		return "", err
	}
	opts := (&jose.SignerOptions{}).WithType("JWT")
	if cc.KeyID != "" {
		opts = opts.WithHeader("kid", cc.KeyID)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: key}, opts)
	if err != nil {
		return "", fmt.Errorf("oauth: ClientCredentials: the key cannot sign %s: %w", alg, err)
	}
	claims := jwt.Claims{
		Issuer:   cc.ClientID,
		Subject:  cc.ClientID,
		Audience: jwt.Audience{audience},
		IssuedAt: jwt.NewNumericDate(now),
		Expiry:   jwt.NewNumericDate(now.Add(assertionLifetime)),
		ID:       rand.Text(),
	}
	s, err := jwt.Signed(signer).Claims(claims).Serialize()
	if err != nil {
		return "", fmt.Errorf("oauth: ClientCredentials: signing the client assertion with %s: %w", alg, err)
	}
	return s, nil
}

// signingKey returns the private key and the signature algorithm of the
// client assertion.
func (cc *ClientCredentials) signingKey() (crypto.Signer, jose.SignatureAlgorithm, error) {
	key := cc.PrivateKey
	if key == nil {
		block, _ := pem.Decode([]byte(cc.PrivateKeyPEM))
		if block == nil {
			return nil, "", errors.New("oauth: ClientCredentials.PrivateKeyPEM holds no PEM block")
		}
		var err error
		if key, err = parsePrivateKey(block.Bytes); err != nil {
			return nil, "", err
		}
	}
	alg := cc.Alg
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		if alg == "" {
			switch k.Curve.Params().BitSize {
			case 256:
				alg = string(jose.ES256)
			case 384:
				alg = string(jose.ES384)
			case 521:
				alg = string(jose.ES512)
			}
		}
	case *rsa.PrivateKey:
		alg = cmp.Or(alg, string(jose.RS256))
	case ed25519.PrivateKey:
		alg = cmp.Or(alg, string(jose.EdDSA))
	default:
		return nil, "", fmt.Errorf("oauth: ClientCredentials: a %T key is not supported: use ECDSA, RSA or Ed25519", key)
	}
	if alg == "" {
		return nil, "", errors.New("oauth: ClientCredentials: no signature algorithm for this key's curve: set Alg")
	}
	return key, jose.SignatureAlgorithm(alg), nil
}

// parsePrivateKey parses a DER private key: PKCS #8, SEC 1 (EC) or PKCS #1
// (RSA).
func parsePrivateKey(der []byte) (crypto.Signer, error) {
	if k, err := x509.ParsePKCS8PrivateKey(der); err == nil {
		if s, ok := k.(crypto.Signer); ok {
			return s, nil
		}
	}
	if k, err := x509.ParseECPrivateKey(der); err == nil {
		return k, nil
	}
	if k, err := x509.ParsePKCS1PrivateKey(der); err == nil {
		return k, nil
	}
	return nil, errors.New("oauth: ClientCredentials.PrivateKeyPEM holds no PKCS #8, EC or PKCS #1 private key")
}
