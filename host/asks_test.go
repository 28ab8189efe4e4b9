package host

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/tool"
)

// askingTool asks its client for roots, a form and a completion, and
// returns what it got.
func askingTool() tool.Tool {
	return tool.NewFunc(tool.Info{Name: "ask"}, func(ctx context.Context, _ json.RawMessage) (*tool.Result, error) {
		roots, err := mcp.ListRoots(ctx)
		if err != nil {
			return nil, err
		}
		form, err := mcp.Elicit(ctx, &mcp.ElicitParams{Mode: "form", Message: "name?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"string"}}}`)})
		if err != nil {
			return nil, err
		}
		msg, err := mcp.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 10, Messages: []mcp.SamplingMessage{{Role: "user", Content: json.RawMessage(`{"type":"text","text":"hi"}`)}}})
		if err != nil {
			return nil, err
		}
		return tool.Text(roots.Roots[0].URI + " " + form.Content["n"].(string) + " " + string(msg.Content)), nil
	})
}

// TestAskingServer: the handlers of Host.Client learn which server asks.
func TestAskingServer(t *testing.T) {
	srv := &mcp.Server{Info: mcp.Implementation{Name: "asker", Version: "1"}}
	if err := srv.AddTools(askingTool()); err != nil {
		t.Fatal(err)
	}
	h := memHost(t, map[string]*mcp.Server{"one": srv}, map[string]*ServerConfig{"one": {}})
	var asked []string
	h.Client.Roots = func(ctx context.Context) ([]mcp.Root, error) {
		asked = append(asked, "roots:"+AskingServer(ctx))
		return []mcp.Root{{URI: "file:///work"}}, nil
	}
	h.Client.Elicitation = func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		asked = append(asked, "elicit:"+AskingServer(ctx))
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"n": "ann"}}, nil
	}
	h.Client.Sampling = func(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
		asked = append(asked, "sampling:"+AskingServer(ctx))
		return &mcp.CreateMessageResult{Role: "assistant", Content: json.RawMessage(`{"type":"text","text":"yo"}`), Model: "m"}, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tools, err := h.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	res, err := find(t, tools, "one__ask").Call(ctx, json.RawMessage(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := res.ForModel().Text; !strings.HasPrefix(got, "file:///work ann ") || !strings.Contains(got, "yo") {
		t.Errorf("the tool got %q", got)
	}
	if got := strings.Join(asked, " "); got != "roots:one elicit:one sampling:one" {
		t.Errorf("the handlers were told %q", got)
	}
	if AskingServer(ctx) != "" {
		t.Error("a context the host made no handler's names a server")
	}
}
