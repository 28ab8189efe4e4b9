package bearer

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4/jwt"
)

// DefaultIntrospectionTTL is how long an introspection verifier trusts
// an answer of the authorization server, unless its config says: a token
// revoked meanwhile is still accepted until then.
const DefaultIntrospectionTTL = 30 * time.Second

// IntrospectionConfig configures an introspection verifier.
type IntrospectionConfig struct {
	// Issuer is the authorization server's issuer identifier; an answer
	// naming another issuer is refused. Required.
	Issuer string
	// Audience is this MCP server's canonical URL (RFC 8707); the answer
	// must list it in "aud". Required.
	Audience string
	// Endpoint is the introspection endpoint; when empty, the
	// introspection_endpoint of the issuer's metadata.
	Endpoint string
	// ClientID and ClientSecret authenticate this server to the
	// authorization server (HTTP Basic, RFC 6749 section 2.3.1), as most
	// require; none is sent when ClientID is empty.
	ClientID     string
	ClientSecret string
	// HTTPClient makes the requests (default: one with a timeout of
	// DefaultTimeout).
	HTTPClient *http.Client
	// TTL is how long an answer is trusted (default
	// DefaultIntrospectionTTL), never past the token's expiry.
	TTL time.Duration
	// CacheSize is how many answers are remembered (default
	// DefaultCacheSize).
	CacheSize int
}

// Introspection verifies opaque access tokens by asking the
// authorization server about them (RFC 7662). It is safe for concurrent
// use.
//
// The answer must say the token is active, name the issuer (when it
// names one), list the audience and a subject, and not be past its
// expiry. Answers are remembered, by the token's digest, for the TTL.
type Introspection struct {
	cfg      IntrospectionConfig
	client   *http.Client
	endpoint string
	cache    *cache
}

// NewIntrospection returns a verifier for cfg. It fetches the issuer's
// metadata when cfg.Endpoint is empty.
func NewIntrospection(ctx context.Context, cfg IntrospectionConfig) (*Introspection, error) {
	if cfg.Issuer == "" {
		return nil, errors.New("bearer: IntrospectionConfig.Issuer is empty: name the authorization server (its issuer URL)")
	}
	if err := checkAudience(cfg.Audience); err != nil {
		return nil, fmt.Errorf("bearer: %w", err)
	}
	v := &Introspection{cfg: cfg, client: defaultClient(cfg.HTTPClient), endpoint: cfg.Endpoint, cache: newCache(cfg.CacheSize)}
	if v.cfg.TTL <= 0 {
		v.cfg.TTL = DefaultIntrospectionTTL
	}
	if v.endpoint == "" {
		md, err := discover(ctx, v.client, cfg.Issuer)
		if err != nil {
			return nil, fmt.Errorf("bearer: %w", err)
		}
		if md.IntrospectionEndpoint == "" {
			return nil, fmt.Errorf("bearer: the metadata of issuer %s has no introspection_endpoint: give the endpoint", cfg.Issuer)
		}
		v.endpoint = md.IntrospectionEndpoint
	}
	if _, err := checkServerURL("introspection endpoint", v.endpoint); err != nil {
		return nil, fmt.Errorf("bearer: %w", err)
	}
	return v, nil
}

// introspection is an RFC 7662 answer, as far as it is read.
type introspection struct {
	Active    bool             `json:"active"`
	Scope     string           `json:"scope"`
	ClientID  string           `json:"client_id"`
	Username  string           `json:"username"`
	Subject   string           `json:"sub"`
	Audience  jwt.Audience     `json:"aud"`
	Issuer    string           `json:"iss"`
	Expiry    *jwt.NumericDate `json:"exp"`
	NotBefore *jwt.NumericDate `json:"nbf"`
}

// Verify implements Verifier.
func (v *Introspection) Verify(ctx context.Context, token string) (*Info, error) {
	if len(token) > MaxTokenSize {
		return nil, fmt.Errorf("%w: longer than %d bytes", ErrInvalidToken, MaxTokenSize)
	}
	d := digest(sha256.Sum256([]byte(token)))
	now := time.Now()
	if info := v.cache.get(d, now, 0); info != nil {
		return info, nil
	}
	form := url.Values{"token": {token}, "token_type_hint": {"access_token"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, v.endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if v.cfg.ClientID != "" {
		req.SetBasicAuth(url.QueryEscape(v.cfg.ClientID), url.QueryEscape(v.cfg.ClientSecret))
	}
	var raw json.RawMessage
	status, err := doJSON(v.client, req, &raw)
	if status == http.StatusUnauthorized || status == http.StatusForbidden {
		return nil, fmt.Errorf("%w: the authorization server refused to introspect (%d): check this server's client id and secret", ErrUnavailable, status)
	}
	if err != nil {
		if errors.Is(err, ErrUnavailable) {
			return nil, fmt.Errorf("introspection: %w", err)
		}
		return nil, fmt.Errorf("%w: introspection: %w", ErrUnavailable, err)
	}
	var in introspection
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, fmt.Errorf("%w: introspection answered malformed JSON: %w", ErrUnavailable, err)
	}
	if err := v.check(&in, now); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidToken, err)
	}
	info := &Info{
		Issuer:   v.cfg.Issuer,
		Subject:  cmpOr(in.Subject, in.Username),
		ClientID: in.ClientID,
		Scopes:   strings.Fields(in.Scope),
		Audience: in.Audience,
		Claims:   raw,
	}
	until := now.Add(v.cfg.TTL)
	if in.Expiry != nil {
		info.Expiry = in.Expiry.Time()
		if info.Expiry.Before(until) {
			until = info.Expiry
		}
	}
	info.callerID = info.CallerID()
	v.cache.put(d, info, until, 0)
	return info, nil
}

// check checks an introspection answer at now.
func (v *Introspection) check(in *introspection, now time.Time) error {
	switch {
	case !in.Active:
		return errors.New("the authorization server says it is not active (expired, revoked or unknown)")
	case in.Issuer != "" && in.Issuer != v.cfg.Issuer:
		return fmt.Errorf("issued by another issuer than %s", v.cfg.Issuer)
	case !in.Audience.Contains(v.cfg.Audience):
		return fmt.Errorf("issued for another audience than %s (this server): get a token for this server, with resource=%s (RFC 8707)", v.cfg.Audience, v.cfg.Audience)
	case in.Subject == "" && in.Username == "":
		return errors.New("the introspection answer names no subject (sub)")
	case in.Expiry != nil && !now.Before(in.Expiry.Time()):
		return fmt.Errorf("expired at %s: get a new one (refresh it)", in.Expiry.Time().UTC().Format(time.RFC3339))
	case in.NotBefore != nil && now.Before(in.NotBefore.Time()):
		return fmt.Errorf("not valid before %s", in.NotBefore.Time().UTC().Format(time.RFC3339))
	}
	return nil
}
