package main

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/toolwire/toolwire/host"
	"github.com/toolwire/toolwire/mcp"
)

func newResourcesCmd(g *globalOptions) *cobra.Command {
	o := hostOptions{g: g}
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "resources [SERVER...]",
		Short: "List the resources of the configured MCP servers",
		Long: `Connect to the configured MCP servers (or only those named) and list the
resources they offer: server, URI, name, MIME type; then their resource
templates (URIs with {parameters} to fill in). "toolwire read URI" prints
one. With --json, the resources come first, each with its "uri", then the
templates, each with its "uriTemplate".

The servers come from the configuration file: see toolwire help config.`,
		Example: `  toolwire resources
  toolwire resources everything --json | jq -r '.[].uri // empty'`,
		Args:              cobra.ArbitraryArgs,
		ValidArgsFunction: o.completeServers,
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := o.open(cmd)
			if err != nil {
				return err
			}
			defer s.close()
			res, err := s.Resources(s.ctx, args...)
			var templates []host.ServerResourceTemplate
			if err == nil {
				// A server that failed to list resources would fail again.
				templates, err = s.ResourceTemplates(s.ctx, args...)
			}
			s.progress.close()
			if len(res) == 0 && len(templates) == 0 && err != nil {
				return err
			}
			sort.Slice(templates, func(i, j int) bool {
				if templates[i].Server != templates[j].Server {
					return templates[i].Server < templates[j].Server
				}
				return templates[i].URITemplate < templates[j].URITemplate
			})
			sort.Slice(res, func(i, j int) bool {
				if res[i].Server != res[j].Server {
					return res[i].Server < res[j].Server
				}
				return res[i].URI < res[j].URI
			})
			if asJSON {
				all := make([]any, 0, len(res)+len(templates))
				for _, r := range res {
					all = append(all, r)
				}
				for _, t := range templates {
					all = append(all, t)
				}
				return errors.Join(partial(cmd.ErrOrStderr(), err), writeJSON(cmd.OutOrStdout(), all))
			}
			printResources(cmd.OutOrStdout(), res, templates)
			return partial(cmd.ErrOrStderr(), err)
		},
	}
	o.flags(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the resources as JSON (server, uri, name, mimeType, ...)")
	return withAdhoc(&o, cmd, "  toolwire resources -- npx -y @modelcontextprotocol/server-everything")
}

// printResources prints the table of resources, then under a heading
// that of resource templates, when there are any.
func printResources(w io.Writer, res []host.ServerResource, templates []host.ServerResourceTemplate) {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVER\tURI\tNAME\tMIME TYPE")
	for _, r := range res {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Server, r.URI, oneLine(r.Name, 40), orDash(r.MimeType))
	}
	tw.Flush()
	if len(templates) == 0 {
		return
	}
	fmt.Fprintln(w, "\nResource templates (fill in the {parameters}, then toolwire read URI):")
	tw = tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVER\tURI TEMPLATE\tNAME\tMIME TYPE")
	for _, t := range templates {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", t.Server, t.URITemplate, oneLine(t.Name, 40), orDash(t.MimeType))
	}
	tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func newReadCmd(g *globalOptions) *cobra.Command {
	o := hostOptions{g: g}
	var server string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "read URI",
		Short: "Print a resource of a configured MCP server",
		Long: `Read a resource by its URI (see toolwire resources) and print it: text as
text, binary content summarized (--json for all of it, base64). The server
that lists the URI is asked, else each server that offers resources, or
the one --server names.

The servers come from the configuration file: see toolwire help config.`,
		Example: `  toolwire read file:///tmp/notes.txt
  toolwire read demo://resource/dynamic/text/1 --server everything`,
		Args: withUsage(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := o.open(cmd)
			if err != nil {
				return err
			}
			defer s.close()
			res, err := s.ReadResource(s.ctx, args[0], server)
			s.progress.close()
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), res)
			}
			return printContents(cmd.OutOrStdout(), res.Contents)
		},
	}
	o.flags(cmd)
	cmd.Flags().StringVar(&server, "server", "", "ask only this server")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON (contents with uri, mimeType, text or blob)")
	_ = cmd.RegisterFlagCompletionFunc("server", o.completeServers)
	return cmd
}

