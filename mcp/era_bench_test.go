package mcp_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/toolwire/toolwire/mcp"
)

// BenchmarkHTTPEra: add(2, 3) through a Client and an HTTPHandler in one
// process, over loopback HTTP/1.1, in each era, 8 clients at once: the
// in-process counterpart of bench's BenchmarkEraPaired (HTTP, 64
// clients), quieter for comparing the stateless 2026-07-28 path with a
// legacy session. Its allocations and cpu-µs/op count both the client
// and the server; read the server's in a profile (-memprofile, focus on
// HTTPHandler).
func BenchmarkHTTPEra(b *testing.B) {
	for _, era := range []string{mcp.Version20260728, mcp.Version20251125} {
		b.Run("era="+era, func(b *testing.B) {
			srv := &mcp.Server{Info: mcp.Implementation{Name: "bench", Version: "1"}}
			if err := srv.AddTools(addTool()); err != nil {
				b.Fatal(err)
			}
			h := &mcp.HTTPHandler{Server: srv}
			ts := httptest.NewServer(h)
			defer ts.Close()
			defer h.Close()
			ctx := context.Background()
			args := json.RawMessage(`{"a":2,"b":3}`)
			b.ReportAllocs()
			b.SetParallelism(4)
			before := cpuTime()
			b.RunParallel(func(pb *testing.PB) {
				client := &mcp.Client{Info: mcp.Implementation{Name: "bench", Version: "1"}, ProtocolVersion: era}
				sess, err := client.Connect(ctx, &mcp.HTTPTransport{URL: ts.URL})
				if err != nil {
					b.Error(err)
					return
				}
				defer sess.Close()
				for pb.Next() {
					res, err := sess.CallTool(ctx, "add", args)
					if err != nil || res.Content[0].Text != "5" {
						b.Errorf("add: %+v, %v", res, err)
						return
					}
				}
			})
			b.ReportMetric(float64((cpuTime()-before).Nanoseconds())/1e3/float64(b.N), "cpu-µs/op")
		})
	}
}
