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
// or -1; a body of a declared length is read up to that length only, and
// one that ends early fails with io.ErrUnexpectedEOF. The buffer grows,
// by doubling from 64 KiB, as the bytes arrive, never past the declared
// length or one byte over the limit.
func ReadBody(r io.Reader, size int64, limit int) ([]byte, error) {
	if limit <= 0 {
		limit = DefaultMaxMessageSize
	}
	most := int64(limit) + 1 // one byte over the limit tells a body is too large
	declared := size >= 0 && size <= int64(limit)
	if declared {
		most = size
	}
	buf := make([]byte, 0, min(most, readAhead))
	for int64(len(buf)) < most {
		if len(buf) == cap(buf) {
			grown := make([]byte, len(buf), min(most, 2*int64(cap(buf))))
			copy(grown, buf)
			buf = grown
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			if declared && int64(len(buf)) < size {
				return nil, fmt.Errorf("reading body: %w", io.ErrUnexpectedEOF)
			}
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading body: %w", err)
		}
	}
	if len(buf) > limit {
		return nil, &TooLargeError{Size: len(buf), Limit: limit}
	}
	return buf, nil
}

// IsBatch reports whether a body is a JSON array, i.e. a JSON-RPC batch.
func IsBatch(body []byte) bool {
	b := bytes.TrimLeft(body, " \t\r\n")
	return len(b) > 0 && b[0] == '['
}

// ErrBatch is returned for JSON-RPC batches, which MCP removed in 2025-06-18.
var ErrBatch = errors.New("JSON-RPC batches are not supported")
