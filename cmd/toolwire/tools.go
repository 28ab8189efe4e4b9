package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/toolwire/toolwire/host"
	"github.com/toolwire/toolwire/tool"
)

// configHelp explains the configuration file, for --help.
const configHelp = `The configuration is the "mcpServers" JSON that Claude Desktop, Cursor and
VS Code use; paste an existing one as it is:

  {
    "mcpServers": {
      "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]},
      "remote": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${API_TOKEN}"}}
    }
  }

${VAR} takes a value from the environment (${VAR:-default} when unset).
toolwire's own optional keys per server: include / exclude (tool names),
prefix (replaces the server name in "server__tool"; "" for none), timeout
("30s"), inject (values for parameters the host fills, hidden from models),
disabled.

Default file: $TOOLWIRE_CONFIG, else ` + "~/.config/toolwire/mcp.json" + `.`

type hostOptions struct {
	config  string
	timeout time.Duration
	verbose bool
}

func (o *hostOptions) flags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.config, "config", "", "configuration file (default $TOOLWIRE_CONFIG or ~/.config/toolwire/mcp.json)")
	cmd.Flags().DurationVar(&o.timeout, "timeout", 60*time.Second, "give up after this long")
	cmd.Flags().BoolVarP(&o.verbose, "verbose", "v", false, "show the servers' stderr")
}

// open loads the configuration into a host, with a context bounded by
// --timeout; done closes the host and ends the context.
func (o *hostOptions) open(cmd *cobra.Command) (h *host.Host, ctx context.Context, done func(), err error) {
	h, err = o.load(cmd.ErrOrStderr())
	if err != nil {
		return nil, nil, nil, err
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), o.timeout)
	return h, ctx, func() { cancel(); h.Close() }, nil
}

func (o *hostOptions) load(stderr io.Writer) (*host.Host, error) {
	path := o.config
	if path == "" {
		path = host.DefaultConfigPath()
	}
	cfg, err := host.LoadConfig(path)
	if err != nil {
		return nil, err
	}
	if len(cfg.Servers) == 0 {
		return nil, fmt.Errorf("config %s has no servers under \"mcpServers\"", path)
	}
	h := host.New(cfg)
	h.Client.Info.Name, h.Client.Info.Version = "toolwire", version
	if o.verbose {
		h.Stderr = stderr
	}
	return h, nil
}

