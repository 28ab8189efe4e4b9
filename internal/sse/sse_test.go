package sse

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

type event struct{ name, data string }

// readAll reads every event of stream with reader r, and the error that
// ended it.
func readAll(r *Reader) ([]event, error) {
	var got []event
	for {
		ev, err := r.Next()
		if err != nil {
			return got, err
		}
		got = append(got, event{ev.Name, string(ev.Data)})
	}
}

func TestReader(t *testing.T) {
	tests := []struct {
		name   string
		stream string
		want   []event
		err    error // io.EOF for a clean end
		lastID string
		retry  time.Duration
		max    int
	}{
		{"simple", "event: message\ndata: {\"a\":1}\n\n", []event{{"message", `{"a":1}`}}, io.EOF, "", 0, 0},
		{"multi-line data", "data: line1\ndata: line2\ndata:line3\n\n", []event{{"", "line1\nline2\nline3"}}, io.EOF, "", 0, 0},
		{"two events, name reset", "event: a\ndata: 1\n\ndata: 2\n\n", []event{{"a", "1"}, {"", "2"}}, io.EOF, "", 0, 0},
		{"comments", ": keep-alive\ndata: x\n: more\n\n:\n\n", []event{{"", "x"}}, io.EOF, "", 0, 0},
		{"CRLF", "id: 7\r\ndata: x\r\ndata: y\r\n\r\n", []event{{"", "x\ny"}}, io.EOF, "7", 0, 0},
		{"bare CR", "data: a\rdata: b\r\r\n", []event{{"", "a\nb"}}, io.EOF, "", 0, 0},
		{"id and retry", "id: s1_0\nretry: 500\ndata: \n\nid: s1_1\ndata: m\n\n", []event{{"", "m"}}, io.EOF, "s1_1", 500 * time.Millisecond, 0},
		{"id with NUL ignored", "id: 1\ndata: a\n\nid: x\x00y\ndata: b\n\n", []event{{"", "a"}, {"", "b"}}, io.EOF, "1", 0, 0},
		{"id of an event without data kept", "id: 9\n\n", nil, io.EOF, "9", 0, 0},
		{"bad retry ignored", "retry: 1s\ndata: x\n\nretry: -5\n\n", []event{{"", "x"}}, io.EOF, "", 0, 0},
		{"field without colon", "data\n\ndata: y\n\n", []event{{"", "y"}}, io.EOF, "", 0, 0},
		{"blank data skipped", "data:  \ndata:\n\ndata: z\n\n", []event{{"", "z"}}, io.EOF, "", 0, 0},
		{"unknown field ignored", "foo: bar\ndata: q\n\n", []event{{"", "q"}}, io.EOF, "", 0, 0},
		{"empty stream", "", nil, io.EOF, "", 0, 0},
		{"truncated event", "data: one\n\nid: 2\ndata: tw", []event{{"", "one"}}, ErrTruncated, "", 0, 0},
		{"truncated after a whole line", "data: one\n\ndata: two\n", []event{{"", "one"}}, ErrTruncated, "", 0, 0},
		{"truncated line", "data: one\n\nda", []event{{"", "one"}}, ErrTruncated, "", 0, 0},
		{"oversize data", "data: 0123456789\n\n", nil, &TooLargeError{}, "", 0, 5},
		{"oversize over lines", "data: 012\ndata: 345\n\n", nil, &TooLargeError{}, "", 0, 6},
		{"at the limit", "data: 012\ndata: 34\n\n", []event{{"", "012\n34"}}, io.EOF, "", 0, 6},
		{"oversize comment line", ": " + strings.Repeat("x", 10<<10) + "\ndata: a\n\n", nil, &TooLargeError{}, "", 0, 1 << 10},
		{"long line under the limit", "data: " + strings.Repeat("x", 100<<10) + "\n\n", []event{{"", strings.Repeat("x", 100<<10)}}, io.EOF, "", 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			max := tc.max
			if max == 0 {
				max = 1 << 20
			}
			// One byte at a time too: lines split across reads.
			for _, src := range []io.Reader{strings.NewReader(tc.stream), iotest.OneByteReader(strings.NewReader(tc.stream))} {
				r := NewReader(src, max, 16)
				got, err := readAll(r)
				var tooLarge *TooLargeError
				switch {
				case errors.As(tc.err, &tooLarge):
					if !errors.As(err, &tooLarge) || tooLarge.Limit != max {
						t.Errorf("err = %v, want a *TooLargeError with limit %d", err, max)
					}
				case err != tc.err:
					t.Errorf("err = %v, want %v", err, tc.err)
				}
				if len(got) != len(tc.want) {
					t.Fatalf("events = %q, want %q", got, tc.want)
				}
				for i := range got {
					if got[i] != tc.want[i] {
						t.Errorf("event %d = %q, want %q", i, got[i], tc.want[i])
					}
				}
				if r.LastID() != tc.lastID || r.Retry() != tc.retry {
					t.Errorf("LastID, Retry = %q, %v; want %q, %v", r.LastID(), r.Retry(), tc.lastID, tc.retry)
				}
			}
		})
	}
}

