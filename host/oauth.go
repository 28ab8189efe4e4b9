package host

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/toolwire/toolwire/oauth"
)

// OAuthConfig says how the host logs in to an HTTP server that asks for
// it (the MCP authorization flow). Every key is optional: without any,
// the host registers itself with the server's authorization server and
// the user logs in with the browser. The keys are those of Claude Code's
// and Gemini CLI's "oauth" object (clientId, clientSecret, scopes,
// callbackPort, redirectUri, enabled); Cursor's "auth" object
// (CLIENT_ID, CLIENT_SECRET, scopes) is read too.
type OAuthConfig struct {
	// Enabled false turns OAuth off for the server (Gemini CLI's key):
	// a 401 is then an error like any other.
	Enabled *bool `json:"enabled,omitempty"`
	// ClientID and ClientSecret are a client registered beforehand with
	// the authorization server, for one that does not let clients
	// register themselves. Write the secret as ${VAR}.
	ClientID     string `json:"clientId,omitempty"`
	ClientSecret string `json:"clientSecret,omitempty"`
	// Scopes replace those the server asks for: a list, or one string of
	// scopes separated by spaces (Claude Code's form).
	Scopes Scopes `json:"scopes,omitempty"`
	// CallbackPort fixes the port of the login's redirect,
	// http://localhost:PORT/callback, as Claude Code does, for a client
	// registered with that redirect URI. RedirectURI gives the whole URI
	// instead (Gemini CLI's key); it must be http on a loopback host.
	CallbackPort int    `json:"callbackPort,omitempty"`
	RedirectURI  string `json:"redirectUri,omitempty"`
	// TokenEndpointAuthMethod is client_secret_basic, client_secret_post
	// or none; empty chooses from the authorization server's metadata.
	TokenEndpointAuthMethod string `json:"tokenEndpointAuthMethod,omitempty"`
	// ClientMetadataURL is the https URL of a Client ID Metadata Document
	// to use as the client id where the authorization server takes one.
	ClientMetadataURL string `json:"clientMetadataUrl,omitempty"`

	// GrantType "client_credentials" logs in as the client itself, with
	// no user and no browser (the oauth-client-credentials extension),
	// for CI and services: with clientId and clientSecret, or with a
	// private key that signs a JWT assertion (privateKeyFile, a PEM file
	// relative to the configuration file, or privateKey, the PEM itself,
	// as ${VAR}), keyId and alg (e.g. ES256) optional. Empty or
	// "authorization_code" is a user's login.
	GrantType      string `json:"grantType,omitempty"`
	PrivateKey     string `json:"privateKey,omitempty"`
	PrivateKeyFile string `json:"privateKeyFile,omitempty"`
	KeyID          string `json:"keyId,omitempty"`
	Alg            string `json:"alg,omitempty"`

	// CursorClientID and CursorClientSecret are Cursor's spellings,
	// CLIENT_ID and CLIENT_SECRET, read into ClientID and ClientSecret.
	CursorClientID     string `json:"CLIENT_ID,omitempty"`
	CursorClientSecret string `json:"CLIENT_SECRET,omitempty"`
}

// The grant types of OAuthConfig.GrantType.
const (
	GrantAuthorizationCode = "authorization_code"
	GrantClientCredentials = "client_credentials"
)

// Scopes are OAuth scopes, read from a JSON list or from one string of
// scopes separated by spaces.
type Scopes []string

// UnmarshalJSON reads ["a", "b"] or "a b".
func (s *Scopes) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*s = strings.Fields(one)
		return nil
	}
	var list []string
	if err := json.Unmarshal(b, &list); err != nil {
		return errors.New(`want a list of scopes or one string of them separated by spaces`)
	}
	*s = list
	return nil
}

// oauthKeys are the keys an "oauth" or "auth" object may hold.
var oauthKeys = []string{"enabled", "clientId", "clientSecret", "scopes", "callbackPort", "redirectUri",
	"tokenEndpointAuthMethod", "clientMetadataUrl", "grantType", "privateKey", "privateKeyFile", "keyId", "alg",
	"CLIENT_ID", "CLIENT_SECRET"}

// oauthIgnoredKeys are other apps' keys that toolwire does without: it
// finds the authorization server from the MCP server itself (RFC 9728).
var oauthIgnoredKeys = []string{"authServerMetadataUrl", "authorizationUrl", "tokenUrl", "audiences", "tokenParamName", "issuer"}

// oauthSecretKeys are the keys that hold secrets, which belong in the
// environment rather than in the file.
var oauthSecretKeys = []string{"clientSecret", "CLIENT_SECRET", "privateKey"}

