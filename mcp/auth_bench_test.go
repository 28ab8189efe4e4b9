package mcp_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/bearer"
	"github.com/toolwire/toolwire/internal/testas"
	"github.com/toolwire/toolwire/mcp"
)

// BenchmarkHTTPAuth: a modern tools/call over a loopback keep-alive
// connection to NewHTTPEndpoints (client and server in this process),
// with a token already verified and HTTPConfig.Auth (auth=on), with the
// same token unverified (auth=off), and without a token (auth=none):
// what verifying tokens adds to a request, and what sending one does.
func BenchmarkHTTPAuth(b *testing.B) {
	for _, mode := range []string{"none", "off", "on"} {
		b.Run("auth="+mode, func(b *testing.B) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			url := "http://" + ln.Addr().String() + "/mcp"
			srv := &mcp.Server{Info: mcp.Implementation{Name: "bench", Version: "1"}}
			if err := srv.AddTools(echoTool()); err != nil {
				b.Fatal(err)
			}
			var cfg mcp.HTTPConfig
			header := http.Header{}
			if mode != "none" {
				as := testas.New(b, url)
				v, err := bearer.NewJWT(context.Background(), bearer.JWTConfig{Issuer: as.URL, Audience: url})
				if err != nil {
					b.Fatal(err)
				}
				a, err := bearer.New(v, bearer.Options{Resource: url, AuthorizationServers: []string{as.URL}, Scopes: []string{"mcp"}})
				if err != nil {
					b.Fatal(err)
				}
				if mode == "on" {
					cfg.Auth = a
				}
				header.Set("Authorization", "Bearer "+as.Token(b, "alice", nil))
			}
			hs, end := mcp.NewHTTPEndpoints(srv, cfg)
			go hs.Serve(ln)
			defer func() { hs.Close(); end() }()
			for k, v := range modernHeaders("tools/call", "echo") {
				header.Set(k, v)
			}
			header.Set("Content-Type", "application/json")
			header.Set("Accept", "application/json, text/event-stream")
			body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"},"_meta":{"io.modelcontextprotocol/protocolVersion":"` + mcp.LatestVersion + `","io.modelcontextprotocol/clientCapabilities":{}}}}`
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
			call := func() {
				req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
				req.Header = header
				resp, err := client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				out, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 || !strings.Contains(string(out), `"text":"hello"`) {
					b.Fatalf("%d %s", resp.StatusCode, out)
				}
			}
			for b.Loop() {
				call()
			}
		})
	}
}
