package host

import (
	"net/http"

	"github.com/toolwire/toolwire/mcp"
)

// httpTransport returns the client transport for an HTTP server.
func (h *Host) httpTransport(c *ServerConfig) mcp.ClientTransport {
	hdr := http.Header{}
	for k, v := range c.Headers {
		hdr.Set(k, v)
	}
	if c.Type == "sse" {
		return &mcp.SSETransport{URL: c.URL, Header: hdr}
	}
	return &mcp.HTTPTransport{URL: c.URL, Header: hdr}
}
