package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/toolwire/toolwire/bearer"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/telemetry"
	"github.com/toolwire/toolwire/toolsets"
)

type serveOptions struct {
	http      string
	toolsets  []string
	origins   []string
	hosts     []string
	verbose   bool
	logFormat string
	data      dataOptions
	// Bounds of --http (see the mcp fields of the same names).
	maxSessions       int
	maxStreams        int
	streamIdleTimeout time.Duration
	stateKeyFile      string
	taskAfter         time.Duration
	workflows         []string // --workflow: FILE or NAME=FILE
	auth              authOptions
	gateway           gatewayOptions
	tel               *telemetry.Config // execute_tool spans; nil for none
}

// authOptions are the --auth-* flags: the tokens serve --http requires.
type authOptions struct {
	issuer     string
	audience   string
	scopes     []string
	toolScopes []string // TOOL=SCOPE
	introspect bool
	clientID   string
}

// authSecretEnv names the environment variable holding the client
// secret of --auth-client-id: a secret on the command line would show
// in the process list.
const authSecretEnv = "TOOLWIRE_AUTH_CLIENT_SECRET"

func (a *authOptions) addFlags(f *pflag.FlagSet) {
	f.StringVar(&a.issuer, "auth-issuer", "", "with --http: require OAuth access tokens from this authorization server (its issuer URL); needs --auth-audience")
	f.StringVar(&a.audience, "auth-audience", "", "with --auth-issuer: this server's canonical URL, as clients reach it (e.g. https://mcp.example.com/mcp): tokens must be issued for it")
	f.StringSliceVar(&a.scopes, "auth-scope", nil, "with --auth-issuer: a scope every request needs (repeat, or comma-separate)")
	f.StringArrayVar(&a.toolScopes, "auth-tool-scope", nil, "with --auth-issuer: TOOL=SCOPE, a scope a call of TOOL needs besides --auth-scope (repeat)")
	f.BoolVar(&a.introspect, "auth-introspect", false, "with --auth-issuer: check tokens by asking the authorization server (RFC 7662 introspection, for opaque tokens) instead of verifying them as JWTs")
	f.StringVar(&a.clientID, "auth-client-id", "", "with --auth-introspect: this server's client id at the authorization server; its secret is read from $"+authSecretEnv)
}

// check refuses --auth-* flags that cannot work, before any network
// request: without --http, an issuer without an audience (or the
// reverse), an audience that is not an absolute URL, a malformed
// --auth-tool-scope.
func (a authOptions) check(http string) error {
	set := a.issuer != "" || a.audience != "" || len(a.scopes) > 0 || len(a.toolScopes) > 0 || a.introspect || a.clientID != ""
	switch {
	case !set:
		return nil
	case http == "":
		return errors.New("--auth-* flags need --http: authorization is for HTTP (over stdio the client starts the server itself, and the server trusts it)")
	case a.issuer == "":
		return errors.New("--auth-* flags need --auth-issuer: name the authorization server that issues the tokens")
	case a.audience == "":
		return errors.New("--auth-issuer needs --auth-audience: this server's canonical URL, as clients reach it (e.g. https://mcp.example.com/mcp)")
	case a.clientID != "" && !a.introspect:
		return errors.New("--auth-client-id is for --auth-introspect: verifying JWTs needs no client")
	}
	if u, err := url.Parse(a.audience); err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") || u.Fragment != "" {
		return fmt.Errorf("--auth-audience %q: give this server's canonical URL, absolute, without a fragment (e.g. https://mcp.example.com/mcp)", a.audience)
	}
	if _, err := a.toolScopeMap(); err != nil {
		return err
	}
	return nil
}

