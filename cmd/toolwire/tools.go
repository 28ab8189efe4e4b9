package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/toolwire/toolwire/host"
	"github.com/toolwire/toolwire/schema"
	"github.com/toolwire/toolwire/tool"
)

func newToolsCmd(g *globalOptions) *cobra.Command {
	o := hostOptions{g: g}
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "tools [SERVER...]",
		Short: "List the tools of the configured MCP servers",
		Long: `Connect to the configured MCP servers (or only those named) and list their
tools: name, required arguments and description. "toolwire tools show NAME"
shows one tool's parameters.

The servers come from the configuration file: see toolwire help config.`,
		Example: `  toolwire tools
  toolwire tools memory files
  toolwire tools --config ./mcp.json --json | jq '.[].name'`,
		Args:              cobra.ArbitraryArgs,
		ValidArgsFunction: o.completeServers,
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := o.open(cmd)
			if err != nil {
				return err
			}
			defer s.close()
			var tools []tool.Tool
			if len(args) == 0 {
				tools, err = s.Tools(s.ctx)
			} else {
				tools, err = s.Tools(s.ctx, args...)
			}
			s.progress.close()
			s.cache.save("tools", namesByServer(tools))
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
	cmd.AddCommand(newToolsShowCmd(g))
	return withAdhoc(&o, cmd, "  toolwire tools -- npx -y @modelcontextprotocol/server-everything\n  toolwire tools --url http://127.0.0.1:8080/mcp")
}

// namesByServer groups the names of remote tools by their server.
func namesByServer(tools []tool.Tool) map[string][]string {
	m := map[string][]string{}
	for _, t := range tools {
		if rt, ok := t.(interface{ Server() string }); ok {
			m[rt.Server()] = append(m[rt.Server()], t.Info().Name)
		}
	}
	return m
}

func requiredArgs(schema json.RawMessage) []string {
	var s struct {
		Required []string `json:"required"`
	}
	_ = json.Unmarshal(schema, &s)
	return s.Required
}

// oneLine folds a description onto one line of at most n bytes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		cut := n - 3
		for cut > 0 && s[cut]&0xC0 == 0x80 { // not inside a UTF-8 sequence
			cut--
		}
		s = s[:cut] + "..."
	}
	return s
}

func printTools(w io.Writer, tools []tool.Tool) {
	sort.Slice(tools, func(i, j int) bool { return tools[i].Info().Name < tools[j].Info().Name })
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOOL\tREQUIRED\tDESCRIPTION")
	for _, t := range tools {
		i := t.Info()
		req := strings.Join(requiredArgs(i.InputSchema), ", ")
		if req == "" {
			req = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", i.Name, req, oneLine(i.Description, 80))
	}
	tw.Flush()
}

func printToolsJSON(w io.Writer, tools []tool.Tool) error {
	infos := make([]tool.Info, len(tools))
	for i, t := range tools {
		infos[i] = t.Info()
	}
	sort.Slice(infos, func(i, j int) bool { return infos[i].Name < infos[j].Name })
	return writeJSON(w, infos)
}

// lookupError explains a tool or prompt that was not found.
func lookupError(err error, list string) error {
	var nf *host.NotFoundError
	if errors.As(err, &nf) {
		return fmt.Errorf("%w (toolwire %s lists the names)", err, list)
	}
	return err
}

func newToolsShowCmd(g *globalOptions) *cobra.Command {
	o := hostOptions{g: g}
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show SERVER__TOOL",
		Short: "Show one tool: its description and a table of its parameters",
		Long: `Show one tool of a configured server: its description and its parameters
with their types, defaults, and which are required. --json prints the
tool's definition as the server gives it, with its full input schema.`,
		Example: `  toolwire tools show files__read_text_file
  toolwire tools show files__read_text_file --json | jq .inputSchema`,
		Args:              withUsage(cobra.ExactArgs(1)),
		ValidArgsFunction: o.completeNames("tools"),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := o.open(cmd)
			if err != nil {
				return err
			}
			defer s.close()
			t, err := s.Lookup(s.ctx, args[0])
			s.progress.close()
			if err != nil {
				return lookupError(err, "tools")
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), t.Info())
			}
			return printToolDetail(cmd.OutOrStdout(), t.Info())
		},
	}
	o.flags(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the tool's definition (name, description, inputSchema, outputSchema, ...) as JSON")
	return cmd
}

// param is one parameter of a tool, for the table.
type param struct {
	name, typ, def, desc string
	required             bool
}

