package bearer

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// MaxTokenSize bounds the size of an access token: a longer one is
// refused before it is parsed. Real JWT access tokens take 1 to 4 KiB.
const MaxTokenSize = 8 << 10

// DefaultLeeway is the clock skew allowed when checking a token's
// expiry, not-before and issued-at times.
const DefaultLeeway = time.Minute

// DefaultRefreshInterval is the least time between two fetches of the
// authorization server's keys: a token signed with a key the verifier
// does not hold makes it fetch them again (the server rotated its keys),
// at most once per interval, so that forged tokens cannot make it hammer
// the server.
const DefaultRefreshInterval = 10 * time.Second

// DefaultAlgorithms are the signature algorithms a JWT verifier accepts
// unless its config says: asymmetric ones only. "none" and the HMAC
// algorithms (HS256 …) are never accepted: a resource server holds no
// shared secret, and HMAC "signed" with a public key is a known forgery.
var DefaultAlgorithms = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}

// JWTConfig configures a JWT verifier.
type JWTConfig struct {
	// Issuer is the authorization server's issuer identifier, exactly as
	// its metadata names it (https://auth.example.com); tokens must carry
	// it as "iss". Required.
	Issuer string
	// Audience is this MCP server's canonical URL (RFC 8707;
	// https://mcp.example.com/mcp); tokens must list it in "aud".
	// Required.
	Audience string
	// Algorithms are the signature algorithms accepted (default
	// DefaultAlgorithms); asymmetric ones only.
	Algorithms []string
	// Leeway is the clock skew allowed (default DefaultLeeway).
	Leeway time.Duration
	// JWKSURL is where the issuer's keys are; when empty, the jwks_uri of
	// its metadata (RFC 8414, else OpenID Connect discovery).
	JWKSURL string
	// HTTPClient fetches the metadata and the keys (default: one with a
	// timeout of DefaultTimeout).
	HTTPClient *http.Client
	// RefreshInterval is the least time between two fetches of the keys
	// (default DefaultRefreshInterval).
	RefreshInterval time.Duration
	// CacheSize is how many verified tokens are remembered (default
	// DefaultCacheSize).
	CacheSize int
}

// JWT verifies JWT access tokens (RFC 9068) against the keys of one
// authorization server. It is safe for concurrent use.
//
// A token must be signed with one of the server's keys by an accepted
// algorithm (the key's own "alg", when it names one, must match), name
// the issuer, list the audience, carry a subject and an expiry, and be
// valid now (expiry, not-before, issued-at, with the leeway). Verified
// tokens are remembered until they expire, or until the key set changes.
type JWT struct {
	issuer, audience string
	algs             []jose.SignatureAlgorithm
	leeway           time.Duration
	keys             *keySet
	cache            *cache
}