// toolScopeMap reads the --auth-tool-scope flags.
func (a authOptions) toolScopeMap() (map[string][]string, error) {
	m := map[string][]string{}
	for _, ts := range a.toolScopes {
		name, scope, ok := strings.Cut(ts, "=")
		if !ok || name == "" || scope == "" {
			return nil, fmt.Errorf("--auth-tool-scope %q: write TOOL=SCOPE, such as query=data:read", ts)
		}
		m[name] = append(m[name], scope)
	}
	return m, nil
}

// newAuth makes the bearer.Auth of the --auth-* flags for srv, fetching
// the authorization server's metadata (and keys); nil without
// --auth-issuer.
func (a authOptions) newAuth(ctx context.Context, srv *mcp.Server) (*bearer.Auth, error) {
	if a.issuer == "" {
		return nil, nil
	}
	toolScopes, err := a.toolScopeMap()
	if err != nil {
		return nil, err
	}
	for name := range toolScopes {
		if _, ok := srv.Registry().Lookup(name); !ok {
			return nil, fmt.Errorf("--auth-tool-scope %s=…: this server has no tool %s (see toolwire serve's tools with toolwire tools)", name, name)
		}
	}
	var v bearer.Verifier
	if a.introspect {
		v, err = bearer.NewIntrospection(ctx, bearer.IntrospectionConfig{Issuer: a.issuer, Audience: a.audience, ClientID: a.clientID, ClientSecret: os.Getenv(authSecretEnv)})
	} else {
		v, err = bearer.NewJWT(ctx, bearer.JWTConfig{Issuer: a.issuer, Audience: a.audience})
	}
	if err != nil {
		return nil, fmt.Errorf("--auth-issuer %s: %w", a.issuer, err)
	}
	return bearer.New(v, bearer.Options{Resource: a.audience, AuthorizationServers: []string{a.issuer}, Scopes: a.scopes, ToolScopes: toolScopes})
}

