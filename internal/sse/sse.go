// Package sse reads Server-Sent Events (text/event-stream) streams that
// carry JSON, as model providers and MCP servers send them, with a bound
// on the size of one event.
package sse

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"
)

// ErrTruncated is returned for a stream that ends in the middle of an
// event: the event is incomplete, so it is not returned.
var ErrTruncated = errors.New("the event stream ended in the middle of an event")

// TooLargeError is returned for an event (or a line) longer than the
// reader's limit.
type TooLargeError struct {
	Size  int // bytes gathered before giving up
	Limit int
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("an event of more than %d bytes exceeds the limit of %d bytes", e.Limit, e.Limit)
}

// Event is one event with data.
type Event struct {
	// Name is the event's "event" field, or "" when it has none.
	Name string
	// Data is the event's data lines joined by "\n". It is valid until the
	// next call of Next.
	Data []byte
}

// Reader reads events from a stream. It keeps the last event id and the
// server's retry delay across streams (see Reset). Lines end with LF, CRLF
// or a bare CR.
type Reader struct {
	br    *bufio.Reader
	max   int
	queue [][]byte // lines split at bare CRs, not yet returned
	data  []byte   // the current event's data, reused

	id     string        // the id field of the current event
	lastID string        // the id of the last complete event
	retry  time.Duration // 0 until the server sets one
}

// NewReader returns a Reader of r that refuses events whose data is longer
// than max bytes. bufSize is the size of its read buffer: lines longer
// than that are gathered, up to the bound.
func NewReader(r io.Reader, max, bufSize int) *Reader {
	s := &Reader{max: max, br: bufio.NewReaderSize(r, bufSize)}
	return s
}

// Reset continues on a new stream (a reconnection), keeping the last event
// id and the retry delay.
func (s *Reader) Reset(r io.Reader) {
	s.br.Reset(r)
	s.queue = nil
	s.id = s.lastID
}

// LastID returns the id of the last complete event ("" when none had one),
// for a reconnection's Last-Event-ID.
func (s *Reader) LastID() string { return s.lastID }

// Retry returns the reconnection delay the server set, or 0.
func (s *Reader) Retry() time.Duration { return s.retry }

// Next returns the next event whose data is not empty or white space
// (keep-alives and priming events are skipped). At the end of the stream
// it returns io.EOF, or ErrTruncated if the stream stopped in the middle
// of an event; an event or line over the limit is a *TooLargeError.
func (s *Reader) Next() (Event, error) {
	var ev Event
	s.data = s.data[:0]
	hasData := false
	for {
		line, err := s.line()
		if err == io.EOF && hasData {
			return Event{}, ErrTruncated
		}
		if err != nil {
			return Event{}, err
		}
		if len(line) == 0 {
			s.lastID = s.id
			if hasData && len(bytes.TrimSpace(s.data)) > 0 {
				ev.Data = s.data
				return ev, nil
			}
			ev, s.data, hasData = Event{}, s.data[:0], false
			continue
		}
		if line[0] == ':' {
			continue // a comment
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch string(field) {
		case "event":
			ev.Name = string(value)
		case "data":
			if hasData {
				s.data = append(s.data, '\n')
			}
			s.data = append(s.data, value...)
			hasData = true
			if len(s.data) > s.max {
				return Event{}, &TooLargeError{Size: len(s.data), Limit: s.max}
			}
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				s.id = string(value)
			}
		case "retry":
			if ms, err := strconv.Atoi(string(value)); err == nil && ms >= 0 && isDigits(value) {
				s.retry = time.Duration(ms) * time.Millisecond
			}
		}
	}
}

func isDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(b) > 0
}

// line returns the next line without its terminator; the slice is valid
// until the next call. A line cut by the end of the stream is
// ErrTruncated.
func (s *Reader) line() ([]byte, error) {
	if len(s.queue) > 0 {
		l := s.queue[0]
		s.queue = s.queue[1:]
		return l, nil
	}
	var buf []byte
	for {
		chunk, err := s.br.ReadSlice('\n')
		if err == nil && buf == nil {
			buf = chunk
			break
		}
		if len(buf)+len(chunk) > s.max+4<<10 { // room for the field name
			return nil, &TooLargeError{Size: len(buf) + len(chunk), Limit: s.max}
		}
		buf = append(buf, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err == io.EOF && len(buf) > 0 {
			return nil, ErrTruncated
		}
		if err != nil {
			return nil, err
		}
		break
	}
	buf = buf[:len(buf)-1]
	buf = bytes.TrimSuffix(buf, []byte{'\r'})
	if bytes.IndexByte(buf, '\r') >= 0 {
		parts := bytes.Split(buf, []byte{'\r'})
		s.queue = parts[1:]
		return parts[0], nil
	}
	return buf, nil
}

// Each calls fn with every event of r (see Reader.Next) until the stream
// ends, and returns nil at a clean end. fn's error ends the reading and is
// returned; so is a truncated or oversized event.
func Each(r io.Reader, max, bufSize int, fn func(Event) error) error {
	s := NewReader(r, max, bufSize)
	for {
		ev, err := s.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := fn(ev); err != nil {
			return err
		}
	}
}
