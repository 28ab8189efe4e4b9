package mcp_test

import (
	"context"
	"encoding/json"
	"syscall"
	"testing"
	"time"

	"github.com/toolwire/toolwire/mcp"
)

// BenchmarkCallPath: add(2, 3) through a Client and a Server in one
// process, over the in-memory pipes (the stdio code of both), in each
// era, with the Server and Client as configured by default: the call
// path as every program has it without telemetry.
func BenchmarkCallPath(b *testing.B) {
	for _, era := range []string{mcp.Version20260728, mcp.Version20251125} {
		b.Run("era="+era, func(b *testing.B) {
			srv := &mcp.Server{Info: mcp.Implementation{Name: "bench", Version: "1"}}
			if err := srv.AddTools(addTool()); err != nil {
				b.Fatal(err)
			}
			benchCalls(b, srv, &mcp.Client{Info: mcp.Implementation{Name: "bench", Version: "1"}, ProtocolVersion: era})
		})
	}
}

// benchCalls measures add(2, 3) calls of client to srv, in memory; its
// cpu-µs/op is the CPU time of the whole process per call (less
// sensitive than the time per call to a machine busy with other work).
func benchCalls(b *testing.B, srv *mcp.Server, client *mcp.Client) {
	ctx := context.Background()
	sess, err := client.Connect(ctx, &mcp.InMemoryTransport{Server: srv})
	if err != nil {
		b.Fatal(err)
	}
	defer sess.Close()
	args := json.RawMessage(`{"a":2,"b":3}`)
	b.ReportAllocs()
	before := cpuTime()
	for b.Loop() {
		res, err := sess.CallTool(ctx, "add", args)
		if err != nil || res.Content[0].Text != "5" {
			b.Fatalf("add: %+v, %v", res, err)
		}
	}
	b.ReportMetric(float64((cpuTime()-before).Nanoseconds())/1e3/float64(b.N), "cpu-µs/op")
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