func newServeCmd(g *globalOptions) *cobra.Command {
	var o serveOptions
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the built-in toolsets, and the configured MCP servers, to MCP clients",
		Long: `Serve the built-in toolsets over MCP, to any client: Claude Desktop, Cursor,
VS Code, the MCP Inspector, or an agent of your own. Both protocol eras are
spoken: 2026-07-28 and the legacy 2025-11-25 back to 2024-11-05.

By default the server speaks over stdio, as a client expects when it launches
the server itself; logs go to stderr. With --http it listens for Streamable
HTTP at /mcp (and the deprecated HTTP+SSE transport at /sse for old clients),
on 127.0.0.1 unless you name another address.

With --auth-issuer and --auth-audience, every HTTP request needs an OAuth
access token (MCP authorization) from that authorization server, issued for
this server: a JWT verified against the server's published keys, or, with
--auth-introspect, any token the server vouches for (RFC 7662). Clients find
where to get one in the Protected Resource Metadata, served at
/.well-known/oauth-protected-resource/mcp. Each caller is then the token's
user: handles follow the user across sessions and replicas, and no user
reaches another's. Without --auth-issuer, tokens are not verified (see the
README's trust model).

With --servers, it is a gateway: the MCP servers of the configuration (the
one toolwire tools and toolwire run use; --config to choose) are served as
one server, alone or beside the toolsets you name. Every tool, resource,
resource template and prompt of each server is there, named as toolwire
tools names it (server__tool), with the configuration's include, exclude
and inject (an injected parameter is filled by the gateway and never shows
in the schema a client sees). A tool in a server's "confirm" list runs only
once the client's user accepts, asked by elicitation; a client that cannot
be asked is refused. Stdio servers that die are restarted; list changes,
progress and log messages reach the clients, and a client that cancels a
call, or goes away during it, cancels it on the server. HTTP servers use
the logins made with toolwire login. Results over 16 KiB (or a server's
"maxResultBytes") are kept behind handles (res_…) that read_result,
query_result and save_result read back and any tool takes as an argument.
Beyond 40 tools (--tool-search-max-tools), clients list search_tools
instead, and each then lists the tools it found. --record FILE writes
every call that succeeds as a workflow that toolwire workflow run replays
with no model.

--workflow FILE serves a recorded workflow as one tool, named after the
file (clean.json: clean; or --workflow NAME=FILE), beside the tools it
replays through: its inputs are the tool's arguments, each defaulting to
the recorded value; a call runs the nodes as toolwire workflow run does,
reports progress per node, and becomes a task for a client that takes
tasks. The result is the last node's, with each node's status and duration
as structured content. A workflow that calls a tool not served, or whose
name a served tool has, stops the server before it serves anything. With
--record, the calls a workflow makes are recorded, not its own.

With -v, each request is logged to stderr on one line: its method, the
tool, prompt or resource it names, its duration and its outcome (ok,
tool_error, error with code); --log-format json writes JSON lines instead.

Toolsets: ` + strings.Join(toolsets.Names(), ", ") + ` (default: ` + strings.Join(defaultToolsets(), ", ") + `, or none with --servers;
data, tables on DuckDB, is served when named).`,
		Example: `  # Let an MCP client launch it (e.g. in claude_desktop_config.json):
  #   "toolwire": {"command": "toolwire", "args": ["serve"]}
  toolwire serve

  # Serve over HTTP on a port of your choice
  toolwire serve --http 127.0.0.1:8080

  # Only some toolsets
  toolwire serve --toolset calc

  # Tables on DuckDB (files in the working directory), over stdio
  toolwire serve data

  # Replicas sharing tables: Parquet files in one directory, handles and
  # tasks in Redis, one key for the state of multi round-trip requests
  toolwire serve data --http 127.0.0.1:8081 --data-dir /srv/tables --redis 127.0.0.1:6379 \
    --state-key-file /srv/state.key

  # A gateway: every configured MCP server as one, over stdio
  #   "toolwire": {"command": "toolwire", "args": ["serve", "--servers", "all"]}
  toolwire serve --servers all

  # Two of them, beside the calc toolset, over HTTP, recording every call
  toolwire serve --servers github,filesystem --toolset calc --http 127.0.0.1:8080 --record calls.json
  toolwire workflow run calls.json

  # A recorded run served as one tool (clean), beside the data toolset it
  # calls; clients call it with its inputs, e.g. load_csv.path=other.csv
  toolwire serve data --workflow clean.json

  # Require access tokens from an authorization server (MCP authorization)
  toolwire serve --http 0.0.0.0:8080 --allow-host mcp.example.com \
    --auth-issuer https://auth.example.com --auth-audience https://mcp.example.com/mcp \
    --auth-scope mcp --auth-tool-scope query=data:read`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.verbose, o.tel = g.verbose, g.tel
			o.gateway.host.g = g
			if err := o.gateway.check(); err != nil {
				return &usageError{cmd: cmd, err: err}
			}
			if o.logFormat != "text" && o.logFormat != "json" {
				return &usageError{cmd: cmd, err: fmt.Errorf("--log-format %q: use text or json", o.logFormat)}
			}
			if err := o.checkBounds(); err != nil {
				return &usageError{cmd: cmd, err: err}
			}
			if err := o.auth.check(o.http); err != nil {
				return &usageError{cmd: cmd, err: err}
			}
			o.toolsets = append(o.toolsets, args...) // toolwire serve data
			if err := knownToolsets(o.toolsets); err != nil {
				return &usageError{cmd: cmd, err: err}
			}
			return runServe(cmd.Context(), o, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.http, "http", "", "serve Streamable HTTP on this address (e.g. 127.0.0.1:8080) instead of stdio")
	f.StringSliceVar(&o.toolsets, "toolset", nil, "toolsets to serve, also as arguments (default: "+strings.Join(defaultToolsets(), ", ")+"): "+strings.Join(toolsets.Names(), ", "))
	f.StringSliceVar(&o.origins, "allow-origin", nil, "with --http: browser origins allowed besides loopback ones (\"*\" for any)")
	f.StringSliceVar(&o.hosts, "allow-host", nil, "with --http: Host names allowed besides loopback ones (needed when serving a public name)")
	f.StringVar(&o.logFormat, "log-format", "text", "format of the log on stderr: text (key=value) or json")
	f.IntVar(&o.maxSessions, "max-sessions", mcp.DefaultMaxSessions, "with --http: most legacy sessions open at once; an initialize past it gets 503 with Retry-After (sessions end with DELETE or after 30 minutes unused)")
	f.IntVar(&o.maxStreams, "max-streams", mcp.DefaultMaxStreams, "with --http: most SSE streams open at once between requests (GET /mcp of legacy sessions, /sse); one past it gets 503 with Retry-After")
	f.DurationVar(&o.streamIdleTimeout, "stream-idle-timeout", mcp.DefaultStreamIdleTimeout, "with --http: close an SSE stream held open between requests that carried nothing this long (a Streamable HTTP client reopens it)")
	f.StringVar(&o.stateKeyFile, "state-key-file", "", "with --http: sign the state of multi round-trip requests with the key in this file (16 bytes or more), the same for every replica behind a load balancer (default: a random key of this process, which another replica refuses)")
	f.DurationVar(&o.taskAfter, "task-after", mcp.DefaultTaskAfter, "how long a call of a tool that may run as a task (the data toolset's query) runs before the server answers with a task the client polls (MCP's Tasks extension, for clients that declare it)")
	f.StringArrayVar(&o.workflows, "workflow", nil, "serve a recorded workflow as a tool named after the file, or NAME=FILE (repeatable); it must fit the tools served")
	o.auth.addFlags(f)
	o.gateway.addFlags(f)
	o.data.addFlags(f)
	return cmd
}

