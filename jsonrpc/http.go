package jsonrpc

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

// ReadBody reads an HTTP body holding one JSON-RPC message, refusing bodies
// over limit bytes (limit <= 0 means DefaultMaxMessageSize) with a
// *TooLargeError. size is the length the body declares (Content-Length),
// or -1: a declared length lets the body be read into one buffer of the
// right size.
func ReadBody(r io.Reader, size int64, limit int) ([]byte, error) {
	if limit <= 0 {
		limit = DefaultMaxMessageSize
	}
	var b bytes.Buffer
	if size > 0 && size <= int64(limit) {
		b.Grow(int(size) + bytes.MinRead) // ReadFrom wants MinRead spare bytes before it reads
	}
	n, err := b.ReadFrom(io.LimitReader(r, int64(limit)+1))
	if err != nil {
		return nil, fmt.Errorf("reading body: %w", err)
	}
	if n > int64(limit) {
		return nil, &TooLargeError{Size: int(n), Limit: limit}
	}
	return b.Bytes(), nil
}

// IsBatch reports whether a body is a JSON array, i.e. a JSON-RPC batch.
func IsBatch(body []byte) bool {
	b := bytes.TrimLeft(body, " \t\r\n")
	return len(b) > 0 && b[0] == '['
}

// ErrBatch is returned for JSON-RPC batches, which MCP removed in 2025-06-18.
var ErrBatch = errors.New("JSON-RPC batches are not supported")