// TestReset shows a reconnection: the last id and retry carry over, and an
// event the first stream cut does not.
func TestReset(t *testing.T) {
	r := NewReader(strings.NewReader("retry: 20\nid: 1\ndata: a\n\nid: 2\ndata: b"), 1<<10, 64)
	got, err := readAll(r)
	if err != ErrTruncated || len(got) != 1 {
		t.Fatalf("first stream: %q, %v", got, err)
	}
	r.Reset(strings.NewReader("data: c\n\n"))
	got, err = readAll(r)
	if err != io.EOF || len(got) != 1 || got[0].data != "c" {
		t.Fatalf("second stream: %q, %v", got, err)
	}
	if r.LastID() != "1" || r.Retry() != 20*time.Millisecond {
		t.Errorf("LastID, Retry = %q, %v; want 1, 20ms", r.LastID(), r.Retry())
	}
}

func TestEach(t *testing.T) {
	stop := errors.New("stop")
	tests := []struct {
		stream string
		n      int
		err    error
	}{
		{"data: 1\n\ndata: 2\n\n", 2, nil},
		{"data: 1\n\ndata: 2", 1, ErrTruncated},
		{"data: 1\n\ndata: stop\n\ndata: 3\n\n", 2, stop},
	}
	for _, tc := range tests {
		n := 0
		err := Each(strings.NewReader(tc.stream), 1<<10, 64, func(ev Event) error {
			n++
			if string(ev.Data) == "stop" {
				return stop
			}
			return nil
		})
		if n != tc.n || err != tc.err {
			t.Errorf("Each(%q): %d events, %v; want %d, %v", tc.stream, n, err, tc.n, tc.err)
		}
	}
}

// FuzzReader checks, on any input, that the reader ends, never returns an
// event over the bound or with blank data, and reads the same events
// whatever the read sizes.
func FuzzReader(f *testing.F) {
	for _, s := range []string{"data: a\n\n", "event: x\r\ndata: 1\r\ndata: 2\r\n\r\n", "id: 1\rretry: 5\rdata: q\r\r", ": c\n\ndata", "data: " + strings.Repeat("z", 100) + "\n\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		const max = 64
		whole, errWhole := readAll(NewReader(strings.NewReader(string(b)), max, 16))
		bytewise, errBytes := readAll(NewReader(iotest.OneByteReader(strings.NewReader(string(b))), max, 16))
		if len(whole) != len(bytewise) || (errWhole == nil) != (errBytes == nil) || errWhole.Error() != errBytes.Error() {
			t.Fatalf("whole: %q, %v; byte by byte: %q, %v", whole, errWhole, bytewise, errBytes)
		}
		for i, ev := range whole {
			if ev != bytewise[i] {
				t.Fatalf("event %d: %q whole, %q byte by byte", i, ev, bytewise[i])
			}
			if len(ev.data) > max || strings.TrimSpace(ev.data) == "" {
				t.Fatalf("event %d: data %q is blank or over %d bytes", i, ev.data, max)
			}
		}
	})
}
