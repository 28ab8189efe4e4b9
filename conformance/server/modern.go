package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/tool"
)

// modernTools are the fixtures of the 2026-07-28 scenarios: multi round-trip
// requests, capability checks, per-request logging and list-change triggers.
func modernTools(srv *mcp.Server) []tool.Tool {
	return []tool.Tool{
		handler("test_missing_capability", "Needs the client's sampling capability", "",
			func(ctx context.Context, _ json.RawMessage) (*tool.Result, error) {
				res, err := mcp.CreateMessage(ctx, samplingQuestion("Say hello"))
				if err != nil {
					return nil, err
				}
				return tool.Text("sampled: " + textOf(res.Content)), nil
			}),
		handler("test_streaming_elicitation", "Asks the user a question through an input_required result", "",
			func(ctx context.Context, _ json.RawMessage) (*tool.Result, error) {
				_ = tool.Progress(ctx, 0, 1, "asking the user")
				res, err := mcp.Elicit(mcp.WithInputKey(ctx, "user_name"), nameQuestion())
				if err != nil {
					return nil, err
				}
				return tool.Text(fmt.Sprintf("Hello, %v!", res.Content["name"])), nil
			}),
		handler("test_logging_tool", "Logs three messages at the level the request asks for", "",
			func(ctx context.Context, _ json.RawMessage) (*tool.Result, error) {
				for _, l := range []tool.LogLevel{tool.LevelDebug, tool.LevelInfo, tool.LevelWarning} {
					if err := tool.Log(ctx, l, "conformance", fmt.Sprintf("a %s message", l)); err != nil {
						return nil, err
					}
				}
				return tool.Text("logged"), nil
			}),
		handler("test_trigger_tool_change", "Tells subscribed clients that the tool list changed", "",
			func(context.Context, json.RawMessage) (*tool.Result, error) {
				srv.NotifyListChanged(mcp.NotificationToolsListChanged)
				return tool.Text("tools/list_changed sent"), nil
			}),
		handler("test_trigger_prompt_change", "Tells subscribed clients that the prompt list changed", "",
			func(context.Context, json.RawMessage) (*tool.Result, error) {
				srv.NotifyListChanged(mcp.NotificationPromptsListChanged)
				return tool.Text("prompts/list_changed sent"), nil
			}),
		handler("test_input_required_result_elicitation", "Asks for the user's name, then greets them", "",
			func(ctx context.Context, _ json.RawMessage) (*tool.Result, error) {
				res, err := mcp.Elicit(mcp.WithInputKey(ctx, "user_name"), nameQuestion())
				if err != nil {
					return nil, err
				}
				name, ok := res.Content["name"].(string)
				if res.Action != "accept" || !ok {
					return nil, errors.New("the user did not give a name")
				}
				return tool.Text("Hello, " + name + "!"), nil
			}),
		handler("test_input_required_result_sampling", "Asks the client's model a question", "",
			func(ctx context.Context, _ json.RawMessage) (*tool.Result, error) {
				res, err := mcp.CreateMessage(mcp.WithInputKey(ctx, "capital_question"), samplingQuestion("What is the capital of France?"))
				if err != nil {
					return nil, err
				}
				return tool.Text("The model said: " + textOf(res.Content)), nil
			}),
		handler("test_input_required_result_list_roots", "Lists the client's roots", "",
			func(ctx context.Context, _ json.RawMessage) (*tool.Result, error) {
				res, err := mcp.ListRoots(mcp.WithInputKey(ctx, "client_roots"))
				if err != nil {
					return nil, err
				}
				b, _ := json.Marshal(res.Roots)
				return tool.Text("Roots: " + string(b)), nil
			}),
		handler("test_input_required_result_request_state", "Asks for confirmation, carrying state between rounds", "",
			func(ctx context.Context, _ json.RawMessage) (*tool.Result, error) {
				if err := mcp.SetState(ctx, map[string]string{"step": "confirm"}); err != nil {
					return nil, err
				}
				res, err := mcp.Elicit(mcp.WithInputKey(ctx, "confirm"), &mcp.ElicitParams{Mode: "form", Message: "Please confirm",
					RequestedSchema: json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`)})
				if err != nil {
					return nil, err
				}
				return tool.Text(fmt.Sprintf("state-ok: requestState validated; confirmed=%v", res.Content["ok"])), nil
			}),
		handler("test_input_required_result_multiple_inputs", "Asks for a name, a greeting and the roots at once", "",
			func(ctx context.Context, _ json.RawMessage) (*tool.Result, error) {
				name, err1 := mcp.Elicit(mcp.WithInputKey(ctx, "user_name"), nameQuestion())
				greeting, err2 := mcp.CreateMessage(mcp.WithInputKey(ctx, "greeting"), samplingQuestion("Generate a greeting"))
				roots, err3 := mcp.ListRoots(mcp.WithInputKey(ctx, "client_roots"))
				if err := errors.Join(err1, err2, err3); err != nil {
					return nil, err
				}
				return tool.Text(fmt.Sprintf("%s %v (%d roots)", textOf(greeting.Content), name.Content["name"], len(roots.Roots))), nil
			}),
		handler("test_input_required_result_multi_round", "Asks for a name, then a colour, in two rounds", "",
			func(ctx context.Context, _ json.RawMessage) (*tool.Result, error) {
				name, err := mcp.Elicit(mcp.WithInputKey(ctx, "step1"), nameQuestion())
				if err != nil {
					return nil, err
				}
				color, err := mcp.Elicit(mcp.WithInputKey(ctx, "step2"), &mcp.ElicitParams{Mode: "form", Message: "What is your favourite colour?",
					RequestedSchema: json.RawMessage(`{"type":"object","properties":{"color":{"type":"string"}},"required":["color"]}`)})
				if err != nil {
					return nil, err
				}
				return tool.Text(fmt.Sprintf("%v likes %v", name.Content["name"], color.Content["color"])), nil
			}),
		handler("test_input_required_result_tampered_state", "Carries integrity-protected state between rounds", "",
			func(ctx context.Context, _ json.RawMessage) (*tool.Result, error) {
				res, err := mcp.Elicit(mcp.WithInputKey(ctx, "confirm"), &mcp.ElicitParams{Mode: "form", Message: "Please confirm",
					RequestedSchema: json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`)})
				if err != nil {
					return nil, err
				}
				return tool.Text(fmt.Sprintf("confirmed=%v", res.Content["ok"])), nil
			}),
		handler("test_input_required_result_capabilities", "Asks only what the client declared it can answer", "",
			func(ctx context.Context, _ json.RawMessage) (*tool.Result, error) {
				info, _ := mcp.Request(ctx)
				if info.ClientCapabilities != nil && info.ClientCapabilities.Elicitation != nil {
					res, err := mcp.Elicit(mcp.WithInputKey(ctx, "user_name"), nameQuestion())
					if err != nil {
						return nil, err
					}
					return tool.Text(fmt.Sprintf("Hello, %v!", res.Content["name"])), nil
				}
				res, err := mcp.CreateMessage(mcp.WithInputKey(ctx, "capital_question"), samplingQuestion("What is the capital of France?"))
				if err != nil {
					return nil, err
				}
				return tool.Text("The model said: " + textOf(res.Content)), nil
			}),
	}
}

