package mcp

import (
	"io"

	"github.com/toolwire/toolwire/jsonrpc"
)

// benchSSEReader reads events' data with the client's reader.
func benchSSEReader(r io.Reader) func() ([]byte, error) {
	s := newSSEReader(r, jsonrpc.DefaultMaxMessageSize)
	return func() ([]byte, error) {
		ev, err := s.next()
		return ev.Data, err
	}
}
