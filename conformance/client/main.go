// Command client is the MCP client that the official conformance suite (npm
// @modelcontextprotocol/conformance) drives:
//
//	go build -o /tmp/cclient ./conformance/client
//	conformance client --command /tmp/cclient --scenario tools_call
//
// The suite runs it with the URL of a mock server as the last argument and
// names the scenario in MCP_CONFORMANCE_SCENARIO and the protocol revision
// in MCP_CONFORMANCE_PROTOCOL_VERSION. It does what the scenario asks with
// toolwire's public mcp.Client API only, then exits: 0 on success, 1 with
// the reason on stderr otherwise. See conformance/CLIENT_SCENARIOS.md.
//
// Every scenario runs through an oauth.Config's Transport, which stays out
// of the way of servers that ask for no authorization. For the auth/
// scenarios the login is headless: the mock authorization server redirects
// at once, so the client GETs the authorization URL without following the
// redirect and hands its Location back as the authorization response.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/oauth"
)

// runTimeout stays under the suite's default 30 s per scenario.
const runTimeout = 25 * time.Second

// The auth scenarios' fixed client metadata: the redirect URI (nothing
// listens there: see authorizeHeadless) and the Client ID Metadata
// Document URL the suite's authorization servers accept without fetching.
const (
	redirectURL       = "http://localhost:3000/callback"
	clientMetadataURL = "https://conformance-test.local/client-metadata.json"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: client [args...] SERVER_URL (scenario in $MCP_CONFORMANCE_SCENARIO)")
		os.Exit(2)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	err := run(ctx, logger, os.Args[len(os.Args)-1], os.Getenv("MCP_CONFORMANCE_SCENARIO"), os.Getenv("MCP_CONFORMANCE_PROTOCOL_VERSION"))
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "conformance client:", err)
		os.Exit(1)
	}
}

// scenario returns what the client does, once connected, for a scenario.
// A scenario not listed only lists the tools.
func scenario(name string) func(ctx context.Context, s *mcp.ClientSession) error {
	switch name {
	case "tools_call":
		return callTool("add_numbers", `{"a":5,"b":3}`)
	case "elicitation-sep1034-client-defaults":
		return callTool("test_client_elicitation_defaults", `{}`)
	case "sse-retry":
		return callTool("test_reconnection", `{}`)
	case "sep-2322-client-request-state":
		return requestState
	case "http-standard-headers":
		return standardHeaders
	case "http-custom-headers":
		return customHeaders
	case "http-invalid-tool-headers":
		return callEveryTool
	case "json-schema-2020-12-preservation":
		return schemaEcho
	}
	if strings.HasPrefix(name, "auth/") {
		// Lists, then calls: two requests after the login, which the
		// step-up and authorization-server-migration scenarios need.
		return callTool("test-tool", `{}`)
	}
	// initialize, request-metadata, json-schema-ref-no-deref, ...
	return listTools
}

func run(ctx context.Context, logger *slog.Logger, url, name, version string) error {
	c := &mcp.Client{
		Info:        mcp.Implementation{Name: "toolwire-conformance-client", Version: "0.1.0"},
		Elicitation: elicit,
		Sampling: func(context.Context, *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Role: "assistant", Content: json.RawMessage(`{"type":"text","text":"ok"}`), Model: "toolwire-conformance"}, nil
		},
		Roots: func(context.Context) ([]mcp.Root, error) {
			return []mcp.Root{{URI: "file:///tmp", Name: "tmp"}}, nil
		},
		Logger: logger,
		// The login of the auth scenarios runs inside the first request,
		// the server/discover probe: under load (the suite runs every
		// scenario at once) it can take longer than DefaultProbeTimeout.
		ProbeTimeout: 20 * time.Second,
	}
	// A legacy revision is spoken as asked; for the modern one the client
	// probes, which also retries with a version the server says it supports.
	if version != "" && !mcp.IsModern(version) {
		c.ProtocolVersion = version
	}
	auth, err := authConfig(url, name)
	if err != nil {
		return err
	}
	hc := &http.Client{Transport: auth.Transport(nil)}
	s, err := c.Connect(ctx, &mcp.HTTPTransport{URL: url, HTTPClient: hc})
	if err != nil {
		return err
	}
	defer s.Close()
	logger.Info("connected", "scenario", name, "version", s.ProtocolVersion(), "server", s.ServerInfo().Name)
	return scenario(name)(ctx, s)
}

