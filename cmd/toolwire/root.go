package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/toolwire/toolwire/telemetry"
)

// version is the toolwire version; release builds set it with -ldflags.
// Empty means: the module version from the build information.
var version = ""

// globalOptions are the flags every command has.
type globalOptions struct {
	verbose bool
	quiet   bool
	// tel is the telemetry run, chat, serve and call send, as the OTEL_*
	// variables say (withTelemetry); nil for none.
	tel *telemetry.Config
}

// newRootCmd returns the command tree; g receives the global flags.
func newRootCmd(g *globalOptions) *cobra.Command {
	root := &cobra.Command{
		Use:   "toolwire",
		Short: "Tools for LLMs, over function calling and MCP alike",
		Long: `toolwire serves tools to language models and calls the tools of MCP servers.
A tool written once as a Go function can be called in-process by an agent
or served to any MCP client.

Start with:
  toolwire serve                        serve the built-in tools over stdio
  toolwire serve --http 127.0.0.1:8080  serve them over Streamable HTTP at /mcp
  toolwire tools                        list the tools of your MCP servers
  toolwire call SERVER__TOOL '{...}'    call one of them
  toolwire run -m openai:gpt-4.1 "..."  give a model a task, with all these tools`,
		Version:       versionInfo().String(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetVersionTemplate("toolwire {{.Version}}\n")
	pf := root.PersistentFlags()
	pf.BoolVarP(&g.verbose, "verbose", "v", false, "show more on stderr: each server's stderr and state; with serve, one line per request")
	pf.BoolVarP(&g.quiet, "quiet", "q", false, "show nothing on stderr but errors (no progress, no notes)")
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error { return &usageError{cmd: cmd, err: err} })
	root.AddCommand(
		withTelemetry(g, newServeCmd(g)), newToolsCmd(g), withTelemetry(g, newCallCmd(g)),
		withTelemetry(g, newRunCmd(g)), withTelemetry(g, newChatCmd(g)), newWorkflowCmd(g),
		newResourcesCmd(g), newReadCmd(g), newPromptsCmd(g), newPromptCmd(g),
		newServersCmd(g), newLoginCmd(g), newLogoutCmd(g), newTasksCmd(g),
		newVersionCmd(), newConfigTopic(), newMCPCmd(g),
	)
	return root
}

// buildInfo is what a binary knows of its own build.
type buildInfo struct {
	Version  string `json:"version"`
	Commit   string `json:"commit,omitempty"`
	Modified bool   `json:"modified,omitempty"`
	Time     string `json:"time,omitempty"`
	Go       string `json:"go"`
}

// versionInfo reads the version and the VCS commit from the build
// information Go stamps into binaries (see readBuildInfo).
func versionInfo() buildInfo {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = nil
	}
	return readBuildInfo(version, bi, runtime.Version())
}

func (v buildInfo) String() string {
	s := v.Version
	if v.Commit != "" {
		s += " commit " + v.Commit
		if v.Modified {
			s += " (modified)"
		}
		if v.Time != "" {
			s += " of " + v.Time
		}
	}
	return s + ", " + v.Go
}

func newVersionCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version and commit toolwire was built from",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), versionInfo())
			}
			_, err := fmt.Fprintln(cmd.OutOrStdout(), "toolwire", versionInfo())
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print version, commit, modified, time and go as JSON")
	return cmd
}

// usageError is a mistake in the command line: main prints the command's
// usage after it.
type usageError struct {
	cmd *cobra.Command
	err error
}

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// withUsage makes an argument check's error a usageError.
func withUsage(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return &usageError{cmd: cmd, err: err}
		}
		return nil
	}
}

// nameAndJSON checks the arguments of call and prompt: a name, and
// optionally a JSON object, in one argument.
func nameAndJSON(what string) cobra.PositionalArgs {
	return withUsage(func(cmd *cobra.Command, args []string) error {
		switch {
		case len(args) == 0:
			return fmt.Errorf("missing the %s name (toolwire %ss lists them)", what, what)
		case len(args) > 2:
			return fmt.Errorf("%d arguments, but the JSON arguments are one: quote them, as in '{\"key\": \"value\"}'", len(args))
		}
		return nil
	})
}