// checkBounds refuses bounds of --http that bound nothing.
func (o serveOptions) checkBounds() error {
	switch {
	case o.maxSessions < 1:
		return fmt.Errorf("--max-sessions %d: use 1 or more", o.maxSessions)
	case o.maxStreams < 1:
		return fmt.Errorf("--max-streams %d: use 1 or more", o.maxStreams)
	case o.streamIdleTimeout <= 0:
		return fmt.Errorf("--stream-idle-timeout %v: use a positive duration, such as 10m", o.streamIdleTimeout)
	case o.taskAfter <= 0:
		return fmt.Errorf("--task-after %v: use a positive duration, such as 1s", o.taskAfter)
	}
	return nil
}

// newToolServer makes the server of the toolsets o names; close the
// toolsets when it is done serving.
func newToolServer(o serveOptions, logger *slog.Logger) (_ *mcp.Server, opened openedToolsets, err error) {
	srv := &mcp.Server{
		Info:   mcp.Implementation{Name: "toolwire", Version: versionInfo().Version},
		Logger: logger,
	}
	// A call that leaves out a required argument asks the client's user
	// for it, when the client can.
	srv.Registry().AskMissing(true)
	if o.tel != nil {
		srv.Registry().SetTelemetry(*o.tel)
	}
	srv.Tasks.After = o.taskAfter
	if o.stateKeyFile != "" {
		if srv.StateKey, err = mcp.ReadStateKey(o.stateKeyFile); err != nil {
			return nil, nil, fmt.Errorf("--state-key-file: %w", err)
		}
	}
	if srv.Tasks.Store, err = o.data.taskStore(); err != nil {
		return nil, nil, err
	}
	names := o.toolsets
	if len(names) == 0 && len(o.gateway.servers) == 0 {
		names = defaultToolsets()
	}
	opened, err = openToolsets(context.Background(), names, o.data.toolsetOptions)
	if err != nil {
		return nil, nil, err
	}
	var instructions []string
	for _, ts := range opened {
		if err := srv.AddTools(ts.Tools()...); err != nil {
			_ = opened.Close() // what was opened before
			return nil, nil, fmt.Errorf("toolset %s: %w", ts.name, err)
		}
		if in := toolsetInstructions(ts.name); in != "" {
			instructions = append(instructions, in)
		}
	}
	srv.Instructions = strings.Join(instructions, " ")
	return srv, opened, nil
}

