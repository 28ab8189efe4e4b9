// Command nethttpfloor is an HTTP-only MCP responder for calibrating how
// much of an HTTP server's CPU per call is net/http's, the kernel's and
// the runtime's: a bare handler, served by the http.Server every benchmark
// server runs on (serve.Main), reads each body whole and answers
// initialize and every other request with a fixed result: the driver's
// add (2 + 3), as text.
// It is not in the servers table (no stdio, no real tools); use it through
// MCPBENCH_SERVERS with BenchmarkHTTPCalls only. See bench/README.md.
package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"

	"github.com/toolwire/toolwire/mcp"

	"github.com/toolwire/toolwire/bench/internal/serve"
)

func main() {
	serve.Main(
		func(context.Context) error { return errors.New("nethttpfloor serves HTTP only: pass -http ADDR") },
		func() http.Handler { return http.HandlerFunc(answer) },
	)
}

// answer answers one POST: 202 for a notification, else a fixed result
// with the request's id (found by text, as the driver writes it).
func answer(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	_, rest, ok := bytes.Cut(body, []byte(`"id":`))
	if !ok {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	id := rest[:bytes.IndexAny(rest, ",}")]
	w.Header().Set("Content-Type", "application/json")
	var b []byte
	b = append(append(append(b, `{"jsonrpc":"2.0","id":`...), id...), `,"result":`...)
	if bytes.Contains(body, []byte(`"initialize"`)) {
		w.Header().Set(mcp.HeaderSessionID, "floor")
		b = append(b, `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"nethttpfloor","version":"1"}}}`...)
	} else {
		b = append(b, `{"content":[{"type":"text","text":"5"}]}}`...)
	}
	_, _ = w.Write(b)
}
