// Package wellknown names the well-known URLs of authorization server
// metadata in the order MCP's authorization gives, for the client (package
// oauth) and the resource server (package bearer) alike.
package wellknown

import (
	"net/url"
	"strings"
)

// AuthorizationServer returns the URLs of the metadata of the
// authorization server whose issuer identifier is issuer, in the order
// MCP clients try them: OAuth 2.0 Authorization Server Metadata (RFC
// 8414) with the issuer's path inserted after the well-known name, OpenID
// Connect Discovery with it inserted, then, for an issuer with a path,
// OpenID Connect Discovery appended to the path.
func AuthorizationServer(issuer *url.URL) []string {
	origin := (&url.URL{Scheme: issuer.Scheme, Host: issuer.Host}).String()
	path := strings.TrimRight(issuer.EscapedPath(), "/")
	urls := []string{
		origin + "/.well-known/oauth-authorization-server" + path,
		origin + "/.well-known/openid-configuration" + path,
	}
	if path != "" {
		urls = append(urls, origin+path+"/.well-known/openid-configuration")
	}
	return urls
}