// conformanceContext is what MCP_CONFORMANCE_CONTEXT carries for the auth
// scenarios that need credentials.
type conformanceContext struct {
	ClientID         string `json:"client_id"`
	ClientSecret     string `json:"client_secret"`
	PrivateKeyPEM    string `json:"private_key_pem"`
	SigningAlgorithm string `json:"signing_algorithm"`
}

// authConfig returns how the client authorizes to the server at url in
// scenario name: a pre-registered client or client credentials from the
// context where the scenario gives them, else a client of the
// authorization code flow (its Client ID Metadata Document where the
// authorization server supports one, else Dynamic Client Registration).
func authConfig(url, name string) (*oauth.Config, error) {
	cfg := &oauth.Config{
		Resource:          url,
		ClientName:        "toolwire-conformance-client",
		ClientMetadataURL: clientMetadataURL,
		RedirectURL:       redirectURL,
		Authorize:         authorizeHeadless,
	}
	var sc conformanceContext
	if raw := os.Getenv("MCP_CONFORMANCE_CONTEXT"); raw != "" {
		if err := json.Unmarshal([]byte(raw), &sc); err != nil {
			return nil, fmt.Errorf("reading MCP_CONFORMANCE_CONTEXT: %w", err)
		}
	}
	switch name {
	case "auth/pre-registration":
		cfg.ClientID, cfg.ClientSecret = sc.ClientID, sc.ClientSecret
	case "auth/client-credentials-basic":
		cfg.ClientCredentials = &oauth.ClientCredentials{ClientID: sc.ClientID, ClientSecret: sc.ClientSecret}
	case "auth/client-credentials-jwt":
		cfg.ClientCredentials = &oauth.ClientCredentials{ClientID: sc.ClientID, PrivateKeyPEM: sc.PrivateKeyPEM, Alg: sc.SigningAlgorithm}
	}
	return cfg, nil
}

// authorizeHeadless stands in for the user agent: it GETs the
// authorization URL without following the redirect and returns where the
// authorization server sends it.
func authorizeHeadless(ctx context.Context, authURL string) (*url.URL, error) {
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	loc, err := resp.Location()
	if err != nil {
		return nil, fmt.Errorf("the authorization endpoint answered HTTP %d without a redirect", resp.StatusCode)
	}
	return loc, nil
}

// elicit accepts with the schema's defaults (filled in by mcp.Client) and
// true for booleans without one.
func elicit(_ context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	var schema struct {
		Properties map[string]struct {
			Type    string          `json:"type"`
			Default json.RawMessage `json:"default"`
		} `json:"properties"`
	}
	_ = json.Unmarshal(p.RequestedSchema, &schema)
	content := map[string]any{}
	for name, prop := range schema.Properties {
		if prop.Type == "boolean" && len(prop.Default) == 0 {
			content[name] = true
		}
	}
	return &mcp.ElicitResult{Action: "accept", Content: content}, nil
}

func listTools(ctx context.Context, s *mcp.ClientSession) error {
	_, err := s.ListTools(ctx)
	return err
}

func callTool(name, args string) func(ctx context.Context, s *mcp.ClientSession) error {
	return func(ctx context.Context, s *mcp.ClientSession) error {
		if _, err := s.ListTools(ctx); err != nil {
			return err
		}
		return checkCall(s.CallTool(ctx, name, json.RawMessage(args)))
	}
}

func checkCall(res *mcp.CallToolResult, err error) error {
	if err != nil {
		return err
	}
	if res.IsError {
		b, _ := json.Marshal(res.Content)
		return fmt.Errorf("the tool failed: %s", b)
	}
	return nil
}

