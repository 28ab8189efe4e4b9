package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/toolwire/toolwire/host"
	"github.com/toolwire/toolwire/internal/allowdir"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/model"
	"github.com/toolwire/toolwire/schema"
)

// What the configured servers ask of the host while their tools run:
// roots (the working directory and each --allow-dir), input from the user
// (elicitation) and completions by the run's model (sampling). chat asks
// the user at the terminal (ask.go); run answers by its flags (runAsker).

// maxSamplingTokens bounds the answer to a server's sampling request,
// whatever maxTokens it asks for.
const maxSamplingTokens = 4096

// serverAsker answers a server's elicitation and sampling requests; the
// server's name is host.AskingServer(ctx).
type serverAsker interface {
	answerElicitation(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error)
	answerSampling(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error)
}

// answerServers sets the handlers of what servers ask on a host's client
// template: roots always; elicitation (forms and URLs) and sampling when
// someone answers them.
func answerServers(c *mcp.Client, roots []mcp.Root, a serverAsker) {
	c.Roots = func(context.Context) ([]mcp.Root, error) { return roots, nil }
	if a != nil {
		c.Elicitation, c.ElicitationURL, c.Sampling = a.answerElicitation, true, a.answerSampling
	}
}

// workDirs returns the working directory and each --allow-dir, absolute
// and with symlinks resolved, without repeats: the directories the data
// toolset may use (relative paths start at the first) and the servers'
// roots.
func workDirs(allowDirs []string) ([]string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return nil, fmt.Errorf("the working directory: %w", err)
	}
	dirs, err := allowdir.Open(append([]string{wd}, allowDirs...))
	if err != nil {
		return nil, fmt.Errorf("--allow-dir: %w", err)
	}
	var out []string
	for _, d := range dirs {
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out, nil
}

// rootsOf makes directories MCP roots: file:// URIs, named after the
// directory.
func rootsOf(dirs []string) []mcp.Root {
	roots := make([]mcp.Root, 0, len(dirs))
	for _, d := range dirs {
		u := url.URL{Scheme: "file", Path: filepath.ToSlash(d)}
		roots = append(roots, mcp.Root{URI: u.String(), Name: filepath.Base(d)})
	}
	return roots
}

// runAsker answers for toolwire run, which asks nobody: input only with
// --yes (a form's defaults), sampling only with --allow-sampling.
type runAsker struct {
	yes, sampling bool
	model         model.Model
	modelName     string
	stderr        io.Writer // nil when -q
}

func (a *runAsker) say(format string, args ...any) string {
	msg := fmt.Sprintf(format, args...)
	if a.stderr != nil {
		fmt.Fprintln(a.stderr, "toolwire:", msg)
	}
	return msg
}

func (a *runAsker) answerElicitation(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	asked := fmt.Sprintf("server %s asked for input (%s)", host.AskingServer(ctx), shorten(p.Message, 120))
	if !a.yes {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "%s", a.say("%s; run is not interactive: use chat, or --yes to accept with defaults", asked))
	}
	if p.Mode == "url" {
		a.say("%s at %s: declined, as run cannot open a page for you (use chat)", asked, p.URL)
		return &mcp.ElicitResult{Action: "decline"}, nil
	}
	content, missing, err := formDefaults(p.RequestedSchema)
	if err != nil {
		a.say("%s: declined: %v", asked, err)
		return &mcp.ElicitResult{Action: "decline"}, nil
	}
	if len(missing) > 0 {
		a.say("%s: declined, as --yes accepts a form only when every required field has a default (%s has none; use chat to answer)", asked, strings.Join(missing, ", "))
		return &mcp.ElicitResult{Action: "decline"}, nil
	}
	a.say("%s: accepted with the form's defaults (--yes)", asked)
	return &mcp.ElicitResult{Action: "accept", Content: content}, nil
}

func (a *runAsker) answerSampling(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	server := host.AskingServer(ctx)
	if !a.sampling {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "%s", a.say("server %s asked the model for a completion (sampling: %s); run answers only with --allow-sampling", server, samplingSummary(p, 120)))
	}
	a.say("server %s has the model complete %s (--allow-sampling)", server, samplingSummary(p, 120))
	return sample(ctx, a.model, a.modelName, p)
}

