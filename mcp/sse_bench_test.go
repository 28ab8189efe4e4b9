package mcp

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/jsonrpc"
)

// sseStream is an event stream of n JSON-RPC responses carrying text of
// size bytes, as a server sends them on a POST's stream.
func sseStream(n, size int) []byte {
	var b bytes.Buffer
	text := strings.Repeat("x", size)
	for i := 0; i < n; i++ {
		b.WriteString("id: s1_")
		b.WriteString(string(rune('0' + i%10)))
		b.WriteString("\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"")
		b.WriteString(text)
		b.WriteString("\"}]}}\n\n")
	}
	return b.Bytes()
}

// BenchmarkSSERead reads and decodes a stream's messages as the HTTP
// client does.
func BenchmarkSSERead(b *testing.B) {
	for _, tc := range []struct {
		name    string
		n, size int
	}{{"small", 64, 5}, {"100KiB", 4, 100 << 10}} {
		b.Run(tc.name, func(b *testing.B) {
			stream := sseStream(tc.n, tc.size)
			b.SetBytes(int64(len(stream)))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				r := benchSSEReader(bytes.NewReader(stream))
				for {
					data, err := r()
					if err != nil {
						break
					}
					if _, err := jsonrpc.Decode(data); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// benchSSEReader reads events' data with the client's reader.
func benchSSEReader(r io.Reader) func() ([]byte, error) {
	s := newSSEReader(r, jsonrpc.DefaultMaxMessageSize)
	return func() ([]byte, error) {
		ev, err := s.next()
		return ev.Data, err
	}
}