// expand resolves ${VAR} in the string values; prefix names the object
// in errors.
func (o *OAuthConfig) expand(prefix string, exp func(key, s string) string) {
	for key, p := range map[string]*string{
		"clientId": &o.ClientID, "clientSecret": &o.ClientSecret, "redirectUri": &o.RedirectURI,
		"tokenEndpointAuthMethod": &o.TokenEndpointAuthMethod, "clientMetadataUrl": &o.ClientMetadataURL,
		"grantType": &o.GrantType, "privateKey": &o.PrivateKey, "privateKeyFile": &o.PrivateKeyFile,
		"keyId": &o.KeyID, "alg": &o.Alg, "CLIENT_ID": &o.CursorClientID, "CLIENT_SECRET": &o.CursorClientSecret,
	} {
		*p = exp(prefix+"."+key, *p)
	}
	for i := range o.Scopes {
		o.Scopes[i] = exp(prefix+".scopes", o.Scopes[i])
	}
}

// checkOAuth checks the "oauth" (or "auth") object and completes it: the
// Cursor spellings folded in, the private key file read. It returns the
// warnings: unknown keys, keys toolwire does without, secrets written in
// the file.
func (sc *ServerConfig) checkOAuth(where, dir string, keys map[string]json.RawMessage) ([]string, error) {
	key := "oauth"
	switch {
	case sc.OAuth != nil && sc.Auth != nil:
		return nil, fmt.Errorf(`%s: set "oauth" or "auth" (Cursor's name for it), not both`, where)
	case sc.Auth != nil:
		sc.OAuth, sc.Auth, key = sc.Auth, nil, "auth"
	case sc.OAuth == nil:
		return nil, nil
	}
	o := sc.OAuth
	at := fmt.Sprintf("%s, key %q", where, key)
	if sc.Command != "" {
		return nil, fmt.Errorf("%s: OAuth is for servers reached over HTTP (\"url\"); a stdio server takes its credentials from its environment (\"env\")", at)
	}
	var warnings []string
	var raw map[string]json.RawMessage
	_ = json.Unmarshal(keys[key], &raw)
	for _, k := range sortedKeys(raw) {
		switch {
		case slices.Contains(oauthIgnoredKeys, k):
			warnings = append(warnings, fmt.Sprintf("%s: %q ignored: toolwire finds the authorization server from the MCP server itself (RFC 9728)", at, k))
		case !slices.Contains(oauthKeys, k):
			warnings = append(warnings, fmt.Sprintf("%s: unknown key %q ignored (known: %s)", at, k, strings.Join(oauthKeys, ", ")))
		case slices.Contains(oauthSecretKeys, k) && !strings.Contains(string(raw[k]), "${"):
			warnings = append(warnings, fmt.Sprintf("%s: %q is written in the file: keep the secret in the environment and write \"${VAR}\" instead", at, k))
		}
	}
	for _, f := range []struct {
		name       string
		from, into *string
	}{{"CLIENT_ID", &o.CursorClientID, &o.ClientID}, {"CLIENT_SECRET", &o.CursorClientSecret, &o.ClientSecret}} {
		if *f.from == "" {
			continue
		}
		if *f.into != "" && *f.into != *f.from {
			return nil, fmt.Errorf("%s: %q and its other spelling disagree: keep one", at, f.name)
		}
		*f.into, *f.from = *f.from, ""
	}
	switch o.GrantType {
	case "", GrantAuthorizationCode, GrantClientCredentials:
	default:
		return nil, fmt.Errorf("%s: grantType %q: use %q (a user logs in with the browser; the default) or %q (the client itself, with no user)", at, o.GrantType, GrantAuthorizationCode, GrantClientCredentials)
	}
	switch o.TokenEndpointAuthMethod {
	case "", "client_secret_basic", "client_secret_post", "none":
	default:
		return nil, fmt.Errorf("%s: tokenEndpointAuthMethod %q: use client_secret_basic, client_secret_post or none", at, o.TokenEndpointAuthMethod)
	}
	if o.CallbackPort < 0 || o.CallbackPort > 65535 {
		return nil, fmt.Errorf("%s: callbackPort %d is not a port (1 to 65535)", at, o.CallbackPort)
	}
	if o.CallbackPort != 0 && o.RedirectURI != "" {
		return nil, fmt.Errorf("%s: set callbackPort or redirectUri, not both", at)
	}
	if o.PrivateKeyFile != "" {
		if o.PrivateKey != "" {
			return nil, fmt.Errorf("%s: set privateKey or privateKeyFile, not both", at)
		}
		p := o.PrivateKeyFile
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("%s, privateKeyFile: %w (a PEM file; a relative path is relative to the configuration file)", at, err)
		}
		o.PrivateKey = string(b)
	}
	if o.GrantType == GrantClientCredentials {
		switch {
		case o.ClientID == "":
			return nil, fmt.Errorf("%s: grantType client_credentials needs clientId", at)
		case (o.ClientSecret == "") == (o.PrivateKey == ""):
			return nil, fmt.Errorf("%s: grantType client_credentials needs clientSecret or a private key (privateKeyFile or privateKey), one of them", at)
		}
	} else if o.PrivateKey != "" {
		return nil, fmt.Errorf("%s: a private key signs the client's own assertions: set \"grantType\": %q with it", at, GrantClientCredentials)
	}
	return warnings, nil
}

