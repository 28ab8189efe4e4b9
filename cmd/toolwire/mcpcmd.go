package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/tailscale/hujson"

	"github.com/toolwire/toolwire/host"
	"github.com/toolwire/toolwire/mcp"
)

// newMCPCmd is "toolwire mcp": the configuration's servers managed from
// the command line, in the manner of claude mcp.
func newMCPCmd(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Add, remove, show and check the configured MCP servers",
		Long: `Manage the MCP servers of the configuration file, as claude mcp does:
add, add-json and remove edit the file; get shows a server; list connects to
each server and says whether it answers.

Edits keep the rest of the file as it was: the other servers, keys toolwire
does not know, the order, and the comments and trailing commas of a JSONC
file such as VS Code's. The file is replaced whole (written to a temporary
file, then renamed), so that no reader sees half of it.

` + configOrder + `

add and remove never edit another app's file unless --config names it:
without a toolwire or project file, they create ~/.config/toolwire/mcp.json.`,
		Example: `  toolwire mcp add everything -- npx -y @modelcontextprotocol/server-everything
  toolwire mcp add github --url https://api.githubcopilot.com/mcp/ --header 'Authorization: Bearer ${GITHUB_TOKEN}'
  toolwire mcp add-json memory '{"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}'
  toolwire mcp list
  toolwire mcp get everything
  toolwire mcp remove everything`,
		Args: noArgs,
	}
	cmd.AddCommand(newMCPAddCmd(g), newMCPAddJSONCmd(g), newMCPRemoveCmd(g), newMCPGetCmd(g), newMCPListCmd(g), newMCPTrustCmd(g))
	return cmd
}

// configFlag is the --config of the mcp commands.
func configFlag(cmd *cobra.Command, o *hostOptions) {
	cmd.Flags().StringVar(&o.config, "config", "", "the configuration file (default: see toolwire help config)")
}

func newMCPAddCmd(g *globalOptions) *cobra.Command {
	o := hostOptions{g: g}
	var a adhocServer
	var transport string
	var force bool
	cmd := &cobra.Command{
		Use:   "add NAME (--url URL | -- COMMAND [ARG...])",
		Short: "Add a server: a command to launch over stdio, or an HTTP server's URL",
		Long: `Add a server to the configuration file toolwire reads (see toolwire mcp
--help for which; --config names another): the command after "--" (with
--env KEY=VALUE for its environment), or --url (with --header 'Name: value',
and --transport sse for the older HTTP+SSE transport). Its tools are named
NAME__TOOL. A NAME the file has already is refused unless --force, which
replaces it. Write secrets as ${VAR}: the value is read from the
environment when the server starts, and stays out of the file.`,
		Example: `  toolwire mcp add everything -- npx -y @modelcontextprotocol/server-everything
  toolwire mcp add files -e DEBUG=1 -- npx -y @modelcontextprotocol/server-filesystem /tmp
  toolwire mcp add remote --url http://127.0.0.1:8080/mcp --header 'Authorization: Bearer ${TOKEN}'
  toolwire mcp add --config .mcp.json everything -- npx -y @modelcontextprotocol/server-everything`,
		Args: withUsage(func(cmd *cobra.Command, args []string) error {
			own := args
			if dash := cmd.ArgsLenAtDash(); dash >= 0 {
				own, a.command = args[:dash], args[dash:]
			}
			switch {
			case len(own) != 1:
				return fmt.Errorf("want one NAME before the command or --url, not %d arguments (the command goes after \"--\")", len(own))
			case len(a.command) == 0 && a.url == "":
				return fmt.Errorf("give the server's command after \"--\", or --url")
			case transport != "" && a.url == "":
				return fmt.Errorf("--transport is for --url: a command's server is stdio")
			case transport != "" && transport != "http" && transport != "sse":
				return fmt.Errorf("--transport %q: use http (Streamable HTTP) or sse (the older HTTP+SSE)", transport)
			}
			return a.check(&hostOptions{})
		}),
		RunE: func(cmd *cobra.Command, args []string) error {
			entry, err := configEntry(a.command, a.url, a.env, a.headers)
			if err != nil {
				return &usageError{cmd: cmd, err: err}
			}
			if transport != "" {
				entry["type"] = transport
			}
			if !o.g.quiet {
				for _, n := range literalSecrets(a.env, a.headers) {
					fmt.Fprintf(cmd.ErrOrStderr(), "toolwire: warning: %s is written into the file as it is: write ${VAR} to keep the secret in the environment\n", n)
				}
			}
			b, err := marshalEntry(entry)
			if err != nil {
				return err
			}
			return o.addServer(cmd, args[0], b, force)
		},
	}
	configFlag(cmd, &o)
	f := cmd.Flags()
	f.StringVar(&a.url, "url", "", "the HTTP server's URL")
	f.StringArrayVar(&a.headers, "header", nil, "an HTTP header, 'Name: value' (repeatable)")
	f.StringArrayVarP(&a.env, "env", "e", nil, "an environment variable for the command, KEY=VALUE (repeatable)")
	f.StringVarP(&transport, "transport", "t", "", "with --url: http (Streamable HTTP, the default) or sse (HTTP+SSE)")
	f.BoolVar(&force, "force", false, "replace a server of the same name")
	return cmd
}