// printContents prints resource contents: text as it is, a blob as a
// summary line.
func printContents(w io.Writer, contents []mcp.ResourceContents) error {
	for _, c := range contents {
		if c.Blob != "" {
			n := base64.StdEncoding.DecodedLen(len(c.Blob))
			fmt.Fprintf(w, "[%s: %s, about %d bytes; --json prints it base64]\n", c.URI, orDash(c.MimeType), n)
			continue
		}
		if _, err := fmt.Fprintln(w, c.Text); err != nil {
			return err
		}
	}
	return nil
}

func newPromptsCmd(g *globalOptions) *cobra.Command {
	o := hostOptions{g: g}
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "prompts [SERVER...]",
		Short: "List the prompts of the configured MCP servers",
		Long: `Connect to the configured MCP servers (or only those named) and list their
prompts: name (as "server__prompt"), arguments (required ones marked *),
and description. "toolwire prompt NAME" renders one.

The servers come from the configuration file: see toolwire help config.`,
		Args:              cobra.ArbitraryArgs,
		ValidArgsFunction: o.completeServers,
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := o.open(cmd)
			if err != nil {
				return err
			}
			defer s.close()
			prompts, err := s.Prompts(s.ctx, args...)
			s.progress.close()
			byServer := map[string][]string{}
			for _, p := range prompts {
				byServer[p.Server] = append(byServer[p.Server], p.Name)
			}
			s.cache.save("prompts", byServer)
			if len(prompts) == 0 && err != nil {
				return err
			}
			sort.Slice(prompts, func(i, j int) bool { return prompts[i].Name < prompts[j].Name })
			if asJSON {
				if prompts == nil {
					prompts = []host.ServerPrompt{}
				}
				return errors.Join(partial(cmd.ErrOrStderr(), err), writeJSON(cmd.OutOrStdout(), prompts))
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 2, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "PROMPT\tARGUMENTS\tDESCRIPTION")
			for _, p := range prompts {
				var argNames []string
				for _, a := range p.Arguments {
					n := a.Name
					if a.Required {
						n += "*"
					}
					argNames = append(argNames, n)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\n", p.Name, orDash(strings.Join(argNames, ", ")), oneLine(p.Description, 70))
			}
			tw.Flush()
			return partial(cmd.ErrOrStderr(), err)
		},
	}
	o.flags(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the prompts as JSON (server, name, arguments, ...)")
	return withAdhoc(&o, cmd, "  toolwire prompts --url http://127.0.0.1:8080/mcp")
}

func newPromptCmd(g *globalOptions) *cobra.Command {
	o := hostOptions{g: g}
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "prompt SERVER__PROMPT [JSON_ARGS]",
		Short: "Render a prompt of a configured MCP server",
		Long: `Render a prompt by its full name (see toolwire prompts) with arguments as a
JSON object of strings, and print its messages, each after its role.

The servers come from the configuration file: see toolwire help config.`,
		Example: `  toolwire prompt everything__simple-prompt
  toolwire prompt everything__args-prompt '{"city": "Paris"}'`,
		Args:              nameAndJSON("prompt"),
		ValidArgsFunction: o.completeNames("prompts"),
		RunE: func(cmd *cobra.Command, args []string) error {
			var promptArgs map[string]string
			if len(args) == 2 {
				if err := json.Unmarshal([]byte(args[1]), &promptArgs); err != nil {
					return &usageError{cmd: cmd, err: fmt.Errorf("the arguments must be a JSON object of strings, e.g. '{\"city\": \"Paris\"}': %v", err)}
				}
			}
			s, err := o.open(cmd)
			if err != nil {
				return err
			}
			defer s.close()
			res, err := s.GetPrompt(s.ctx, args[0], promptArgs)
			s.progress.close()
			if err != nil {
				return lookupError(err, "prompts")
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), res)
			}
			w := cmd.OutOrStdout()
			if res.Description != "" {
				fmt.Fprintf(w, "# %s\n\n", res.Description)
			}
			for _, m := range res.Messages {
				fmt.Fprintf(w, "[%s]\n", m.Role)
				printContent(w, m.Content)
			}
			return nil
		},
	}
	o.flags(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON (description, messages)")
	return cmd
}
