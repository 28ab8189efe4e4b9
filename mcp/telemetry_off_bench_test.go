package mcp

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"
)

// BenchmarkTelemetryOff: what the telemetry of one request costs the
// server and the client with OpenTelemetry's global providers unset (the
// server's side allocates the request, as serving does anyway): a part
// of the call path too small for BenchmarkCallPath to tell from noise.
func BenchmarkTelemetryOff(b *testing.B) {
	srv := &Server{}
	c := newConn(srv, lineSender{})
	params := json.RawMessage(`{"name":"add","arguments":{"a":2,"b":3}}`)
	ctx := context.Background()
	b.Run("side=server", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			req := request{conn: c, method: MethodToolsCall, params: params}
			_ = srv.tel.startServerSpan(ctx, &req, time.Time{})
			req.endServerSpan(nil)
		}
	})
	b.Run("side=client", func(b *testing.B) {
		s := &ClientSession{tel: Telemetry{}.instruments("client", trace.SpanKindClient)}
		p := &CallToolParams{Name: "add"}
		b.ReportAllocs()
		for b.Loop() {
			cctx, op := s.startCall(ctx, MethodToolsCall, &p.Params)
			s.endCall(cctx, &op, MethodToolsCall, p, nil, nil)
		}
	})
}
