package jsonrpc

import "github.com/toolwire/toolwire/internal/fastpath"

func init() {
	fastpath.DecodeOwned = func(data []byte) (any, error) { return decodeOwned(data) }
}