// literalSecrets names the variables (KEY=VALUE) and headers ("Name:
// value") that look like secrets and are written as values, not as ${VAR}.
func literalSecrets(env, headers []string) []string {
	var out []string
	check := func(what, name, value string) {
		n := strings.ToLower(name)
		if strings.Contains(value, "${") || strings.TrimSpace(value) == "" {
			return
		}
		for _, w := range []string{"authorization", "token", "secret", "key", "password"} {
			if strings.Contains(n, w) {
				out = append(out, fmt.Sprintf("%s %s", what, name))
				return
			}
		}
	}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		check("the variable", k, v)
	}
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ":")
		check("the header", strings.TrimSpace(k), v)
	}
	return out
}

// marshalEntry writes an entry with its keys in the order people write
// them: type, command, args, env, url, headers.
func marshalEntry(entry map[string]any) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for _, k := range []string{"type", "command", "args", "env", "url", "headers"} {
		v, ok := entry[k]
		if !ok {
			continue
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		if buf.Len() > 1 {
			buf.WriteByte(',')
		}
		fmt.Fprintf(&buf, "%q:%s", k, b)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

func newMCPAddJSONCmd(g *globalOptions) *cobra.Command {
	o := hostOptions{g: g}
	var force bool
	cmd := &cobra.Command{
		Use:   "add-json NAME JSON",
		Short: "Add a server given as its JSON entry",
		Long: `Add a server given as the JSON object of its entry, as another app's
configuration writes it (comments and trailing commas allowed): the keys of
toolwire help config. The entry is checked before the file is changed. A
NAME the file has already is refused unless --force.`,
		Example: `  toolwire mcp add-json memory '{"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}'
  toolwire mcp add-json api '{"type": "http", "url": "https://example.com/mcp", "timeout": "1m"}'`,
		Args: withUsage(cobra.ExactArgs(2)),
		RunE: func(cmd *cobra.Command, args []string) error {
			b, err := hujson.Standardize([]byte(args[1]))
			if err != nil {
				return &usageError{cmd: cmd, err: fmt.Errorf("the entry is not valid JSON: %s", strings.TrimPrefix(err.Error(), "hujson: "))}
			}
			var buf bytes.Buffer
			if err := json.Compact(&buf, b); err != nil || buf.Len() == 0 || buf.Bytes()[0] != '{' {
				return &usageError{cmd: cmd, err: fmt.Errorf("the entry must be a JSON object, as in '{\"command\": \"npx\", \"args\": [\"-y\", \"pkg\"]}'")}
			}
			return o.addServer(cmd, args[0], buf.Bytes(), force)
		},
	}
	configFlag(cmd, &o)
	cmd.Flags().BoolVar(&force, "force", false, "replace a server of the same name")
	return cmd
}

// anyVar resolves every ${VAR}, so that an entry is checked without the
// environment it will start in.
func anyVar(string) (string, bool) { return "x", true }

// addServer checks the entry and writes it into the file mcp add edits.
func (o *hostOptions) addServer(cmd *cobra.Command, name string, entry []byte, force bool) error {
	f, err := o.findConfig(true)
	if err != nil {
		return err
	}
	one := fmt.Appendf(nil, `{"mcpServers": {%q: %s}}`, name, entry)
	cfg, err := host.ParseConfig(f.Path, one, anyVar)
	if err != nil {
		return &usageError{cmd: cmd, err: err}
	}
	sc := cfg.Servers[name]
	if !o.g.quiet {
		for _, w := range cfg.Warnings {
			fmt.Fprintln(cmd.ErrOrStderr(), "toolwire: warning:", w)
		}
	}
	err = editConfig(f.Path, func(root *hujson.Value) error { return setServer(root, name, entry, force) })
	if errors.Is(err, errExists) {
		return fmt.Errorf("server %q is in %s already: --force replaces it (toolwire mcp get %s shows it)", name, f.Path, shellQuote(name))
	}
	if err != nil {
		return err
	}
	what := "stdio"
	if sc == nil { // disabled
		what = "disabled"
	} else if sc.URL != "" {
		what = "HTTP"
	}
	fmt.Fprintf(cmd.OutOrStdout(), "Added %s server %s to %s\n", what, name, f.describe())
	if sc != nil {
		fmt.Fprintf(cmd.OutOrStdout(), "Its tools are named %sTOOL: toolwire tools %s lists them\n", sc.ToolPrefix(), shellQuote(name))
	}
	if !f.Exists && !o.g.quiet {
		if apps := host.AppConfigs(); len(apps) > 0 {
			fmt.Fprintf(cmd.ErrOrStderr(), "toolwire: note: toolwire now reads %s, no longer %s's %s (--config chooses)\n", f.Path, apps[0].App, apps[0].Path)
		}
	}
	return nil
}

func newMCPRemoveCmd(g *globalOptions) *cobra.Command {
	o := hostOptions{g: g}
	cmd := &cobra.Command{
		Use:     "remove NAME",
		Aliases: []string{"rm"},
		Short:   "Remove a server from the configuration file",
		Example: `  toolwire mcp remove everything`,
		Args:    withUsage(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			f, err := o.findConfig(true)
			if err != nil {
				return err
			}
			removed := false
			if f.Exists {
				err = editConfig(f.Path, func(root *hujson.Value) (err error) {
					removed, err = removeServer(root, name)
					if err == nil && !removed {
						err = errNotThere
					}
					return err
				})
			}
			if err != nil && !errors.Is(err, errNotThere) {
				return err
			}
			if !removed {
				msg := fmt.Sprintf("no server %q in %s", name, f.describe())
				if r, err := o.findConfig(false); err == nil && r.Path != f.Path {
					msg += fmt.Sprintf("; toolwire reads %s's %s, which mcp remove edits only when --config names it", r.Origin, r.Path)
				} else {
					msg += " (toolwire mcp list shows the servers)"
				}
				return errors.New(msg)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Removed server %s from %s\n", name, f.describe())
			return nil
		},
	}
	configFlag(cmd, &o)
	return cmd
}

// errNotThere makes editConfig leave a file alone when the server to
// remove is not in it.
var errNotThere = errors.New("not there")

// mcpServer is a server as mcp get and mcp list show it: no secret (the
// command line and URL as the file writes them, names of variables and
// headers without their values).
type mcpServer struct {
	Name      string   `json:"name"`
	Transport string   `json:"transport"`
	URL       string   `json:"url,omitempty"`
	Command   string   `json:"command,omitempty"`
	Env       []string `json:"env,omitempty"`
	Headers   []string `json:"headers,omitempty"`
	Prefix    string   `json:"toolPrefix"`
	// Status is what mcp list found: "connected", "failed" or
	// "needs_login".
	Status string `json:"status,omitempty"`
	Tools  *int   `json:"tools,omitempty"`
	// Step is where a failed server failed: spawn, connect, initialize
	// or list.
	Step  string `json:"step,omitempty"`
	Error string `json:"error,omitempty"`
	// Login is the command that logs in to a server that needs it.
	Login string `json:"login,omitempty"`
}

func describeMCPServer(sc *host.ServerConfig) mcpServer {
	e := describeServer(sc, nil, time.Time{})
	s := mcpServer{Name: sc.Name, Transport: e.Transport, URL: e.URL, Command: e.Command, Prefix: sc.ToolPrefix()}
	for k := range sc.Env {
		s.Env = append(s.Env, k)
	}
	for k := range sc.Headers {
		s.Headers = append(s.Headers, k)
	}
	sort.Strings(s.Env)
	sort.Strings(s.Headers)
	return s
}

func newMCPGetCmd(g *globalOptions) *cobra.Command {
	o := hostOptions{g: g}
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "get NAME",
		Short: "Show a configured server: its file, transport, command or URL",
		Long: `Show a server of the configuration: the file it is in, its transport, its
command or URL as the file writes them (${VAR} not expanded), and the names
of its environment variables and headers (their values are not shown, as
they may be secrets).`,
		Example: `  toolwire mcp get everything
  toolwire mcp get everything --json`,
		Args:              withUsage(cobra.ExactArgs(1)),
		ValidArgsFunction: o.completeServers,
		RunE: func(cmd *cobra.Command, args []string) error {
			// No variable need be set to show the file.
			f, cfg, err := o.readConfig(cmd.ErrOrStderr(), anyVar)
			if err != nil {
				return err
			}
			sc, err := (&host.Host{Config: cfg}).Server(args[0])
			if err != nil {
				return err
			}
			s := describeMCPServer(sc)
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), struct {
					mcpServer
					File string `json:"file"`
				}{s, f.Path})
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "%s:\n  File: %s\n  Transport: %s\n", s.Name, f.describe(), s.Transport)
			if s.URL != "" {
				fmt.Fprintf(w, "  URL: %s\n", s.URL)
			} else {
				fmt.Fprintf(w, "  Command: %s\n", s.Command)
			}
			if len(s.Env) > 0 {
				fmt.Fprintf(w, "  Environment: %s (values not shown)\n", strings.Join(s.Env, ", "))
			}
			if len(s.Headers) > 0 {
				fmt.Fprintf(w, "  Headers: %s (values not shown)\n", strings.Join(s.Headers, ", "))
			}
			fmt.Fprintf(w, "  Tools: %sTOOL\n", s.Prefix)
			_, err = fmt.Fprintf(w, "\nTo remove it: toolwire mcp remove %s%s\n", shellQuote(s.Name), o.configArg())
			return err
		},
	}
	configFlag(cmd, &o)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the server as JSON (name, file, transport, url or command, env and header names)")
	return cmd
}

