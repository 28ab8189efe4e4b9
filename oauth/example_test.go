package oauth_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/url"
	"os"

	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/oauth"
)

// An MCP client that logs in to a protected server: the first request
// earns a 401, and the Transport runs the authorization (here the user
// opens the printed URL and pastes back the URL the browser ended on),
// then sends the request again with the token; later requests reuse and
// refresh it.
func ExampleConfig_Transport() {
	cfg := &oauth.Config{
		Resource:    "https://mcp.example.com/mcp",
		Store:       &oauth.MemoryStore{},
		RedirectURL: "http://127.0.0.1:8976/callback",
		Authorize: func(ctx context.Context, authURL string) (*url.URL, error) {
			fmt.Fprintln(os.Stderr, "Open this URL, log in, and paste the URL you land on:", authURL)
			line, err := bufio.NewReader(os.Stdin).ReadString('\n')
			if err != nil {
				return nil, err
			}
			return url.Parse(line[:len(line)-1])
		},
	}
	c := &mcp.Client{Info: mcp.Implementation{Name: "example", Version: "1.0.0"}}
	s, err := c.Connect(context.Background(), &mcp.HTTPTransport{
		URL:        cfg.Resource,
		HTTPClient: &http.Client{Transport: cfg.Transport(nil)},
	})
	if errors.Is(err, oauth.ErrLoginRequired) {
		log.Fatal("log in first") // with Authorize nil
	} else if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	tools, err := s.ListTools(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(tools), "tools")
}
