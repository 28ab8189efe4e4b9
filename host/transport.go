package host

import (
	"net/http"

	"github.com/toolwire/toolwire/mcp"
)

// httpTransport returns the client transport of an HTTP server.
func (s *server) httpTransport() mcp.ClientTransport {
	if s.cfg.Type == "sse" {
		return s.sseTransport()
	}
	return &mcp.HTTPTransport{URL: s.cfg.URL, Header: headers(s.cfg), HTTPClient: s.httpClient()}
}

// sseTransport returns the HTTP+SSE (2024-11-05) transport of a server.
func (s *server) sseTransport() mcp.ClientTransport {
	return &mcp.SSETransport{URL: s.cfg.URL, Header: headers(s.cfg), HTTPClient: s.httpClient()}
}

func headers(c *ServerConfig) http.Header {
	hdr := http.Header{}
	for k, v := range c.Headers {
		hdr.Set(k, v)
	}
	return hdr
}