// configArg is " --config FILE" when --config was given, for commands
// suggested to the user.
func (o *hostOptions) configArg() string {
	if o.config == "" {
		return ""
	}
	return " --config " + shellQuote(o.config)
}

// readConfig finds and reads the configuration file, with its warnings;
// with lookup nil, ${VAR} takes its value from the environment, else
// from lookup.
func (o *hostOptions) readConfig(stderr io.Writer, lookup func(string) (string, bool)) (configFile, *host.Config, error) {
	f, err := o.findConfig(false)
	if err != nil {
		return f, nil, err
	}
	var cfg *host.Config
	if lookup == nil {
		cfg, err = host.LoadConfig(f.Path)
	} else {
		var data []byte
		if data, err = os.ReadFile(f.Path); err == nil {
			cfg, err = host.ParseConfig(f.Path, data, lookup)
		}
	}
	if err != nil {
		return f, nil, err
	}
	if !o.g.quiet {
		for _, w := range cfg.Warnings {
			fmt.Fprintln(stderr, "toolwire: warning:", w)
		}
	}
	return f, cfg, nil
}

func newMCPListCmd(g *globalOptions) *cobra.Command {
	o := hostOptions{g: g}
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the configured servers, and whether each answers",
		Long: `Say which configuration file is used, then connect to each of its servers
and say, one line per server:

  connected, N tools                   it answered, with N tools
  failed at STEP: ERROR                STEP is spawn (starting its command),
                                       connect (reaching its URL), initialize
                                       (the handshake) or list (tools/list)
  needs login: toolwire login NAME     it answered 401 and asks for an OAuth login

The exit status is 1 when a server failed, 0 otherwise. -v shows the
servers' stderr.`,
		Example: `  toolwire mcp list
  toolwire mcp list --json | jq -r '.servers[] | select(.status == "failed") | .name'`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.mcpList(cmd, asJSON)
		},
	}
	o.flags(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the file and the servers as JSON (name, transport, url or command, status, tools, step, error)")
	return cmd
}

