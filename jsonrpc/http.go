package jsonrpc

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

// readAhead bounds what ReadBody allocates for a body before its bytes
// arrive: a declared length is a promise, not bytes, and a client that
// declares megabytes and sends nothing must not cost megabytes.
const readAhead = 64 << 10

// ReadBody reads an HTTP body holding one JSON-RPC message, refusing bodies
// over limit bytes (limit <= 0 means DefaultMaxMessageSize) with a
// *TooLargeError. size is the length the body declares (Content-Length),
// or -1. A body of a declared length is read up to that length, into a
// buffer that grows, by doubling, as its bytes arrive (up to 64 KiB at
// once); one that ends early fails with io.ErrUnexpectedEOF.
func ReadBody(r io.Reader, size int64, limit int) ([]byte, error) {
	if limit <= 0 {
		limit = DefaultMaxMessageSize
	}
	if size >= 0 && size <= int64(limit) {
		buf := make([]byte, min(size, readAhead))
		n := 0
		for {
			m, err := io.ReadFull(r, buf[n:])
			n += m
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			if err != nil {
				return nil, fmt.Errorf("reading body: %w", err)
			}
			if int64(n) == size {
				return buf, nil
			}
			grown := make([]byte, min(size, 2*int64(len(buf))))
			copy(grown, buf)
			buf = grown
		}
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
