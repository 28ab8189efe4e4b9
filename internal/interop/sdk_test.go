package interop

import (
	"encoding/json"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/toolsets/calc"
)

// sdkSummary is what testdata/sdkclient.mjs prints: what the TypeScript
// SDK's client saw of the server.
type sdkSummary struct {
	Transport                    string   `json:"transport"`
	SDKLatestProtocolVersion     string   `json:"sdkLatestProtocolVersion"`
	SDKSupportedProtocolVersions []string `json:"sdkSupportedProtocolVersions"`
	// RequestedProtocolVersion is what the client sent in initialize,
	// ProtocolVersion what the server answered with.
	RequestedProtocolVersion string `json:"requestedProtocolVersion"`
	ProtocolVersion          string `json:"protocolVersion"`
	// TransportProtocolVersion is the Mcp-Protocol-Version the Streamable
	// HTTP transport sends after initialize (http only).
	TransportProtocolVersion *string                    `json:"transportProtocolVersion"`
	SessionID                string                     `json:"sessionId"`
	SessionTerminated        *bool                      `json:"sessionTerminated"`
	ServerInfo               mcp.Implementation         `json:"serverInfo"`
	Capabilities             map[string]json.RawMessage `json:"capabilities"`
	Tools                    []string                   `json:"tools"`
	Calculate                callOutcome                `json:"calculate"`
	BadArguments             callOutcome                `json:"badArguments"`
	Error                    string                     `json:"error"`
	CloseError               string                     `json:"closeError"`
}

// callOutcome is a tools/call as the SDK's client returned it: a result, or
// the error it threw.
type callOutcome struct {
	IsError bool `json:"isError"`
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	Threw             string          `json:"threw"`
	Code              *int            `json:"code"`
}

