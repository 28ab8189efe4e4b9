package jsonrpc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
)

// DefaultMaxMessageSize is the largest message a codec accepts unless told
// otherwise: 16 MiB.
const DefaultMaxMessageSize = 16 << 20

// ErrTooLarge reports a message over the size limit. The stream stays usable:
// the oversized message was skipped.
var ErrTooLarge = errors.New("message too large")

// TooLargeError describes a skipped oversized message.
type TooLargeError struct {
	Size  int // bytes read before giving up (at least Limit+1)
	Limit int
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("message of more than %d bytes exceeds the limit of %d bytes; it was discarded", e.Limit, e.Limit)
}

// Is makes errors.Is(err, ErrTooLarge) true.
func (e *TooLargeError) Is(target error) bool { return target == ErrTooLarge }

// LineReader reads newline-delimited messages, as on MCP's stdio transport.
// Blank lines are skipped. A line over the limit is discarded up to its end
// and reported as a *TooLargeError; reading can go on after it. A read
// error other than the end of input (a read deadline, say) keeps the part
// of the line read so far: the next ReadLine goes on from there.
type LineReader struct {
	r     *bufio.Reader
	limit int
	buf   []byte
	// The line in progress when a read failed.
	midLine, tooLarge bool
	// hint is the size of the last buffer handed over by release.
	hint int
}

// NewLineReader returns a reader of lines from r; limit <= 0 means
// DefaultMaxMessageSize.
func NewLineReader(r io.Reader, limit int) *LineReader {
	if limit <= 0 {
		limit = DefaultMaxMessageSize
	}
	return &LineReader{r: bufio.NewReaderSize(r, 64<<10), limit: limit}
}

// ReadLine returns the next non-blank line without its line ending. The slice
// is valid until the next call. At the end of input it returns io.EOF.
func (lr *LineReader) ReadLine() ([]byte, error) {
	for {
		if !lr.midLine {
			lr.buf = lr.buf[:0]
			lr.tooLarge = false
		}
		lr.midLine = false
		for {
			chunk, err := lr.r.ReadSlice('\n')
			if cap(lr.buf) == 0 && err == bufio.ErrBufferFull && lr.hint > 0 {
				// A large line again, after the last one was handed
				// over: make room for one as large at once.
				lr.buf = make([]byte, 0, lr.hint)
			}
			if !lr.tooLarge {
				if len(lr.buf)+len(chunk) > lr.limit+2 { // +2 for a "\r\n" ending
					lr.tooLarge = true
					lr.buf = lr.buf[:0]
				} else {
					lr.buf = append(lr.buf, chunk...)
				}
			}
			if err == bufio.ErrBufferFull {
				continue
			}
			// The limit applies to the message, without its line ending.
			if !lr.tooLarge && len(bytes.TrimRight(lr.buf, "\r\n")) > lr.limit {
				lr.tooLarge = true
				lr.buf = lr.buf[:0]
			}
			if err != nil {
				if err != io.EOF {
					lr.midLine = true // go on from here next time
					return nil, err
				}
				if !lr.tooLarge && len(bytes.TrimSpace(lr.buf)) > 0 {
					return bytes.TrimSpace(lr.buf), nil
				}
				if lr.tooLarge {
					lr.tooLarge = false
					return nil, &TooLargeError{Size: lr.limit + 1, Limit: lr.limit}
				}
				return nil, err
			}
			break
		}
		if lr.tooLarge {
			return nil, &TooLargeError{Size: lr.limit + 1, Limit: lr.limit}
		}
		line := bytes.TrimRight(lr.buf, "\r\n")
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		return line, nil
	}
}

// release hands the buffer of the line ReadLine last returned over to the
// caller: the next line is read into a new buffer.
func (lr *LineReader) release() {
	if !lr.midLine {
		lr.hint = min(cap(lr.buf), lr.limit+2)
		lr.buf = nil
	}
}

// Decode decodes the line ReadLine last returned. A line of ownLimit bytes
// or more is decoded in place, sparing a copy of a large
// message, and the reader reads on into a new buffer; a shorter one is
// copied (Decode), so that the reader's buffer serves again.
func (lr *LineReader) Decode(line []byte) (*Message, error) {
	if len(line) >= ownLimit {
		lr.release()
		return decodeOwned(line)
	}
	return Decode(line)
}

// ownLimit is the size from which a line is decoded in place rather than
// copied.
const ownLimit = 64 << 10

// LineWriter writes messages as newline-delimited JSON. It is safe for
// concurrent use: each message is written whole.
type LineWriter struct {
	mu  sync.Mutex
	w   io.Writer
	buf []byte
}

// NewLineWriter returns a writer of newline-delimited messages to w.
func NewLineWriter(w io.Writer) *LineWriter { return &LineWriter{w: w} }

// largeMessage is the size from which a message is written in parts (its
// params or result as they are) rather than copied into one buffer first.
const largeMessage = 64 << 10

// Write writes m followed by a newline.
func (lw *LineWriter) Write(m *Message) error {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if len(m.Params) >= largeMessage || len(m.Result) >= largeMessage {
		if _, err := m.WriteTo(lw.w); err != nil {
			return err
		}
		_, err := lw.w.Write([]byte{'\n'})
		return err
	}
	lw.buf = m.Append(lw.buf[:0])
	lw.buf = append(lw.buf, '\n')
	_, err := lw.w.Write(lw.buf)
	if cap(lw.buf) > 1<<20 {
		lw.buf = nil // don't pin a large buffer after a large message
	}
	return err
}

// WriteRaw writes an already encoded message followed by a newline.
func (lw *LineWriter) WriteRaw(b []byte) error {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	lw.buf = append(append(lw.buf[:0], b...), '\n')
	_, err := lw.w.Write(lw.buf)
	if cap(lw.buf) > 1<<20 {
		lw.buf = nil
	}
	return err
}