// noArgs refuses arguments, with the usage.
var noArgs = withUsage(cobra.NoArgs)

// configHelp explains the configuration file; it is the "config" help
// topic, and the commands that read the file point to it.
const configHelp = `toolwire reads the "mcpServers" JSON that Claude Desktop, Cursor, VS Code and
Windsurf use; paste an existing one as it is:

  {
    "mcpServers": {
      "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]},
      "remote": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${API_TOKEN}"}}
    }
  }

Per server: command, args, env, envFile (a dotenv file; env wins over it),
cwd, for a server launched over stdio; url (or serverUrl), headers for an
HTTP server; type: stdio, http (also streamable-http, streamableHttp) or sse.
A url without a type is tried as Streamable HTTP, then as the older
HTTP+SSE transport. ${VAR} takes a value from the environment
(${VAR:-default} when unset; VS Code's ${env:VAR} and ${userHome} work too).
Comments and trailing commas (JSONC, as VS Code takes) are allowed, and VS
Code's "servers" key is read as "mcpServers". Keys toolwire does not know
are ignored with a warning.

toolwire's own optional keys: include / exclude (tool names; disabledTools
is read as exclude), prefix (replaces the server name in "server__tool"; ""
for none), timeout ("30s"; bounds starting the server, its handshake, and
each call; default 30s to connect and 2m per call), inject (values for
parameters the host fills, hidden from models), disabled, allow (tools an
agent may run without asking though they may change things; Cline's
alwaysAllow and autoApprove are read as allow), confirm (tools an agent asks
about though they say they change nothing), maxResultBytes (the size above
which run and chat keep a tool's result behind a res_ handle and show the
model a preview: a number of bytes, or {"*": N, "tool": N} by tool; -1
keeps results whole; default 16384).

Logins (OAuth). An HTTP server that requires authorization answers 401;
toolwire then says to run toolwire login NAME, which opens the browser and
keeps the tokens (in the OS keyring, else in ~/.config/toolwire/tokens.json,
readable only by you; $TOOLWIRE_TOKEN_STORE=file or keyring chooses).
toolwire logout NAME forgets them, toolwire servers lists who you are
logged in as. Nothing needs configuring when the server's authorization
server lets clients register themselves; otherwise, an "oauth" object
(Claude Code's and Gemini CLI's keys; Cursor's "auth" with CLIENT_ID and
CLIENT_SECRET is read too):

  "slack": {"url": "https://mcp.slack.com/mcp", "oauth": {
    "clientId": "123.456", "clientSecret": "${SLACK_CLIENT_SECRET}",
    "callbackPort": 8765, "scopes": ["channels:read"]}}

clientId, clientSecret: a client registered beforehand (write the secret
as ${VAR}: toolwire warns about a secret written in the file); scopes: a
list or one space-separated string, asked for instead of the server's;
callbackPort: the redirect is http://localhost:PORT/callback (else
http://127.0.0.1 on a free port), or redirectUri: the whole loopback URI;
tokenEndpointAuthMethod: client_secret_basic, client_secret_post or none;
clientMetadataUrl: a Client ID Metadata Document to use as the client id;
enabled: false turns OAuth off. A server with its own Authorization header
does not use OAuth.

Machine to machine (CI, services; no user, no browser: the MCP extension
oauth-client-credentials): "grantType": "client_credentials" with clientId
and clientSecret, or with a private key that signs a JWT assertion
(privateKeyFile, a PEM file relative to this file, or privateKey as
${VAR}; keyId and alg such as ES256 optional):

  "ci": {"url": "https://mcp.example.com/mcp", "oauth": {
    "grantType": "client_credentials", "clientId": "ci-bot",
    "clientSecret": "${CI_CLIENT_SECRET}"}}

` + configOrder

// newConfigTopic is "toolwire help config".
func newConfigTopic() *cobra.Command {
	return &cobra.Command{
		Use:   "config",
		Short: "The configuration file: which MCP servers to use, and how",
		Long:  configHelp,
	}
}