// oauthOff says the server is not to use OAuth: a stdio server, one
// whose "oauth" says enabled false, or one that sends its own
// Authorization header.
func (sc *ServerConfig) oauthOff() bool {
	if sc.URL == "" || (sc.OAuth != nil && sc.OAuth.Enabled != nil && !*sc.OAuth.Enabled) {
		return true
	}
	for k := range sc.Headers {
		if http.CanonicalHeaderKey(k) == "Authorization" {
			return true
		}
	}
	return false
}

// ClientCredentials says the server is reached with the client
// credentials grant: a service's own login, which needs no user.
func (sc *ServerConfig) ClientCredentials() bool {
	return !sc.oauthOff() && sc.OAuth != nil && sc.OAuth.GrantType == GrantClientCredentials
}

// UsesOAuth says the host may log in to the server with OAuth: an HTTP
// server without an Authorization header of its own and without
// "enabled": false.
func (sc *ServerConfig) UsesOAuth() bool { return !sc.oauthOff() }

// RedirectURI is the redirect URI a login to the server listens on:
// redirectUri, else http://localhost:PORT/callback for callbackPort, else
// empty (http://127.0.0.1 on a free port; see oauth.ListenLoopback).
func (sc *ServerConfig) RedirectURI() string {
	switch o := sc.OAuth; {
	case o == nil:
		return ""
	case o.RedirectURI != "":
		return o.RedirectURI
	case o.CallbackPort != 0:
		return "http://localhost:" + strconv.Itoa(o.CallbackPort) + "/callback"
	}
	return ""
}

// LoginRequiredError is a server that needs a user's login before the
// host can use it: run the login (toolwire login SERVER, or
// oauth.Config.Login with the Config of Host.OAuth), then try again.
type LoginRequiredError struct {
	Server string
	// Command is how to log in (Host.LoginCommand with the server's name);
	// empty when the host was not told.
	Command string
	Err     error
}

// Error says which server needs a login, and how to log in.
func (e *LoginRequiredError) Error() string {
	if e.Command != "" {
		return fmt.Sprintf("server %q needs a login: run %s", e.Server, e.Command)
	}
	return fmt.Sprintf("server %q needs a login", e.Server)
}

// Unwrap returns the error that said so (it wraps oauth.ErrLoginRequired).
func (e *LoginRequiredError) Unwrap() error { return e.Err }

// loginError makes an error that says a login is needed a
// *LoginRequiredError; other errors are returned as they are.
func (s *server) loginError(err error) error {
	var lr *LoginRequiredError
	if err == nil || !errors.Is(err, oauth.ErrLoginRequired) || errors.As(err, &lr) {
		return err
	}
	e := &LoginRequiredError{Server: s.cfg.Name, Err: err}
	if s.host.LoginCommand != "" {
		e.Command = fmt.Sprintf(s.host.LoginCommand, s.cfg.Name)
	}
	return e
}

// OAuth returns the OAuth client configuration of an HTTP server: its
// URL as the resource, the host's token store (Tokens), and the client
// and scopes its configuration names. Authorize is nil: a request that
// needs a login fails with oauth.ErrLoginRequired. To log in, set
// RedirectURL and Authorize (see oauth.Loopback) and call Login. The
// server need not be one of the host's: a login may name a URL.
func (h *Host) OAuth(sc *ServerConfig) *oauth.Config {
	c := &oauth.Config{Resource: sc.URL, Store: h.tokens(), ClientName: h.Client.Info.Name}
	if o := sc.OAuth; o != nil {
		c.Scopes = o.Scopes
		c.TokenEndpointAuthMethod = o.TokenEndpointAuthMethod
		c.ClientMetadataURL = o.ClientMetadataURL
		if o.GrantType == GrantClientCredentials {
			c.ClientCredentials = &oauth.ClientCredentials{
				ClientID: o.ClientID, ClientSecret: o.ClientSecret, PrivateKeyPEM: o.PrivateKey, KeyID: o.KeyID, Alg: o.Alg,
			}
		} else {
			c.ClientID, c.ClientSecret = o.ClientID, o.ClientSecret
		}
	}
	return c
}

// tokens returns the store of grants: Tokens, else one in memory for the
// host's life.
func (h *Host) tokens() oauth.Store {
	if h.Tokens != nil {
		return h.Tokens
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.memTokens == nil {
		h.memTokens = &oauth.MemoryStore{}
	}
	return h.memTokens
}

// httpClient returns the HTTP client of an HTTP server: one whose
// transport adds the server's OAuth tokens, made once per server so that
// its tokens stay in memory across reconnections; nil (the default
// client) for a server that does not use OAuth.
func (s *server) httpClient() *http.Client {
	if s.cfg.oauthOff() {
		return nil
	}
	s.clientOnce.Do(func() {
		s.client = &http.Client{Transport: s.host.OAuth(s.cfg).Transport(http.DefaultTransport)}
	})
	return s.client
}