// NewJWT returns a verifier for cfg's issuer and audience. It fetches the
// issuer's metadata (unless cfg.JWKSURL is set) and keys now, so that a
// wrong issuer or an unreachable server is an error here rather than on
// the first request.
func NewJWT(ctx context.Context, cfg JWTConfig) (*JWT, error) {
	if cfg.Issuer == "" {
		return nil, errors.New("bearer: JWTConfig.Issuer is empty: name the authorization server (its issuer URL)")
	}
	if err := checkAudience(cfg.Audience); err != nil {
		return nil, fmt.Errorf("bearer: %w", err)
	}
	algs, err := signatureAlgorithms(cfg.Algorithms)
	if err != nil {
		return nil, fmt.Errorf("bearer: %w", err)
	}
	client := defaultClient(cfg.HTTPClient)
	jwksURL := cfg.JWKSURL
	if jwksURL == "" {
		md, err := discover(ctx, client, cfg.Issuer)
		if err != nil {
			return nil, fmt.Errorf("bearer: %w", err)
		}
		if md.JWKSURI == "" {
			return nil, fmt.Errorf("bearer: the metadata of issuer %s has no jwks_uri: it publishes no keys to verify JWT access tokens with (use introspection)", cfg.Issuer)
		}
		jwksURL = md.JWKSURI
	}
	if _, err := checkServerURL("jwks_uri", jwksURL); err != nil {
		return nil, fmt.Errorf("bearer: %w", err)
	}
	v := &JWT{
		issuer:   cfg.Issuer,
		audience: cfg.Audience,
		algs:     algs,
		leeway:   cfg.Leeway,
		cache:    newCache(cfg.CacheSize),
		keys: &keySet{
			url:      jwksURL,
			client:   client,
			interval: cfg.RefreshInterval,
			fetching: make(chan struct{}, 1),
		},
	}
	if v.leeway <= 0 {
		v.leeway = DefaultLeeway
	}
	if v.keys.interval <= 0 {
		v.keys.interval = DefaultRefreshInterval
	}
	if err := v.keys.refresh(ctx, 0); err != nil {
		return nil, fmt.Errorf("bearer: the keys of issuer %s: %w", cfg.Issuer, err)
	}
	return v, nil
}

// checkAudience checks a resource's canonical URL (RFC 8707 section 2):
// an absolute http(s) URL without a fragment.
func checkAudience(aud string) error {
	if aud == "" {
		return errors.New("the audience is empty: give this server's canonical URL, such as https://mcp.example.com/mcp")
	}
	u, err := url.Parse(aud)
	switch {
	case err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http"):
		return fmt.Errorf("the audience %q is not an absolute http(s) URL: give this server's canonical URL, such as https://mcp.example.com/mcp", aud)
	case u.Fragment != "":
		return fmt.Errorf("the audience %q has a fragment: a canonical URL has none (RFC 8707)", aud)
	}
	return nil
}

// signatureAlgorithms checks the accepted algorithms, default
// DefaultAlgorithms.
func signatureAlgorithms(names []string) ([]jose.SignatureAlgorithm, error) {
	if len(names) == 0 {
		names = DefaultAlgorithms
	}
	algs := make([]jose.SignatureAlgorithm, 0, len(names))
	for _, n := range names {
		if !slices.Contains(DefaultAlgorithms, n) {
			return nil, fmt.Errorf("signature algorithm %q is not accepted: use asymmetric ones (%s); never none or HMAC", n, strings.Join(DefaultAlgorithms, ", "))
		}
		algs = append(algs, jose.SignatureAlgorithm(n))
	}
	return algs, nil
}

// accessClaims are the claims of an RFC 9068 access token the verifier
// reads besides the registered ones.
type accessClaims struct {
	jwt.Claims
	ClientID string `json:"client_id"`
	// AuthorizedParty names the client in tokens that follow OpenID
	// Connect rather than RFC 9068.
	AuthorizedParty string `json:"azp"`
	// Scope is RFC 9068's space-separated list; Scp the array some
	// servers (Ory Hydra, Microsoft) send instead.
	Scope string          `json:"scope"`
	Scp   json.RawMessage `json:"scp"`
}

// scopes returns the scopes granted, from "scope" or "scp".
func (c *accessClaims) scopes() []string {
	if c.Scope != "" {
		return strings.Fields(c.Scope)
	}
	var list []string
	if json.Unmarshal(c.Scp, &list) == nil {
		return list
	}
	var one string
	if json.Unmarshal(c.Scp, &one) == nil {
		return strings.Fields(one)
	}
	return nil
}