// formDefaults returns the content of a form with every field that has a
// default set to it, and the required fields that have none.
func formDefaults(requested json.RawMessage) (map[string]any, []string, error) {
	props, err := schema.Properties(requested)
	if err != nil {
		return nil, nil, err
	}
	content := map[string]any{}
	var missing []string
	for _, prop := range props {
		var v any
		if len(prop.Default) > 0 && json.Unmarshal(prop.Default, &v) == nil && v != nil {
			content[prop.Name] = v
		} else if prop.Required {
			missing = append(missing, prop.Name)
		}
	}
	return content, missing, nil
}

// samplingSummary describes a sampling request in one line: how many
// messages, and the last one's text.
func samplingSummary(p *mcp.CreateMessageParams, n int) string {
	last := ""
	if len(p.Messages) > 0 {
		blocks, _ := contentBlocks(p.Messages[len(p.Messages)-1].Content)
		for _, b := range blocks {
			last += b.Text
		}
	}
	plural := "s"
	if len(p.Messages) == 1 {
		plural = ""
	}
	return fmt.Sprintf("%d message%s, the last %q", len(p.Messages), plural, shorten(last, n))
}

// contentBlock is a block of a sampling message's content.
type contentBlock struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	Data     string `json:"data"`
	MimeType string `json:"mimeType"`
}

// contentBlocks reads a sampling message's content: one block, or a list.
func contentBlocks(raw json.RawMessage) ([]contentBlock, error) {
	var one contentBlock
	if err := json.Unmarshal(raw, &one); err == nil {
		return []contentBlock{one}, nil
	}
	var many []contentBlock
	if err := json.Unmarshal(raw, &many); err != nil {
		return nil, fmt.Errorf("a message's content is neither a content block nor a list of them: %w", err)
	}
	return many, nil
}

// samplingTokens is the bound of the answer to a sampling request: its
// maxTokens, at most maxSamplingTokens.
func samplingTokens(p *mcp.CreateMessageParams) int {
	if p.MaxTokens > 0 && p.MaxTokens < maxSamplingTokens {
		return p.MaxTokens
	}
	return maxSamplingTokens
}

// sample answers a server's sampling request with m, bounded: at most
// maxSamplingTokens, and no tools.
func sample(ctx context.Context, m model.Model, name string, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	if len(p.Tools) > 0 && string(p.Tools) != "null" {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "toolwire answers sampling requests without tools: send the request without \"tools\"")
	}
	req := &model.Request{System: p.SystemPrompt, Temperature: p.Temperature, MaxTokens: samplingTokens(p), ToolChoice: model.ToolChoiceNone}
	for i, sm := range p.Messages {
		msg := model.Message{Role: model.Role(sm.Role)}
		if msg.Role != model.RoleUser && msg.Role != model.RoleAssistant {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "message %d has role %q: use user or assistant", i+1, sm.Role)
		}
		blocks, err := contentBlocks(sm.Content)
		if err != nil {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "message %d: %v", i+1, err)
		}
		for _, b := range blocks {
			switch b.Type {
			case "text":
				msg.Text += b.Text
			case "image":
				msg.Images = append(msg.Images, model.Image{MimeType: b.MimeType, Data: b.Data})
			default:
				return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "message %d has %q content, which toolwire does not send to a model: send text or images", i+1, b.Type)
			}
		}
		req.Messages = append(req.Messages, msg)
	}
	// Streamed, as the agent's requests are: a long answer keeps the
	// connection busy rather than idle.
	res, err := m.Generate(ctx, req, func(model.Delta) {})
	if err != nil {
		return nil, fmt.Errorf("the model %s: %w", name, err)
	}
	text, _ := json.Marshal(map[string]string{"type": "text", "text": res.Message.Text})
	out := &mcp.CreateMessageResult{Role: "assistant", Content: text, Model: name}
	switch res.StopReason {
	case model.StopEnd:
		out.StopReason = "endTurn"
	case model.StopLength:
		out.StopReason = "maxTokens"
	default:
		out.StopReason = string(res.StopReason)
	}
	return out, nil
}
