package host

import (
	"net/http"

	"github.com/toolwire/toolwire/mcp"
)

// httpTransport returns the client transport for an HTTP server.
func (h *Host) httpTransport(c *ServerConfig) mcp.ClientTransport {
	if c.Type == "sse" {
		return sseTransport(c)
	}
	return &mcp.HTTPTransport{URL: c.URL, Header: headers(c)}
}

// sseTransport returns the HTTP+SSE (2024-11-05) transport for a server.
func sseTransport(c *ServerConfig) mcp.ClientTransport {
	return &mcp.SSETransport{URL: c.URL, Header: headers(c)}
}

func headers(c *ServerConfig) http.Header {
	hdr := http.Header{}
	for k, v := range c.Headers {
		hdr.Set(k, v)
	}
	return hdr
}