// Verify implements Verifier.
func (v *JWT) Verify(ctx context.Context, token string) (*Info, error) {
	if len(token) > MaxTokenSize {
		return nil, fmt.Errorf("%w: longer than %d bytes", ErrInvalidToken, MaxTokenSize)
	}
	d := digest(sha256.Sum256([]byte(token)))
	now := time.Now()
	gen := v.keys.generation()
	if info := v.cache.get(d, now, gen); info != nil {
		return info, nil
	}
	tok, err := jwt.ParseSigned(token, v.algs)
	if err != nil {
		return nil, fmt.Errorf("%w: not a JWT signed with an accepted algorithm (%s): %w", ErrInvalidToken, algNames(v.algs), err)
	}
	h := tok.Headers[0]
	keys := v.keys.lookup(h.KeyID, h.Algorithm)
	if len(keys) == 0 {
		// A key this verifier does not hold: the issuer may have rotated
		// its keys.
		if err := v.keys.refresh(ctx, gen); err != nil {
			return nil, err
		}
		gen = v.keys.generation()
		if keys = v.keys.lookup(h.KeyID, h.Algorithm); len(keys) == 0 {
			return nil, fmt.Errorf("%w: signed with key %q (%s), which issuer %s does not publish", ErrInvalidToken, h.KeyID, h.Algorithm, v.issuer)
		}
	}
	var claims accessClaims
	var raw json.RawMessage
	verified := false
	for _, k := range keys {
		if tok.Claims(k, &claims, &raw) == nil {
			verified = true
			break
		}
	}
	if !verified {
		return nil, fmt.Errorf("%w: its signature does not verify with the key of issuer %s", ErrInvalidToken, v.issuer)
	}
	if err := v.check(&claims, now); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidToken, err)
	}
	info := &Info{
		Issuer:   claims.Issuer,
		Subject:  claims.Subject,
		ClientID: cmpOr(claims.ClientID, claims.AuthorizedParty),
		Scopes:   claims.scopes(),
		Audience: claims.Audience,
		Expiry:   claims.Expiry.Time(),
		Claims:   raw,
	}
	info.callerID = info.CallerID()
	v.cache.put(d, info, info.Expiry.Add(v.leeway), gen)
	return info, nil
}

