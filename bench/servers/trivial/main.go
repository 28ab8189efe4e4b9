// Command trivial is a stdio-only MCP responder for calibrating the driver
// and the cost of goroutine hand-offs: it answers initialize and every
// other request with a fixed echo("hello") result, without any MCP library.
// It is not in the servers table (no HTTP, no real tools); use it through
// MCPBENCH_SERVERS with BenchmarkStdioEcho only. See bench/README.md.
//
// -mode direct: answer on the goroutine that read the line.
// -mode timer: direct, plus a 10-minute context.WithTimeout per request.
// -mode goafter: direct, plus a goroutine started after each response.
// -mode relay: the reading goroutine starts a fresh reader, then answers
// its own line inline.
// -mode onehop: the reader starts a goroutine per request.
// -mode handoff: reader goroutine -> channel -> dispatcher -> goroutine per
// request -> locked writer (the shape of toolwire's ServeStream at dde3770).
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"sync"
	"time"
)

func main() {
	mode := flag.String("mode", "direct", "direct, timer, goafter, relay, onehop or handoff")
	flag.Parse()
	r := bufio.NewReaderSize(os.Stdin, 64<<10)
	var mu sync.Mutex
	answer := func(line []byte) {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		json.Unmarshal(line, &m)
		if m.ID == nil {
			return
		}
		var out []byte
		if m.Method == "initialize" {
			out = []byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"t","version":"0"}}}` + "\n")
		} else {
			out = []byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"content":[{"type":"text","text":"hello"}]}}` + "\n")
		}
		mu.Lock()
		os.Stdout.Write(out)
		mu.Unlock()
	}
	switch *mode {
	case "direct":
		for {
			line, err := r.ReadBytes('\n')
			if err != nil {
				return
			}
			answer(bytes.TrimSpace(line))
		}
	case "timer":
		// direct, plus what toolwire's conn.serve does per request: a
		// cancellable context with a 10-minute timeout, cancelled at the end.
		for {
			line, err := r.ReadBytes('\n')
			if err != nil {
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			answer(bytes.TrimSpace(line))
			_ = ctx
			cancel()
		}
	case "goafter":
		// direct, plus a goroutine started after the response is written.
		var wg sync.WaitGroup
		for {
			line, err := r.ReadBytes('\n')
			if err != nil {
				wg.Wait()
				return
			}
			answer(bytes.TrimSpace(line))
			wg.Add(1)
			go wg.Done()
		}
	}
	if *mode == "relay" {
		// The goroutine that read a line serves it; a fresh goroutine takes
		// over reading first, so slow requests never block the input.
		var wg sync.WaitGroup
		var loop func()
		loop = func() {
			defer wg.Done()
			line, err := r.ReadBytes('\n')
			if err != nil {
				return
			}
			wg.Add(1)
			go loop()
			answer(bytes.TrimSpace(line))
		}
		wg.Add(1)
		loop()
		wg.Wait()
		return
	}
	if *mode == "onehop" {
		var wg sync.WaitGroup
		for {
			line, err := r.ReadBytes('\n')
			if err != nil {
				wg.Wait()
				return
			}
			wg.Add(1)
			go func() { defer wg.Done(); answer(bytes.TrimSpace(line)) }()
		}
	}
	lines := make(chan []byte)
	go func() {
		for {
			line, err := r.ReadBytes('\n')
			if err != nil {
				close(lines)
				return
			}
			lines <- bytes.TrimSpace(line)
		}
	}()
	var wg sync.WaitGroup
	for line := range lines {
		wg.Add(1)
		go func() { defer wg.Done(); answer(line) }()
	}
	wg.Wait()
}
