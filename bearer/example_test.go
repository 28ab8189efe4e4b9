package bearer_test

import (
	"context"
	"log"
	"net"

	"github.com/toolwire/toolwire/bearer"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/tool"
)

// Auth is what mcp.HTTPConfig.Auth takes.
var _ mcp.Authenticator = (*bearer.Auth)(nil)

// An MCP server over HTTP that requires access tokens from an
// authorization server: every request needs scope "mcp", and a call of
// the tool "whoami" needs "profile" too. Tools know who calls
// (tool.CallerFrom, bearer.InfoFrom).
func Example() {
	ctx := context.Background()
	v, err := bearer.NewJWT(ctx, bearer.JWTConfig{
		Issuer:   "https://auth.example.com",
		Audience: "https://mcp.example.com/mcp", // this server, as clients reach it
	})
	if err != nil {
		log.Fatal(err) // the issuer's metadata or keys could not be fetched
	}
	auth, err := bearer.New(v, bearer.Options{
		Resource:             "https://mcp.example.com/mcp",
		AuthorizationServers: []string{"https://auth.example.com"},
		Scopes:               []string{"mcp"},
		ToolScopes:           map[string][]string{"whoami": {"profile"}},
	})
	if err != nil {
		log.Fatal(err)
	}
	whoami := tool.Must(tool.New("whoami", "Says who calls.", func(ctx context.Context, _ struct{}) (string, error) {
		info, _ := bearer.InfoFrom(ctx)
		return info.Subject, nil
	}))
	srv := &mcp.Server{Info: mcp.Implementation{Name: "demo", Version: "1.0.0"}}
	if err := srv.AddTools(whoami); err != nil {
		log.Fatal(err)
	}
	hs, end := mcp.NewHTTPEndpoints(srv, mcp.HTTPConfig{Auth: auth, AllowedHosts: []string{"mcp.example.com"}})
	defer end()
	ln, err := net.Listen("tcp", "127.0.0.1:8080")
	if err != nil {
		log.Fatal(err)
	}
	log.Fatal(mcp.RunHTTPServer(ctx, hs, ln))
}