func requestState(ctx context.Context, s *mcp.ClientSession) error {
	if _, err := s.ListTools(ctx); err != nil {
		return err
	}
	for _, name := range []string{"test_mrtr_echo_state", "test_mrtr_unrelated", "test_mrtr_no_state", "test_mrtr_no_result_type"} {
		if err := checkCall(s.CallTool(ctx, name, json.RawMessage(`{}`))); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

func standardHeaders(ctx context.Context, s *mcp.ClientSession) error {
	tools, err := s.ListTools(ctx)
	if err != nil {
		return err
	}
	for _, t := range tools {
		if err := checkCall(s.CallTool(ctx, t.Name, json.RawMessage(`{}`))); err != nil {
			return fmt.Errorf("%s: %w", t.Name, err)
		}
	}
	var resources mcp.ListResourcesResult
	if err := s.Call(ctx, mcp.MethodResourcesList, &mcp.PaginatedParams{}, &resources); err != nil {
		return err
	}
	for _, r := range resources.Resources {
		if err := s.Call(ctx, mcp.MethodResourcesRead, &mcp.ReadResourceParams{URI: r.URI}, nil); err != nil {
			return fmt.Errorf("reading %s: %w", r.URI, err)
		}
	}
	var prompts mcp.ListPromptsResult
	if err := s.Call(ctx, mcp.MethodPromptsList, &mcp.PaginatedParams{}, &prompts); err != nil {
		return err
	}
	for _, p := range prompts.Prompts {
		if err := s.Call(ctx, mcp.MethodPromptsGet, &mcp.GetPromptParams{Name: p.Name}, nil); err != nil {
			return fmt.Errorf("prompt %s: %w", p.Name, err)
		}
	}
	return nil
}

// customHeaders makes the tool calls listed in MCP_CONFORMANCE_CONTEXT.
func customHeaders(ctx context.Context, s *mcp.ClientSession) error {
	var sc struct {
		ToolCalls []struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"toolCalls"`
	}
	if err := json.Unmarshal([]byte(os.Getenv("MCP_CONFORMANCE_CONTEXT")), &sc); err != nil {
		return fmt.Errorf("reading MCP_CONFORMANCE_CONTEXT: %w", err)
	}
	if _, err := s.ListTools(ctx); err != nil {
		return err
	}
	for _, tc := range sc.ToolCalls {
		if err := checkCall(s.CallTool(ctx, tc.Name, tc.Arguments)); err != nil {
			return fmt.Errorf("%s: %w", tc.Name, err)
		}
	}
	return nil
}

// callEveryTool calls each tool the client kept (tools with invalid
// x-mcp-header annotations are left out by ListTools) with sample arguments.
func callEveryTool(ctx context.Context, s *mcp.ClientSession) error {
	tools, err := s.ListTools(ctx)
	if err != nil {
		return err
	}
	for _, t := range tools {
		if err := checkCall(s.CallTool(ctx, t.Name, sampleArgs(t.InputSchema))); err != nil {
			return fmt.Errorf("%s: %w", t.Name, err)
		}
	}
	return nil
}

// sampleArgs makes a value of the declared type for every property.
func sampleArgs(schema json.RawMessage) json.RawMessage {
	var s struct {
		Properties map[string]struct {
			Type any `json:"type"`
		} `json:"properties"`
	}
	_ = json.Unmarshal(schema, &s)
	args := map[string]any{}
	for name, p := range s.Properties {
		typ, _ := p.Type.(string)
		switch typ {
		case "string":
			args[name] = "us-west1"
		case "integer":
			args[name] = 1
		case "number":
			args[name] = 1.5
		case "boolean":
			args[name] = true
		case "object":
			args[name] = map[string]any{}
		case "array":
			args[name] = []any{}
		}
	}
	b, _ := json.Marshal(args)
	return b
}

// schemaEcho sends back, untouched, the input schema the server gave for
// json_schema_2020_12_tool.
func schemaEcho(ctx context.Context, s *mcp.ClientSession) error {
	tools, err := s.ListTools(ctx)
	if err != nil {
		return err
	}
	for _, t := range tools {
		if t.Name != "json_schema_2020_12_tool" {
			continue
		}
		args, err := json.Marshal(map[string]json.RawMessage{"schema": t.InputSchema})
		if err != nil {
			return err
		}
		return checkCall(s.CallTool(ctx, "json_schema_echo", args))
	}
	return errors.New("the server has no tool json_schema_2020_12_tool")
}
