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
// or -1: a body of a declared length is read into one buffer of that size,
// and only that much of it is read. A body that hands over its bytes (a
// TakeBytes method, as package http1's bodies have, read whole already) is
// taken without a copy.
func ReadBody(r io.Reader, size int64, limit int) ([]byte, error) {
	if limit <= 0 {
		limit = DefaultMaxMessageSize
	}
	if t, ok := r.(interface{ TakeBytes() []byte }); ok && size >= 0 && size <= int64(limit) {
		return t.TakeBytes(), nil
	}
	if size >= 0 && size <= int64(limit) {
		// One buffer of the right size; a body that ends early fails, and
		// one longer than it said is cut by net/http itself.
		buf := make([]byte, size)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, fmt.Errorf("reading body: %w", err)
		}
		return buf, nil
	}
	var b bytes.Buffer
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