// maxParamDepth bounds how deep tools show goes into nested objects.
const maxParamDepth = 4

// schemaParams reads the parameters of an input schema: the top-level
// ones, each followed by its nested fields (of an object, "a.b"; of an
// array of objects, "a[].b") down to maxParamDepth levels.
func schemaParams(inputSchema json.RawMessage) ([]param, error) {
	props, err := schema.Properties(inputSchema)
	if err != nil {
		return nil, fmt.Errorf("the tool's input schema: %w", err)
	}
	var out []param
	addParams(&out, "", props, 1)
	return out, nil
}

// addParams appends the rows of props, required first then by name, each
// followed by its nested fields.
func addParams(out *[]param, prefix string, props []schema.Property, depth int) {
	sort.SliceStable(props, func(i, j int) bool {
		if props[i].Required != props[j].Required {
			return props[i].Required
		}
		return props[i].Name < props[j].Name
	})
	for _, p := range props {
		def := "-"
		if len(p.Default) > 0 {
			def = string(p.Default)
		}
		*out = append(*out, param{name: prefix + p.Name, typ: shapeType(p.Shape), def: def, desc: p.Description, required: p.Required})
		if depth >= maxParamDepth {
			continue
		}
		inner, sub := p.Schema, "."
		if p.MainType() == "array" && p.Items != nil {
			inner, sub = p.Items.Schema, "[]."
		}
		if nested, _ := schema.Properties(inner); len(nested) > 0 {
			addParams(out, prefix+p.Name+sub, nested, depth+1)
		}
	}
}

// shapeType names a parameter's type for the table: "string", "integer[]",
// an enum's values, the alternatives of anyOf, or "any".
func shapeType(p schema.Shape) string {
	typ := strings.Join(p.Type, " | ")
	if typ == "" && len(p.AnyOf) > 0 {
		var alts []string
		for _, a := range p.AnyOf {
			alts = append(alts, strings.Join(a.Type, " | "))
		}
		typ = strings.Join(alts, " | ")
	}
	if typ == "array" && p.Items != nil && len(p.Items.Type) > 0 {
		typ = strings.Join(p.Items.Type, " | ") + "[]"
	}
	if len(p.Enum) > 0 {
		var vals []string
		for _, raw := range p.Enum {
			var v any
			_ = json.Unmarshal(raw, &v)
			b, _ := json.Marshal(v)
			vals = append(vals, string(b))
		}
		typ = strings.Join(vals, " | ")
	}
	if typ == "" {
		typ = "any"
	}
	return typ
}

// hintsLine describes a tool's behaviour hints, with MCP's defaults for
// those the tool does not give.
func hintsLine(a *tool.Annotations) string {
	if a == nil {
		a = &tool.Annotations{}
	}
	hint := func(name string, v *bool, def bool) string {
		switch {
		case v == nil && def:
			return name + ": yes (default)"
		case v == nil:
			return name + ": no (default)"
		case *v:
			return name + ": yes"
		}
		return name + ": no"
	}
	if a.ReadOnlyHint != nil && *a.ReadOnlyHint {
		// Destructive and idempotent speak of changes: a read-only tool
		// makes none.
		return hint("read-only", a.ReadOnlyHint, false) + ", " + hint("open-world", a.OpenWorldHint, true)
	}
	return strings.Join([]string{
		hint("read-only", a.ReadOnlyHint, false),
		hint("destructive", a.DestructiveHint, true),
		hint("idempotent", a.IdempotentHint, false),
		hint("open-world", a.OpenWorldHint, true),
	}, ", ")
}