func (o *hostOptions) mcpList(cmd *cobra.Command, asJSON bool) error {
	f, cfg, err := o.readConfig(cmd.ErrOrStderr(), nil)
	if err != nil {
		return err
	}
	names := (&host.Host{Config: cfg}).ServerNames()
	servers := make([]mcpServer, len(names))
	for i, n := range names {
		servers[i] = describeMCPServer(cfg.Servers[n])
	}
	if len(names) > 0 {
		o.config = f.Path // open reads the same file
		s, err := o.open(cmd)
		if err != nil {
			return err
		}
		defer s.close()
		var wg sync.WaitGroup
		for i, name := range names {
			wg.Go(func() {
				tools, err := s.Tools(s.ctx, name)
				health(&servers[i], len(tools), err, o.loginCommand())
			})
		}
		wg.Wait()
		s.progress.close()
	}
	failed := 0
	for _, s := range servers {
		if s.Status == "failed" {
			failed++
		}
	}
	var werr error
	if asJSON {
		werr = writeJSON(cmd.OutOrStdout(), struct {
			File    string      `json:"file"`
			Origin  string      `json:"origin"`
			Servers []mcpServer `json:"servers"`
		}{f.Path, f.Origin, servers})
	} else {
		w := cmd.OutOrStdout()
		fmt.Fprintf(w, "Configuration: %s\n", f.describe())
		for _, other := range f.Others {
			fmt.Fprintf(w, "Not used: %s (%s's)\n", other.Path, other.App)
		}
		for _, u := range f.Untrusted {
			fmt.Fprintf(w, "Not used: %s (%s's; not trusted as it is: toolwire mcp trust %s)\n", u.Path, u.App, shellQuote(u.Path))
		}
		if len(servers) == 0 {
			fmt.Fprintln(w, "No servers: toolwire mcp add NAME -- COMMAND adds one")
		} else {
			fmt.Fprintln(w)
		}
		tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
		for _, s := range servers {
			target := s.URL
			if target == "" {
				target = s.Command
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", s.Name, s.Transport, oneLine(target, 60), healthText(s))
		}
		werr = tw.Flush()
	}
	if werr != nil {
		return werr
	}
	if failed > 0 {
		return &exitError{code: 1, msg: fmt.Sprintf("%d of %d servers failed", failed, len(servers))}
	}
	return nil
}

// health records what connecting to a server and listing its tools gave.
func health(s *mcpServer, tools int, err error, loginCommand string) {
	var lr *host.LoginRequiredError
	var ce *host.ConnectError
	switch {
	case err == nil:
		s.Status, s.Tools = "connected", &tools
	case errors.As(err, &lr):
		s.Status, s.Login = "needs_login", fmt.Sprintf(loginCommand, shellQuote(s.Name))
	case errors.As(err, &ce):
		s.Status, s.Error = "failed", ce.Err.Error()
		switch ce.Step {
		case host.StepStart:
			s.Step = "spawn"
		case host.StepConnect:
			s.Step = "connect"
		case mcp.MethodInitialize, mcp.MethodDiscover:
			s.Step = "initialize"
		default:
			s.Step = ce.Step
		}
		s.Error = strings.TrimPrefix(s.Error, ce.Step+": ")
		if ce.TimedOut {
			s.Error = ce.Error()
		}
	default:
		s.Status, s.Step, s.Error = "failed", "list", err.Error()
	}
}

// healthText is a server's status in mcp list.
func healthText(s mcpServer) string {
	switch s.Status {
	case "connected":
		return fmt.Sprintf("connected, %d tools", *s.Tools)
	case "needs_login":
		return "needs login: " + s.Login
	}
	return fmt.Sprintf("failed at %s: %s", s.Step, oneLine(s.Error, 100))
}
