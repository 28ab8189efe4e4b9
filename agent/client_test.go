package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/toolwire/toolwire/agent"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/model"
	"github.com/toolwire/toolwire/tool"
)

// greeter reports progress, logs, and asks the user's name: what a tool
// may ask of its caller, through package tool only.
func greeter() tool.Tool {
	return tool.NewFunc(tool.Info{Name: "greet"}, func(ctx context.Context, _ json.RawMessage) (*tool.Result, error) {
		if err := tool.Progress(ctx, 1, 2, "asking"); err != nil {
			return nil, err
		}
		if err := tool.Log(ctx, tool.LevelInfo, "greet", "about to ask"); err != nil {
			return nil, err
		}
		res, err := tool.Elicit(ctx, &tool.Elicitation{Message: "What is your name?",
			Schema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)})
		if err != nil {
			return nil, err
		}
		return tool.Text(fmt.Sprintf("hello %v (%s)", res.Content["name"], res.Action)), nil
	})
}

// TestClientInBothPlaces: the same tool's progress, log message and
// question reach an in-process agent's callbacks and an MCP client alike.
func TestClientInBothPlaces(t *testing.T) {
	want := []string{"progress 1/2 asking", "log info greet about to ask", "elicit What is your name?", "hello Ada (accept)"}
	for _, tt := range []struct {
		name string
		run  func(t *testing.T, seen func(string)) string
	}{
		{"agent", func(t *testing.T, seen func(string)) string {
			var reg tool.Registry
			if err := reg.Add(greeter()); err != nil {
				t.Fatal(err)
			}
			a := &agent.Agent{Model: &script{answers: []model.Message{calls("greet", `{}`), answer("done")}}, Tools: &reg,
				OnEvent: func(e agent.Event) {
					switch e.Type {
					case agent.EventProgress:
						seen(fmt.Sprintf("progress %g/%g %s", e.Progress, e.Total, e.Text))
					case agent.EventLog:
						seen(fmt.Sprintf("log %s %s %v", e.Level, e.Logger, e.Data))
					}
				},
				Elicit: func(_ context.Context, c model.ToolCall, e *tool.Elicitation) (*tool.ElicitResult, error) {
					seen("elicit " + e.Message)
					return &tool.ElicitResult{Action: tool.ActionAccept, Content: map[string]any{"name": "Ada"}}, nil
				}}
			res, err := a.Run(context.Background(), []model.Message{{Role: model.RoleUser, Text: "go"}})
			if err != nil {
				t.Fatal(err)
			}
			return res.Messages[2].ToolResults[0].Text
		}},
		{"MCP client", func(t *testing.T, seen func(string)) string {
			srv := &mcp.Server{Info: mcp.Implementation{Name: "s", Version: "1"}}
			if err := srv.AddTools(greeter()); err != nil {
				t.Fatal(err)
			}
			ts := httptest.NewServer(&mcp.HTTPHandler{Server: srv})
			t.Cleanup(ts.Close)
			c := &mcp.Client{Info: mcp.Implementation{Name: "c", Version: "1"}, ProtocolVersion: mcp.Version20251125, LogLevel: mcp.LevelDebug,
				Notify: func(method string, params json.RawMessage) {
					switch method {
					case mcp.NotificationProgress:
						var p mcp.ProgressParams
						_ = json.Unmarshal(params, &p)
						seen(fmt.Sprintf("progress %g/%g %s", p.Progress, *p.Total, p.Message))
					case mcp.NotificationMessage:
						var p mcp.LoggingMessageParams
						_ = json.Unmarshal(params, &p)
						seen(fmt.Sprintf("log %s %s %v", p.Level, p.Logger, p.Data))
					}
				},
				Elicitation: func(_ context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
					seen("elicit " + p.Message)
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
				}}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			s, err := c.Connect(ctx, &mcp.HTTPTransport{URL: ts.URL})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			var res mcp.CallToolResult
			p := &mcp.CallToolParams{Name: "greet", Params: mcp.Params{Meta: &mcp.RequestMeta{ProgressToken: json.RawMessage(`"p"`)}}}
			if err := s.Call(ctx, mcp.MethodToolsCall, p, &res); err != nil {
				t.Fatal(err)
			}
			return res.Content[0].Text
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			var got []string
			text := tt.run(t, func(s string) { mu.Lock(); got = append(got, s); mu.Unlock() })
			mu.Lock()
			defer mu.Unlock()
			if got = append(got, text); !slices.Equal(got, want) {
				t.Errorf("saw %q, want %q", got, want)
			}
		})
	}
}
