//go:build !race

package tool_test

import (
	"context"
	"encoding/json"
	"testing"
	"unsafe"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/toolwire/toolwire/telemetry"
	"github.com/toolwire/toolwire/tool"
)

// maxCallStack is the most stack Registry.Call may use between its caller
// and the tool's function. A served MCP request reaches Registry.Call with
// most of its goroutine's 8 KiB stack used already (net/http's frames and
// the server's); a deeper call grows that stack on every request, and the
// collector shrinks it again between them (a copy each time: 8% of a
// server's CPU at 64 HTTP clients, when the execute_tool span's frame was
// on the path of every call).
const maxCallStack = 1200

// TestCallStackDepth measures how deep Registry.Call's frames are, without
// telemetry and with a span that records: the span costs its caller little
// stack while the tool runs. (Not under the race detector, whose
// instrumentation makes frames larger.)
func TestCallStackDepth(t *testing.T) {
	tp := sdktrace.NewTracerProvider()
	defer tp.Shutdown(context.Background())
	for _, tc := range []struct {
		name string
		tel  *telemetry.Config
		max  uintptr
	}{
		{"untraced", nil, maxCallStack},
		{"traced", &telemetry.Config{TracerProvider: tp}, maxCallStack + 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var top, depth uintptr
			reg := &tool.Registry{}
			if tc.tel != nil {
				reg.SetTelemetry(*tc.tel)
			}
			if err := reg.Add(tool.NewFunc(tool.Info{Name: "probe", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"number"}}}`)},
				func(context.Context, json.RawMessage) (*tool.Result, error) {
					var here byte
					depth = top - uintptr(unsafe.Pointer(&here))
					return tool.Text("ok"), nil
				})); err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			go func() {
				defer close(done)
				deepen(64) // a stack big enough that the call below moves nothing
				var here byte
				top = uintptr(unsafe.Pointer(&here))
				if _, err := reg.Call(context.Background(), "probe", json.RawMessage(`{"a":2.5}`)); err != nil {
					t.Error(err)
				}
			}()
			<-done
			t.Logf("%d bytes of stack from Registry.Call's caller to the tool", depth)
			if depth > tc.max {
				t.Errorf("Registry.Call uses %d bytes of stack from its caller to the tool, want at most %d: keep the span's making and ending out of the frames that stay while the tool runs", depth, tc.max)
			}
		})
	}
}

// deepen uses about n KiB of stack, so that the goroutine's stack has
// grown to hold it before a measurement.
//
//go:noinline
func deepen(n int) byte {
	var pad [1024]byte
	if n > 0 {
		pad[n%len(pad)] = deepen(n - 1)
	}
	return pad[0]
}