func printToolDetail(w io.Writer, i tool.Info) error {
	fmt.Fprintln(w, i.Name)
	if i.Title != "" {
		fmt.Fprintln(w, i.Title)
	}
	if d := strings.TrimSpace(i.Description); d != "" {
		fmt.Fprintf(w, "\n%s\n", d)
	}
	params, err := schemaParams(i.InputSchema)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\nHints: %s\n", hintsLine(i.Annotations))
	fmt.Fprintln(w)
	if len(params) == 0 {
		fmt.Fprintln(w, "No parameters.")
		return nil
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PARAMETER\tTYPE\tREQUIRED\tDEFAULT\tDESCRIPTION")
	for _, p := range params {
		req := "-"
		if p.required {
			req = "yes"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", p.name, p.typ, req, oneLine(p.def, 30), oneLine(p.desc, 70))
	}
	return tw.Flush()
}

func newCallCmd(g *globalOptions) *cobra.Command {
	o := hostOptions{g: g}
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "call SERVER__TOOL [JSON_ARGS | KEY=VALUE...]",
		Short: "Call one tool of a configured MCP server",
		Long: `Call a tool by its full name (see toolwire tools) with arguments as a JSON
object ("-" reads them from stdin) or as key=value pairs: a value is read
as the tool's schema types it (a number, true or false, JSON for an object
or an array, a string otherwise); key:=JSON takes it as JSON whatever the
type. Only the server that owns the tool is started.

The text the tool returns is printed as text; a result with structured
content and no text, as indented JSON; --json prints the whole result
(content, structuredContent, isError) as the server sent it. A tool error
prints its message to stderr and exits with status 1.

The servers come from the configuration file: see toolwire help config.`,
		Example: `  toolwire call files__read_text_file '{"path": "/tmp/notes.txt"}'
  toolwire call files__read_text_file path=/tmp/notes.txt head=5
  toolwire call calc__calculate expression=2+3
  echo '{"message": "hi"}' | toolwire call everything__echo -
  toolwire call files__list_directory path=/tmp --json | jq .structuredContent`,
		Args:              callArgs,
		ValidArgsFunction: o.completeNames("tools"),
		RunE: func(cmd *cobra.Command, args []string) error {
			raw := "{}"
			var pairs []string
			switch {
			case len(args) >= 2 && isKeyValue(args[1]):
				pairs = args[1:]
			case len(args) == 2:
				raw = args[1]
			}
			if raw == "-" {
				b, err := io.ReadAll(cmd.InOrStdin())
				if err != nil {
					return err
				}
				raw = string(b)
			}
			s, err := o.open(cmd)
			if err != nil {
				return err
			}
			defer s.close()
			// A task the call becomes is kept until the call returns:
			// toolwire tasks resumes it if toolwire is killed first.
			defer keepTasks(s, newTaskLog(), s.Host.Config.Path, args[0])()
			t, err := s.Lookup(s.ctx, args[0])
			if err != nil {
				return lookupError(err, "tools")
			}
			if pairs != nil {
				b, err := keyValueArgs(pairs, t.Info().InputSchema)
				if err != nil {
					return &usageError{cmd: cmd, err: err}
				}
				raw = string(b)
			}
			var reg tool.Registry
			if o.g.tel != nil {
				reg.SetTelemetry(*o.g.tel)
			}
			if err := reg.Add(t); err != nil {
				return err
			}
			done := s.progress.task("call "+args[0], "running")
			ctx := tool.WithClient(s.ctx, callClient{p: s.progress, label: "call " + args[0]})
			res, err := reg.Call(ctx, args[0], json.RawMessage(raw))
			done()
			s.progress.close()
			if err != nil {
				res = tool.ErrorResult(err)
			}
			if asJSON {
				return printResultJSON(cmd.OutOrStdout(), res)
			}
			return printResult(cmd.OutOrStdout(), cmd.ErrOrStderr(), res)
		},
	}
	o.flags(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the whole result (content, structuredContent, isError) as JSON")
	return withAdhoc(&o, cmd, `  toolwire call server-everything__echo '{"message": "hi"}' -- npx -y @modelcontextprotocol/server-everything`)
}

// printResult prints a tool result: its content, text as text and the
// rest summarized, or its structured content as JSON when it has no text;
// an error result goes to stderr.
func printResult(stdout, stderr io.Writer, res *tool.Result) error {
	if res.IsError {
		for _, c := range res.Content {
			printContent(stderr, c)
		}
		return &exitError{code: 1, msg: "the tool reported an error"}
	}
	hasText := slices.ContainsFunc(res.Content, func(c tool.Content) bool { return c.Type == tool.TypeText })
	for _, c := range res.Content {
		printContent(stdout, c)
	}
	if res.StructuredContent != nil && !hasText {
		return writeJSON(stdout, res.StructuredContent)
	}
	return nil
}

// printResultJSON prints a whole tool result as JSON on stdout; an error
// result exits with status 1.
func printResultJSON(stdout io.Writer, res *tool.Result) error {
	if err := writeJSON(stdout, res); err != nil {
		return err
	}
	if res.IsError {
		return &exitError{code: 1, msg: "the tool reported an error"}
	}
	return nil
}

// printContent prints a content block: text as text, the rest summarized.
func printContent(out io.Writer, c tool.Content) {
	switch c.Type {
	case tool.TypeText:
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