// text returns the call's text content, joined.
func (c callOutcome) text() string {
	var parts []string
	for _, b := range c.Content {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// newCalcServer serves the calc toolset, as `toolwire serve --http` does
// (on the net/http server mcp.NewHTTPServer configures), in this process:
// Streamable HTTP at /mcp and the deprecated HTTP+SSE transport at /sse
// and /message. It returns the server's URL.
func newCalcServer(t *testing.T) string {
	t.Helper()
	srv := &mcp.Server{Info: mcp.Implementation{Name: "toolwire", Version: "interop-test"}}
	if err := srv.AddTools(calc.Tools()...); err != nil {
		t.Fatal(err)
	}
	h := &mcp.HTTPHandler{Server: srv}
	sse := &mcp.SSEHandler{Server: srv}
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	mux.Handle("/sse", sse)
	mux.Handle("/message", sse)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := mcp.NewHTTPServer(mux, nil)
	go hs.Serve(ln)
	t.Cleanup(func() {
		h.Close()
		hs.Close()
	})
	return "http://" + ln.Addr().String()
}

// TestTypeScriptSDKClient connects the official TypeScript SDK's client to
// toolwire's server over each transport, lists the tools, calls calculate,
// and calls it again with arguments of the wrong type.
func TestTypeScriptSDKClient(t *testing.T) {
	env := findNodeEnv(t)
	t.Logf("@modelcontextprotocol/sdk %s, node %s", env.sdkVersion, env.node)
	script := stageScript(t, env, "sdkclient.mjs")
	bin := buildToolwire(t, env.root)
	inProcess := newCalcServer(t)
	cliHTTP := startServeHTTP(t, bin)

	var wantTools []string
	for _, tl := range calc.Tools() {
		wantTools = append(wantTools, tl.Info().Name)
	}
	slices.Sort(wantTools)

	tests := []struct {
		name string
		args []string // to sdkclient.mjs
		// streamable: the Streamable HTTP transport, which has a session
		// and sends Mcp-Protocol-Version.
		streamable bool
	}{
		{name: "stdio", args: []string{"stdio", bin, "serve"}},
		{name: "streamable-http", args: []string{"http", inProcess + "/mcp"}, streamable: true},
		{name: "serve-http", args: []string{"http", cliHTTP}, streamable: true},
		{name: "legacy-sse", args: []string{"sse", inProcess + "/sse"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, err := runNode(t, env, script, tt.args...)
			checkNoRace(t, "node (and the toolwire it ran)", stderr)
			var got sdkSummary
			if jerr := json.Unmarshal(stdout, &got); jerr != nil {
				t.Fatalf("node %s: %v; output is not a JSON summary (%v)\nstdout:\n%s\nstderr:\n%s", strings.Join(tt.args, " "), err, jerr, stdout, stderr)
			}
			if err != nil || got.Error != "" {
				t.Fatalf("node %s: %v: the SDK client failed: %s\nstderr:\n%s", strings.Join(tt.args, " "), err, got.Error, stderr)
			}
			t.Logf("SDK asked for protocol %s; server answered %s", got.RequestedProtocolVersion, got.ProtocolVersion)

			if got.ServerInfo.Name != "toolwire" {
				t.Errorf("serverInfo.name = %q, want toolwire", got.ServerInfo.Name)
			}
			if got.ProtocolVersion != got.RequestedProtocolVersion {
				t.Errorf("negotiated protocol %q, want the %q the SDK asked for (we speak %v)", got.ProtocolVersion, got.RequestedProtocolVersion, mcp.SupportedVersions())
			}
			if !slices.Contains(mcp.SupportedVersions(), got.ProtocolVersion) {
				t.Errorf("negotiated protocol %q is not one toolwire speaks: %v", got.ProtocolVersion, mcp.SupportedVersions())
			}
			if !slices.Contains(got.SDKSupportedProtocolVersions, got.ProtocolVersion) {
				t.Errorf("negotiated protocol %q is not one the SDK speaks: %v", got.ProtocolVersion, got.SDKSupportedProtocolVersions)
			}
			if _, ok := got.Capabilities["tools"]; !ok {
				t.Errorf("server capabilities %v lack tools", keys(got.Capabilities))
			}

			if !slices.Equal(sorted(got.Tools), wantTools) {
				t.Errorf("tools/list = %v, want %v", got.Tools, wantTools)
			}

			c := got.Calculate
			switch {
			case c.Threw != "":
				t.Errorf("calculate(pow(2, 10) + 1) threw %q (code %v), want a result", c.Threw, c.Code)
			case c.IsError || c.text() != "1025":
				t.Errorf("calculate(pow(2, 10) + 1) = %q (isError %v), want 1025", c.text(), c.IsError)
			}
			if string(c.StructuredContent) != `{"value":"1025"}` {
				t.Errorf("calculate structuredContent = %s, want {\"value\":\"1025\"}", c.StructuredContent)
			}

			// A wrong argument is reported to the model as a tool error that
			// names the argument, not as a protocol error.
			b := got.BadArguments
			switch {
			case b.Threw != "":
				t.Errorf("calculate({expression: 5}) threw %q (code %v), want an isError result", b.Threw, b.Code)
			case !b.IsError:
				t.Errorf("calculate({expression: 5}) = %q without isError, want isError", b.text())
			case !strings.Contains(b.text(), "expression") || !strings.Contains(b.text(), "string"):
				t.Errorf("calculate({expression: 5}) error %q does not say that expression must be a string", b.text())
			}

			if tt.streamable {
				if got.TransportProtocolVersion == nil || *got.TransportProtocolVersion != got.ProtocolVersion {
					t.Errorf("the transport sends Mcp-Protocol-Version %v, want %q", deref(got.TransportProtocolVersion), got.ProtocolVersion)
				}
				if got.SessionID == "" {
					t.Error("no Mcp-Session-Id after initialize")
				}
				if got.SessionTerminated == nil || !*got.SessionTerminated {
					t.Error("DELETE of the session did not succeed")
				}
			}
			if got.CloseError != "" {
				t.Errorf("client.close: %s", got.CloseError)
			}
		})
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

func keys[V any](m map[string]V) []string {
	return sorted(slices.Collect(func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}))
}

func deref(p *string) any {
	if p == nil {
		return nil
	}
	return *p
}