func runServe(ctx context.Context, o serveOptions, stdin io.Reader, stdout, stderr io.Writer) error {
	level := slog.LevelWarn
	if o.verbose {
		level = slog.LevelDebug
	}
	var handler slog.Handler = slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level})
	if o.logFormat == "json" {
		handler = slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: level})
	}
	logger := slog.New(handler)
	srv, opened, err := newToolServer(o, logger)
	if err != nil {
		return err
	}
	defer opened.Close() // after serving: on EOF, SIGTERM or SIGINT
	if len(o.gateway.servers) > 0 {
		o.gateway.unrecorded = workflowNames(o.workflows)
		stop, err := openGateway(ctx, o.gateway, srv, stderr)
		if err != nil {
			return err
		}
		defer stop()
	}
	if err := serveWorkflows(srv, o.workflows); err != nil {
		fmt.Fprintln(stderr, "toolwire:", err)
		return &exitError{code: 2, msg: err.Error()}
	}
	var reqlog *requestLog
	if o.verbose {
		reqlog = newRequestLog(logger)
	}
	if o.http == "" {
		if isTerminal(stdin) {
			fmt.Fprintf(stderr, "toolwire: serving %d tools over stdio (MCP messages, one JSON object per line).\n"+
				"toolwire: this is meant to be launched by an MCP client; use --http to serve over HTTP. Ctrl-D ends.\n", srv.Registry().Len())
		}
		if reqlog != nil {
			stdin, stdout = reqlog.stdio(stdin, stdout)
		}
		if err := srv.ServeStream(ctx, stdin, stdout); err != nil && ctx.Err() == nil {
			return err
		}
		return nil // ended by its input, or by Ctrl-C or SIGTERM, as over HTTP
	}
	return serveHTTP(ctx, srv, o, stdout, logger, reqlog)
}

func serveHTTP(ctx context.Context, srv *mcp.Server, o serveOptions, stdout io.Writer, logger *slog.Logger, reqlog *requestLog) error {
	addr := o.http
	if !strings.Contains(addr, ":") {
		addr = "127.0.0.1:" + addr // a bare port
	}
	auth, err := o.auth.newAuth(ctx, srv)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("cannot listen on %s: %w (is another server using the port?)", addr, err)
	}
	srv.MaxStreams, srv.StreamIdleTimeout = o.maxStreams, o.streamIdleTimeout
	cfg := mcp.HTTPConfig{
		AllowedHosts:   allowedHosts(o.hosts, ln.Addr()),
		AllowedOrigins: o.origins,
		MaxSessions:    o.maxSessions,
		ErrorLog:       slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	if auth != nil {
		cfg.Auth = auth
	}
	if reqlog != nil {
		cfg.Middleware = reqlog.handler
	}
	hs, end := mcp.NewHTTPEndpoints(srv, cfg)
	defer end()
	fmt.Fprintf(stdout, "toolwire: serving %d tools at http://%s/mcp (legacy SSE clients: /sse)\n", srv.Registry().Len(), ln.Addr())
	if auth != nil {
		fmt.Fprintf(stdout, "toolwire: requiring access tokens from %s for %s (metadata: %s)\n", o.auth.issuer, o.auth.audience, auth.MetadataURL())
	}
	return mcp.RunHTTPServer(ctx, hs, ln)
}

// allowedHosts adds the loopback names to the hosts the user allowed, so
// that allowing a public name does not lock out local clients.
func allowedHosts(extra []string, _ net.Addr) []string {
	if len(extra) == 0 {
		return nil
	}
	return append([]string{"localhost", "127.0.0.1", "::1", "[::1]"}, extra...)
}
