package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/toolwire/toolwire/host"
)

// adhocServer is a server given on the command line, used instead of the
// configuration file: a command after "--", or --url.
type adhocServer struct {
	command []string
	url     string
	headers []string
	env     []string
	name    string
}

// adhocHelp is added to the help of the commands that take an ad-hoc
// server.
const adhocHelp = `

An ad-hoc server, without a configuration entry: a command to launch over
stdio after "--" (with --env KEY=VALUE), or --url for an HTTP server (with
--header 'Name: value'). Its tools are named NAME__TOOL as a configured
server's are; NAME is --name, else the command's base name, or, for a
launcher (npx, uvx, node, python, ...), that of the package or script it
runs without scope, version or extension (npx -y @scope/server-x@1 is
server-x), else the URL's host name (127.0.0.1 gives 127_0_0_1__TOOL).
${VAR} in --env and --header values is taken from the environment.`

// launchers are commands whose first argument that is not an option names
// the server they run.
var launchers = []string{"npx", "pnpx", "bunx", "uvx", "pipx", "node", "deno", "bun", "python", "python3", "uv", "go"}

// withAdhoc gives cmd the ad-hoc server options: the arguments after
// "--" are the server's command, the rest go to cmd's own checks and RunE.
func withAdhoc(o *hostOptions, cmd *cobra.Command, example string) *cobra.Command {
	a := &o.adhoc
	f := cmd.Flags()
	f.StringVar(&a.url, "url", "", "an ad-hoc HTTP server's URL, instead of the configuration")
	f.StringArrayVar(&a.headers, "header", nil, "an HTTP header for the --url server, 'Name: value' (repeatable)")
	f.StringArrayVarP(&a.env, "env", "e", nil, "an environment variable for the ad-hoc server's command, KEY=VALUE (repeatable)")
	f.StringVar(&a.name, "name", "", "the ad-hoc server's name, which prefixes its tools (default: from its command or URL)")
	cmd.Use += " [-- COMMAND [ARG...]]"
	cmd.Long += adhocHelp
	cmd.Example += "\n" + example
	check, run := cmd.Args, cmd.RunE
	cmd.Args = func(c *cobra.Command, args []string) error {
		own := args
		if dash := c.ArgsLenAtDash(); dash >= 0 {
			own, a.command = args[:dash], args[dash:]
			if len(a.command) == 0 {
				return &usageError{cmd: c, err: fmt.Errorf("nothing after \"--\": give the ad-hoc server's command, as in -- npx -y @modelcontextprotocol/server-everything")}
			}
		}
		if err := a.check(o); err != nil {
			return &usageError{cmd: c, err: err}
		}
		if check == nil {
			return nil
		}
		return check(c, own)
	}
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if dash := c.ArgsLenAtDash(); dash >= 0 {
			args = args[:dash]
		}
		return run(c, args)
	}
	return cmd
}

// check refuses options that do not go together.
func (a *adhocServer) check(o *hostOptions) error {
	switch {
	case len(a.command) > 0 && a.url != "":
		return fmt.Errorf("both a command after \"--\" and --url: an ad-hoc server is one or the other")
	case !a.set() && (len(a.headers) > 0 || len(a.env) > 0 || a.name != ""):
		return fmt.Errorf("--header, --env and --name are for an ad-hoc server: give its command after \"--\", or --url")
	case len(a.env) > 0 && a.url != "":
		return fmt.Errorf("--env is for a server launched by a command; an HTTP server takes --header")
	case len(a.headers) > 0 && a.url == "":
		return fmt.Errorf("--header is for an HTTP server (--url); a command's server takes --env")
	case a.set() && o.config != "":
		return fmt.Errorf("--config and an ad-hoc server: use one or the other")
	}
	return nil
}

// set says an ad-hoc server was given.
func (a *adhocServer) set() bool { return len(a.command) > 0 || a.url != "" }

// config is a configuration of the ad-hoc server alone, parsed as a
// configuration file is (${VAR}, checks); with -v, it says the name.
func (a *adhocServer) config(stderr io.Writer, g *globalOptions) (*host.Config, error) {
	entry, err := configEntry(a.command, a.url, a.env, a.headers)
	if err != nil {
		return nil, err
	}
	name := a.name
	if name == "" {
		name = adhocName(a.command, a.url)
	}
	b, err := json.Marshal(map[string]any{"mcpServers": map[string]any{name: entry}})
	if err != nil {
		return nil, err
	}
	cfg, err := host.ParseConfig("(command line)", b, os.LookupEnv)
	if err == nil && g.verbose {
		fmt.Fprintf(stderr, "toolwire: ad-hoc server %s: its tools are named %sTOOL (--name to change)\n", name, cfg.Servers[name].ToolPrefix())
	}
	return cfg, err
}

// configEntry is a configuration entry for a command or a URL, with
// environment variables (KEY=VALUE) or headers ("Name: value").
func configEntry(command []string, u string, env, headers []string) (map[string]any, error) {
	entry := map[string]any{}
	if u != "" {
		entry["type"], entry["url"] = "http", u
		if pu, err := url.Parse(u); err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
			return nil, fmt.Errorf("URL %q: want an http:// or https:// URL, as in http://127.0.0.1:8080/mcp", u)
		}
	} else {
		entry["type"], entry["command"] = "stdio", command[0]
		if len(command) > 1 {
			entry["args"] = command[1:]
		}
	}
	if len(env) > 0 {
		m := map[string]string{}
		for _, kv := range env {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || k == "" {
				return nil, fmt.Errorf("environment variable %q: write KEY=VALUE", kv)
			}
			m[k] = v
		}
		entry["env"] = m
	}
	if len(headers) > 0 {
		m := map[string]string{}
		for _, h := range headers {
			k, v, ok := strings.Cut(h, ":")
			if !ok || strings.TrimSpace(k) == "" {
				return nil, fmt.Errorf("header %q: write 'Name: value'", strings.SplitN(h, ":", 2)[0])
			}
			m[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
		entry["headers"] = m
	}
	return entry, nil
}

// notName matches what a server name may not hold.
var notName = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// adhocName is the name of an ad-hoc server: see adhocHelp.
func adhocName(command []string, u string) string {
	var name string
	if u != "" {
		if pu, err := url.Parse(u); err == nil {
			name = pu.Hostname()
		}
	} else {
		name = filepath.Base(command[0])
		if isLauncher(name) {
			for _, arg := range command[1:] {
				if !strings.HasPrefix(arg, "-") && arg != "run" && arg != "dlx" {
					name = path.Base(filepath.ToSlash(arg))
					if at := strings.LastIndex(name, "@"); at > 0 { // @scope/pkg@1.2.3
						name = name[:at]
					}
					name = strings.TrimSuffix(name, path.Ext(name))
					break
				}
			}
		}
	}
	name = strings.Trim(notName.ReplaceAllString(name, "_"), "_.")
	if name == "" {
		return "server"
	}
	return name
}

func isLauncher(base string) bool {
	return slices.Contains(launchers, strings.TrimSuffix(base, ".exe"))
}