func newToolsCmd() *cobra.Command {
	var o hostOptions
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "tools",
		Short: "List the tools of the configured MCP servers",
		Long:  "Connect to every configured MCP server and list its tools: name, required arguments and description.\n\n" + configHelp,
		Example: `  toolwire tools
  toolwire tools --config ./mcp.json --json | jq '.[].name'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			h, ctx, done, err := o.open(cmd)
			if err != nil {
				return err
			}
			defer done()
			tools, err := h.Tools(ctx)
			if len(tools) == 0 && err != nil {
				return err
			}
			if asJSON {
				err2 := printToolsJSON(cmd.OutOrStdout(), tools)
				return errors.Join(partial(cmd.ErrOrStderr(), err), err2)
			}
			printTools(cmd.OutOrStdout(), tools)
			return partial(cmd.ErrOrStderr(), err)
		},
	}
	o.flags(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the tools as JSON (name, description, inputSchema, ...)")
	return cmd
}

// partial reports servers that failed while others answered, and makes
// the command fail.
func partial(stderr io.Writer, err error) error {
	if err == nil {
		return nil
	}
	fmt.Fprintln(stderr, "toolwire: some servers failed:")
	for _, line := range strings.Split(err.Error(), "\n") {
		fmt.Fprintln(stderr, "  "+line)
	}
	return errors.New("some servers failed (see above)")
}

func requiredArgs(schema json.RawMessage) []string {
	var s struct {
		Required []string `json:"required"`
	}
	_ = json.Unmarshal(schema, &s)
	return s.Required
}

func printTools(w io.Writer, tools []tool.Tool) {
	sort.Slice(tools, func(i, j int) bool { return tools[i].Info().Name < tools[j].Info().Name })
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOOL\tREQUIRED\tDESCRIPTION")
	for _, t := range tools {
		i := t.Info()
		desc := strings.Join(strings.Fields(i.Description), " ")
		if len(desc) > 80 {
			desc = desc[:77] + "..."
		}
		req := strings.Join(requiredArgs(i.InputSchema), ", ")
		if req == "" {
			req = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", i.Name, req, desc)
	}
	tw.Flush()
}

func printToolsJSON(w io.Writer, tools []tool.Tool) error {
	infos := make([]tool.Info, len(tools))
	for i, t := range tools {
		infos[i] = t.Info()
	}
	sort.Slice(infos, func(i, j int) bool { return infos[i].Name < infos[j].Name })
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(infos)
}

// exitError carries a process exit code.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

func newCallCmd() *cobra.Command {
	var o hostOptions
	cmd := &cobra.Command{
		Use:   "call SERVER__TOOL [JSON_ARGS]",
		Short: "Call one tool of a configured MCP server",
		Long: `Call a tool by its full name (see toolwire tools) with arguments as a JSON
object ("-" reads them from stdin). Text content is printed as text and
structured content as JSON. A tool error prints its message to stderr and
exits with status 1.

` + configHelp,
		Example: `  toolwire call files__read_text_file '{"path": "/tmp/notes.txt"}'
  echo '{"message": "hi"}' | toolwire call everything__echo -`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			raw := "{}"
			if len(args) == 2 {
				raw = args[1]
			}
			if raw == "-" {
				b, err := io.ReadAll(cmd.InOrStdin())
				if err != nil {
					return err
				}
				raw = string(b)
			}
			h, ctx, done, err := o.open(cmd)
			if err != nil {
				return err
			}
			defer done()
			tools, listErr := h.Tools(ctx)
			var reg tool.Registry
			if err := reg.Add(tools...); err != nil {
				return err
			}
			if _, ok := reg.Lookup(args[0]); !ok {
				msg := fmt.Sprintf("no tool %q: run `toolwire tools` to see the tool names", args[0])
				if listErr != nil {
					msg += "\n" + listErr.Error()
				}
				return errors.New(msg)
			}
			res, err := reg.Call(ctx, args[0], json.RawMessage(raw))
			if err != nil {
				res = tool.ErrorResult(err)
			}
			return printResult(cmd.OutOrStdout(), cmd.ErrOrStderr(), res)
		},
	}
	o.flags(cmd)
	return cmd
}

// printResult prints a tool result: text as text, structured content as
// JSON, other content summarized; an error result goes to stderr.
func printResult(stdout, stderr io.Writer, res *tool.Result) error {
	out := stdout
	if res.IsError {
		out = stderr
	}
	for _, c := range res.Content {
		switch c.Type {
		case tool.TypeText:
			if res.StructuredContent != nil && !res.IsError {
				continue // the structured form is printed below
			}
			fmt.Fprintln(out, c.Text)
		case tool.TypeImage, tool.TypeAudio:
			fmt.Fprintf(out, "[%s %s, %d bytes base64]\n", c.Type, c.MimeType, len(c.Data))
		case tool.TypeResource:
			if c.Resource.Text != "" {
				fmt.Fprintf(out, "[resource %s]\n%s\n", c.Resource.URI, c.Resource.Text)
			} else {
				fmt.Fprintf(out, "[resource %s, %s, %d bytes base64]\n", c.Resource.URI, c.Resource.MimeType, len(c.Resource.Blob))
			}
		case tool.TypeResourceLink:
			fmt.Fprintf(out, "[link %s %s]\n", c.Link.URI, c.Link.Name)
		}
	}
	if res.StructuredContent != nil && !res.IsError {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(res.StructuredContent); err != nil {
			return err
		}
	}
	if res.IsError {
		return &exitError{code: 1, msg: "the tool reported an error"}
	}
	return nil
}