// check checks a verified token's claims at now.
func (v *JWT) check(c *accessClaims, now time.Time) error {
	switch {
	case c.Issuer != v.issuer:
		return fmt.Errorf("issued by another issuer than %s", v.issuer)
	case !c.Audience.Contains(v.audience):
		return fmt.Errorf("issued for another audience than %s (this server): get a token for this server, with resource=%s (RFC 8707)", v.audience, v.audience)
	case c.Subject == "":
		return errors.New("it has no subject (sub)")
	case c.Expiry == nil:
		return errors.New("it has no expiry (exp)")
	case now.After(c.Expiry.Time().Add(v.leeway)):
		return fmt.Errorf("expired at %s: get a new one (refresh it)", c.Expiry.Time().UTC().Format(time.RFC3339))
	case c.NotBefore != nil && now.Add(v.leeway).Before(c.NotBefore.Time()):
		return fmt.Errorf("not valid before %s", c.NotBefore.Time().UTC().Format(time.RFC3339))
	case c.IssuedAt != nil && now.Add(v.leeway).Before(c.IssuedAt.Time()):
		return fmt.Errorf("issued in the future (%s)", c.IssuedAt.Time().UTC().Format(time.RFC3339))
	}
	return nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func algNames(algs []jose.SignatureAlgorithm) string {
	names := make([]string, len(algs))
	for i, a := range algs {
		names[i] = string(a)
	}
	return strings.Join(names, ", ")
}

// keySet holds the public keys of an authorization server, fetched from
// its JWKS URL (RFC 7517), and fetches them again on demand, at most once
// per interval.
type keySet struct {
	url      string
	client   *http.Client
	interval time.Duration

	mu   sync.RWMutex
	keys []publicKey
	gen  uint64 // counts the changes of keys

	// fetching is held by the one fetch under way; fetched (the time of
	// the last one) and lastErr are guarded by it.
	fetching chan struct{}
	fetched  time.Time
	lastErr  error
}

// publicKey is one usable key of the set.
type publicKey struct {
	id  string
	alg string // the key's "alg"; "" when it names none
	key crypto.PublicKey
}

func (ks *keySet) generation() uint64 {
	ks.mu.RLock()
	defer ks.mu.RUnlock()
	return ks.gen
}

// lookup returns the public keys that may have signed a token whose
// header names kid and alg: the key of that id (every key when kid is
// empty) whose "alg" is alg or unset.
func (ks *keySet) lookup(kid, alg string) []crypto.PublicKey {
	ks.mu.RLock()
	defer ks.mu.RUnlock()
	var out []crypto.PublicKey
	for _, k := range ks.keys {
		if (kid == "" || k.id == kid) && (k.alg == "" || k.alg == alg) {
			out = append(out, k.key)
		}
	}
	return out
}

// refresh fetches the keys again, unless they changed since generation
// seen (another request fetched them) or were fetched less than an
// interval ago (then the error of that fetch, if any, is returned). It
// waits for a fetch under way rather than start a second one.
func (ks *keySet) refresh(ctx context.Context, seen uint64) error {
	select {
	case ks.fetching <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("%w: waiting for the issuer's keys: %w", ErrUnavailable, context.Cause(ctx))
	}
	defer func() { <-ks.fetching }()
	if ks.generation() != seen {
		return nil // fetched, and changed, meanwhile
	}
	if !ks.fetched.IsZero() && time.Since(ks.fetched) < ks.interval {
		return ks.lastErr
	}
	ks.fetched = time.Now()
	// The fetch serves every request waiting for it: it is bounded by the
	// client's timeout, not ended with the one request that started it.
	keys, err := ks.fetch(context.WithoutCancel(ctx))
	ks.lastErr = err
	if err != nil {
		return err
	}
	ks.mu.Lock()
	defer ks.mu.Unlock()
	if !slices.EqualFunc(keys, ks.keys, func(a, b publicKey) bool {
		return a.id == b.id && a.alg == b.alg && a.key.(interface{ Equal(crypto.PublicKey) bool }).Equal(b.key)
	}) {
		ks.keys = keys
		ks.gen++
	}
	return nil
}

// fetch reads the key set and keeps its usable keys (see usableKeys).
func (ks *keySet) fetch(ctx context.Context) ([]publicKey, error) {
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if _, err := getJSON(ctx, ks.client, ks.url, &set); err != nil {
		return nil, fmt.Errorf("key set: %w", err)
	}
	keys := usableKeys(set.Keys)
	if len(keys) == 0 {
		return nil, fmt.Errorf("key set %s has no usable key (public RSA, EC or Ed25519 signature keys)", ks.url)
	}
	return keys, nil
}

// usableKeys returns the usable keys of a key set: public signature keys
// (RSA of 2048 bits or more, EC, Ed25519) whose "alg", if any, is an
// accepted one. Keys of other types (symmetric "oct" keys above all),
// for other uses or malformed are left out, as RFC 7517 section 5
// advises for keys not understood.
func usableKeys(set []json.RawMessage) []publicKey {
	var keys []publicKey
	for _, raw := range set {
		var jwk jose.JSONWebKey
		if json.Unmarshal(raw, &jwk) != nil || !jwk.Valid() || (jwk.Use != "" && jwk.Use != "sig") {
			continue
		}
		if jwk.Algorithm != "" && !slices.Contains(DefaultAlgorithms, jwk.Algorithm) {
			continue // "none", HS256 …
		}
		var pub crypto.PublicKey
		switch k := jwk.Public().Key.(type) {
		case *rsa.PublicKey:
			if k.Size() < 2048/8 {
				continue
			}
			pub = k
		case *ecdsa.PublicKey:
			pub = k
		case ed25519.PublicKey:
			pub = k
		default:
			continue
		}
		keys = append(keys, publicKey{id: jwk.KeyID, alg: jwk.Algorithm, key: pub})
	}
	return keys
}