func nameQuestion() *mcp.ElicitParams {
	return &mcp.ElicitParams{Mode: "form", Message: "What is your name?",
		RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)}
}

func samplingQuestion(text string) *mcp.CreateMessageParams {
	content, _ := json.Marshal(tool.TextContent(text))
	return &mcp.CreateMessageParams{Messages: []mcp.SamplingMessage{{Role: "user", Content: content}}, MaxTokens: 100}
}

// textOf returns the text of a sampling result's content block.
func textOf(content json.RawMessage) string {
	var c tool.Content
	_ = json.Unmarshal(content, &c)
	return c.Text
}

// addModernPrompts adds the prompt of the non-tool multi round-trip scenario.
func addModernPrompts(srv *mcp.Server) {
	srv.AddPrompt(mcp.Prompt{Name: "test_input_required_result_prompt", Description: "A prompt that asks the user for context first"},
		func(ctx context.Context, _ map[string]string) (*mcp.GetPromptResult, error) {
			res, err := mcp.Elicit(mcp.WithInputKey(ctx, "user_context"), &mcp.ElicitParams{Mode: "form", Message: "What context should the prompt use?",
				RequestedSchema: json.RawMessage(`{"type":"object","properties":{"context":{"type":"string"}},"required":["context"]}`)})
			if err != nil {
				return nil, err
			}
			return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: "user",
				Content: tool.TextContent(fmt.Sprintf("Use this context: %v", res.Content["context"]))}}}, nil
		})
}
