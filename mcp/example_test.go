package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"

	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/tool"
)

// greeter is the tool of the examples.
func greeter() tool.Tool {
	return tool.NewFunc(
		tool.Info{
			Name:        "greet",
			Description: "Greets someone by name.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"who":{"type":"string"}},"required":["who"]}`),
		},
		func(ctx context.Context, args json.RawMessage) (*tool.Result, error) {
			var a struct{ Who string }
			if err := json.Unmarshal(args, &a); err != nil {
				return nil, err
			}
			return tool.Text("Hello, " + a.Who + "!"), nil
		})

}

// A server over stdio answers newline-delimited JSON-RPC. Here a legacy
// client opens a session with initialize; a bad call becomes an error
// result the model can read.
func ExampleServer_ServeStream() {
	srv := &mcp.Server{Info: mcp.Implementation{Name: "greeter", Version: "1.0.0"}}
	if err := srv.AddTools(greeter()); err != nil {
		panic(err)
	}
	in := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"example","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"greet","arguments":{"who":"Ada"}}}
`)
	// ServeStdio(ctx) does the same on os.Stdin and os.Stdout.
	if err := srv.ServeStream(context.Background(), in, os.Stdout); err != nil {
		panic(err)
	}
	// Output:
	// {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"logging":{},"tools":{"listChanged":true}},"serverInfo":{"name":"greeter","version":"1.0.0"}}}
	// {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"Hello, Ada!"}]}}
}

// A modern (2026-07-28) client needs no handshake: each request carries its
// protocol version and capabilities in _meta.
func ExampleServer_ServeStream_modern() {
	srv := &mcp.Server{Info: mcp.Implementation{Name: "greeter", Version: "1.0.0"}}
	if err := srv.AddTools(greeter()); err != nil {
		panic(err)
	}
	in := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet","arguments":{"who":7},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}
`)
	if err := srv.ServeStream(context.Background(), in, os.Stdout); err != nil {
		panic(err)
	}
	// Output:
	// {"jsonrpc":"2.0","id":1,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"greeter","version":"1.0.0"}},"resultType":"complete","content":[{"type":"text","text":"invalid arguments for tool greet: argument \"who\": expected string, got number 7"}],"isError":true}}
}

// Serve Streamable HTTP by mounting the handler; modern clients POST each
// request with the MCP headers mirroring its body.
func ExampleHTTPHandler() {
	srv := &mcp.Server{Info: mcp.Implementation{Name: "greeter", Version: "1.0.0"}}
	if err := srv.AddTools(greeter()); err != nil {
		panic(err)
	}
	ts := httptest.NewServer(&mcp.HTTPHandler{Server: srv}) // on 127.0.0.1
	defer ts.Close()

	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet","arguments":{"who":"Ada"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	req, _ := http.NewRequest(http.MethodPost, ts.URL, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(mcp.HeaderProtocolVersion, mcp.LatestVersion)
	req.Header.Set(mcp.HeaderMethod, "tools/call")
	req.Header.Set(mcp.HeaderName, "greet")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.StatusCode, resp.Header.Get("Content-Type"))
	fmt.Println(string(b))
	// Output:
	// 200 application/json
	// {"jsonrpc":"2.0","id":1,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"greeter","version":"1.0.0"}},"resultType":"complete","content":[{"type":"text","text":"Hello, Ada!"}]}}
}

// A tool reports progress and logs through its context; the server sends
// them to the client only when it asked (a progressToken, a log level).
func Example_progress() {
	srv := &mcp.Server{Info: mcp.Implementation{Name: "worker", Version: "1.0.0"}}
	_ = srv.AddTools(tool.NewFunc(
		tool.Info{Name: "work"},
		func(ctx context.Context, _ json.RawMessage) (*tool.Result, error) {
			_ = tool.Progress(ctx, 1, 2, "half way")
			_ = tool.Log(ctx, tool.LevelInfo, "work", "still going")
			_ = tool.Progress(ctx, 2, 2, "done")
			return tool.Text("worked"), nil
		}))
	in := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"work","_meta":{"progressToken":"p1","io.modelcontextprotocol/logLevel":"info","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}
`)
	_ = srv.ServeStream(context.Background(), in, os.Stdout)
	// Output:
	// {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p1","progress":1,"total":2,"message":"half way"}}
	// {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","logger":"work","data":"still going"}}
	// {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p1","progress":2,"total":2,"message":"done"}}
	// {"jsonrpc":"2.0","id":1,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"worker","version":"1.0.0"}},"resultType":"complete","content":[{"type":"text","text":"worked"}]}}
}
