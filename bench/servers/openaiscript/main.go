// Command openaiscript is a scripted OpenAI-compatible Chat Completions
// server for the agent-loop benchmark (BenchmarkAgentLoop): it listens
// on -http ADDR (default 127.0.0.1:0), prints "LISTENING <host:port>" on
// stdout once bound, and answers POST /v1/chat/completions as
// internal/openaiscript scripts it, in OpenAI's wire format, streamed or
// not as the request asks. Every request is checked (openaiscript.Check):
// a client that runs the tool wrongly, drops or reorders history gets a
// 400 with an OpenAI error object. It runs in its own process so that the
// benchmark's CPU figures are the client's alone.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"

	"github.com/toolwire/toolwire/bench/internal/openaiscript"
)

func main() {
	calls := flag.Int("calls", 50, "tool calls per conversation before the text answer")
	addr := flag.String("http", "127.0.0.1:0", "listen on `addr`")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("openaiscript: ")
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("LISTENING %s\n", ln.Addr())
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) { serve(w, r, *calls) })
	log.Fatal(http.Serve(ln, mux))
}

func serve(w http.ResponseWriter, r *http.Request, calls int) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	var req openaiscript.Request
	if err := json.Unmarshal(body, &req); err != nil {
		fail(w, "the body is not a chat completion request: "+err.Error())
		return
	}
	n, problem := openaiscript.Check(&req)
	if problem != "" {
		fail(w, problem)
		return
	}
	if req.Stream {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
	} else {
		w.Header().Set("Content-Type", "application/json")
	}
	withUsage := req.StreamOptions != nil && req.StreamOptions.IncludeUsage
	_, _ = w.Write(openaiscript.Answer(n, calls, len(body), req.Stream, withUsage))
}

func fail(w http.ResponseWriter, msg string) {
	fmt.Fprintln(os.Stderr, "openaiscript:", msg)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error", "param": nil, "code": nil}})
	_, _ = w.Write(b)
}
