package driver

import (
	"bufio"
	"errors"
	"fmt"
	"io"
)

// Stream is an MCP session over any pair of byte streams carrying
// newline-delimited JSON (the stdio transport's framing): a spawned
// process's stdin/stdout (see [Stdio]) or in-process pipes to a server
// running in this process. It allocates nothing per call once warmed up,
// so allocations measured around it belong to the server.
type Stream struct {
	w io.Writer
	r *bufio.Reader

	nextID int64
	wbuf   []byte // request being written
	line   []byte // long-line accumulator
	idBuf  [24]byte
}

// NewStream performs the initialize handshake with the server reading w's
// other end and writing r's.
func NewStream(r io.Reader, w io.Writer) (*Stream, error) {
	s := newStream(r, w)
	if err := s.initialize(); err != nil {
		return nil, err
	}
	return s, nil
}

func newStream(r io.Reader, w io.Writer) *Stream {
	return &Stream{w: w, r: bufio.NewReaderSize(r, 64<<10), wbuf: make([]byte, 0, 4096)}
}

func (s *Stream) initialize() error {
	res, err := s.Call(initCall)
	if err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	if _, err := checkInitResult(res); err != nil {
		return err
	}
	s.wbuf = append(append(s.wbuf[:0], initializedNote...), '\n')
	_, err = s.w.Write(s.wbuf)
	return err
}

// Call implements [Conn].
func (s *Stream) Call(c *Call) ([]byte, error) {
	s.nextID++
	id := s.nextID
	s.wbuf = append(c.AppendRequest(s.wbuf[:0], id), '\n')
	if _, err := s.w.Write(s.wbuf); err != nil {
		return nil, fmt.Errorf("writing request: %w", err)
	}
	for {
		line, err := s.readLine()
		if err != nil {
			return nil, fmt.Errorf("reading response: %w", err)
		}
		if len(line) == 0 {
			continue
		}
		res, ok, err := matchResponse(line, id, &s.idBuf)
		if ok || err != nil {
			return res, err
		}
	}
}

// Close closes the writing side if it is an io.Closer (the server then sees
// the end of its input).
func (s *Stream) Close() error {
	if c, ok := s.w.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// readLine returns the next line without its terminator; the slice is valid
// until the next read.
func (s *Stream) readLine() ([]byte, error) {
	b, err := s.r.ReadSlice('\n')
	if err == nil {
		return trimEOL(b), nil
	}
	if !errors.Is(err, bufio.ErrBufferFull) {
		return nil, err
	}
	s.line = append(s.line[:0], b...)
	for {
		b, err = s.r.ReadSlice('\n')
		s.line = append(s.line, b...)
		if err == nil {
			return trimEOL(s.line), nil
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return nil, err
		}
	}
}

func trimEOL(b []byte) []byte {
	b = b[:len(b)-1]
	if len(b) > 0 && b[len(b)-1] == '\r' {
		b = b[:len(b)-1]
	}
	return b
}
