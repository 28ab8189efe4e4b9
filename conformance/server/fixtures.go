package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/tool"
)

// A 1x1 red PNG and a minimal WAV, as the suite expects them.
const (
	testImage = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
	testAudio = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="
)

// fixed returns a tool that takes no arguments and always gives res.
func fixed(name, description string, res *tool.Result) tool.Tool {
	return tool.NewFunc(
		tool.Info{Name: name, Description: description},
		func(context.Context, json.RawMessage) (*tool.Result, error) { return res, nil })

}

// handler returns a tool with a schema and a function.
func handler(name, description, schema string, fn func(ctx context.Context, args json.RawMessage) (*tool.Result, error)) tool.Tool {
	var s json.RawMessage
	if schema != "" {
		s = json.RawMessage(schema)
	}
	return tool.NewFunc(tool.Info{Name: name, Description: description, InputSchema: s}, fn)
}

func newServer(logger *slog.Logger, tasks mcp.TaskStore, stateKey []byte) (*mcp.Server, error) {
	srv := &mcp.Server{
		Info:     mcp.Implementation{Name: "toolwire-conformance-server", Version: "0.1.0"},
		Logger:   logger,
		Tasks:    mcp.TaskOptions{Store: tasks, After: 100 * time.Millisecond, PollInterval: 200 * time.Millisecond},
		StateKey: stateKey,
	}
	if err := srv.AddTools(taskTools()...); err != nil {
		return nil, err
	}
	if err := srv.AddTools(tools()...); err != nil {
		return nil, err
	}
	if err := srv.AddTools(modernTools(srv)...); err != nil {
		return nil, err
	}
	addResources(srv)
	addPrompts(srv)
	addModernPrompts(srv)
	srv.Completion = func(ctx context.Context, p *mcp.CompleteParams) (*mcp.Completion, error) {
		return &mcp.Completion{Values: []string{}}, nil
	}
	return srv, nil
}

func tools() []tool.Tool {
	return []tool.Tool{
		fixed("test_simple_text", "Tests simple text content response",
			tool.Text("This is a simple text response for testing.")),
		fixed("test_image_content", "Tests image content response",
			&tool.Result{Content: []tool.Content{tool.ImageContent(testImage, "image/png")}}),
		fixed("test_audio_content", "Tests audio content response",
			&tool.Result{Content: []tool.Content{tool.AudioContent(testAudio, "audio/wav")}}),
		fixed("test_embedded_resource", "Tests embedded resource content response",
			&tool.Result{Content: []tool.Content{tool.EmbeddedResource(tool.ResourceContents{
				URI: "test://embedded-resource", MimeType: "text/plain", Text: "This is an embedded resource content."})}}),
		fixed("test_multiple_content_types", "Tests response with multiple content types (text, image, resource)",
			&tool.Result{Content: []tool.Content{
				tool.TextContent("Multiple content types test:"),
				tool.ImageContent(testImage, "image/png"),
				tool.EmbeddedResource(tool.ResourceContents{URI: "test://mixed-content-resource", MimeType: "application/json", Text: `{"test":"data","value":123}`}),
			}}),
		handler("test_tool_with_logging", "Tests tool that emits log messages during execution", "",
			func(ctx context.Context, _ json.RawMessage) (*tool.Result, error) {
				for i, msg := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
					if i > 0 {
						sleep(ctx, 50*time.Millisecond)
					}
					if err := tool.Log(ctx, tool.LevelInfo, "", msg); err != nil {
						return nil, err
					}
				}
				return tool.Text("Tool with logging executed successfully"), nil
			}),
		handler("test_tool_with_progress", "Tests tool that reports progress notifications", "",
			func(ctx context.Context, _ json.RawMessage) (*tool.Result, error) {
				for i, p := range []float64{0, 50, 100} {
					if i > 0 {
						sleep(ctx, 50*time.Millisecond)
					}
					if err := tool.Progress(ctx, p, 100, fmt.Sprintf("Completed step %g of %d", p, 100)); err != nil {
						return nil, err
					}
				}
				return tool.Text("Progress completed"), nil
			}),
		handler("test_error_handling", "Tests error response handling", "",
			func(context.Context, json.RawMessage) (*tool.Result, error) {
				//lint:ignore ST1005 the reference server's text, which clients show
				return nil, fmt.Errorf("This tool intentionally returns an error for testing")
			}),
		handler("test_reconnection", "Closes its SSE stream mid-call; the result arrives when the client reconnects (SEP-1699)", "",
			func(ctx context.Context, _ json.RawMessage) (*tool.Result, error) {
				mcp.CloseSSEStream(ctx)
				sleep(ctx, 100*time.Millisecond)
				return tool.Text("Reconnection test completed successfully. If you received this, the client properly reconnected after stream closure."), nil
			}),
		handler("test_sampling", "Tests server-initiated sampling (LLM completion request)",
			`{"type":"object","properties":{"prompt":{"type":"string","description":"The prompt to send to the LLM"}},"required":["prompt"]}`,
			func(ctx context.Context, args json.RawMessage) (*tool.Result, error) {
				var in struct {
					Prompt string `json:"prompt"`
				}
				if err := json.Unmarshal(args, &in); err != nil {
					return nil, err
				}
				content, _ := json.Marshal(tool.TextContent(in.Prompt))
				res, err := mcp.CreateMessage(ctx, &mcp.CreateMessageParams{
					Messages:  []mcp.SamplingMessage{{Role: "user", Content: content}},
					MaxTokens: 100,
				})
				if err != nil {
					return nil, err
				}
				var c tool.Content
				_ = json.Unmarshal(res.Content, &c)
				return tool.Text("LLM response: " + c.Text), nil
			}),
		handler("test_elicitation", "Tests server-initiated elicitation (user input request)",
			`{"type":"object","properties":{"message":{"type":"string","description":"The message to show the user"}},"required":["message"]}`,
			func(ctx context.Context, args json.RawMessage) (*tool.Result, error) {
				var in struct {
					Message string `json:"message"`
				}
				if err := json.Unmarshal(args, &in); err != nil {
					return nil, err
				}
				res, err := mcp.Elicit(ctx, &mcp.ElicitParams{
					Mode:            "form",
					Message:         in.Message,
					RequestedSchema: json.RawMessage(`{"type":"object","properties":{"response":{"type":"string","description":"User's response"}},"required":["response"]}`),
				})
				if err != nil {
					return nil, err
				}
				content, _ := json.Marshal(res.Content)
				if res.Content == nil {
					content = []byte("{}")
				}
				return tool.Text(fmt.Sprintf("User response: action=%s, content=%s", res.Action, content)), nil
			}),
		handler("test_elicitation_sep1034_defaults", "Tests elicitation with default values per SEP-1034", "",
			elicitWith("Please review and update the form fields with defaults", `{"type":"object","properties":{
				"name":{"type":"string","description":"User name","default":"John Doe"},
				"age":{"type":"integer","description":"User age","default":30},
				"score":{"type":"number","description":"User score","default":95.5},
				"status":{"type":"string","description":"User status","enum":["active","inactive","pending"],"default":"active"},
				"verified":{"type":"boolean","description":"Verification status","default":true}},"required":[]}`)),
		handler("test_elicitation_sep1330_enums", "Tests elicitation with enum schema improvements per SEP-1330", "",
			elicitWith("Please select options from the enum fields", `{"type":"object","properties":{
				"untitledSingle":{"type":"string","description":"Select one option","enum":["option1","option2","option3"]},
				"titledSingle":{"type":"string","description":"Select one option with titles","oneOf":[{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"},{"const":"value3","title":"Third Option"}]},
				"legacyEnum":{"type":"string","description":"Select one option (legacy)","enum":["opt1","opt2","opt3"],"enumNames":["Option One","Option Two","Option Three"]},
				"untitledMulti":{"type":"array","description":"Select multiple options","minItems":1,"maxItems":3,"items":{"type":"string","enum":["option1","option2","option3"]}},
				"titledMulti":{"type":"array","description":"Select multiple options with titles","minItems":1,"maxItems":3,"items":{"anyOf":[{"const":"value1","title":"First Choice"},{"const":"value2","title":"Second Choice"},{"const":"value3","title":"Third Choice"}]}}},"required":[]}`)),
		handler("json_schema_2020_12_tool", "Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)", jsonSchema202012,
			func(_ context.Context, args json.RawMessage) (*tool.Result, error) {
				return tool.Text("JSON Schema 2020-12 tool called with: " + string(args)), nil
			}),
		handler("test_custom_headers", "Echoes a region that clients mirror into the Mcp-Param-Region header",
			`{"type":"object","properties":{"region":{"type":"string","description":"The region to run in","x-mcp-header":"Region"}},"required":["region"]}`,
			func(_ context.Context, args json.RawMessage) (*tool.Result, error) {
				var in struct {
					Region string `json:"region"`
				}
				if err := json.Unmarshal(args, &in); err != nil {
					return nil, err
				}
				return tool.Text("region: " + in.Region), nil
			}),
	}
}

// elicitWith returns a tool function that elicits a form and reports the
// answer.
func elicitWith(message, schema string) func(ctx context.Context, _ json.RawMessage) (*tool.Result, error) {
	return func(ctx context.Context, _ json.RawMessage) (*tool.Result, error) {
		res, err := mcp.Elicit(ctx, &mcp.ElicitParams{Mode: "form", Message: message, RequestedSchema: json.RawMessage(schema)})
		if err != nil {
			return nil, err
		}
		content, _ := json.Marshal(res.Content)
		if res.Content == nil {
			content = []byte("{}")
		}
		return tool.Text(fmt.Sprintf("Elicitation completed: action=%s, content=%s", res.Action, content)), nil
	}
}

// jsonSchema202012 is served verbatim: clients must keep every keyword.
const jsonSchema202012 = `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",` +
	`"$defs":{"address":{"$anchor":"addressDef","type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}}},` +
	`"properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"},"contactMethod":{"type":"string","enum":["phone","email"]},"phone":{"type":"string"},"email":{"type":"string"}},` +
	`"allOf":[{"anyOf":[{"required":["phone"]},{"required":["email"]}]}],` +
	`"if":{"properties":{"contactMethod":{"const":"phone"}},"required":["contactMethod"]},"then":{"required":["phone"]},"else":{"required":["email"]},` +
	`"additionalProperties":false}`

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

func addResources(srv *mcp.Server) {
	text := func(uri, mime, body string) mcp.ResourceHandler {
		return func(context.Context, string) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{{URI: uri, MimeType: mime, Text: body}}, nil
		}
	}
	srv.AddResource(mcp.Resource{URI: "test://static-text", Name: "static-text", Title: "Static Text Resource",
		Description: "A static text resource for testing", MimeType: "text/plain"},
		text("test://static-text", "text/plain", "This is the content of the static text resource."))
	srv.AddResource(mcp.Resource{URI: "test://static-binary", Name: "static-binary", Title: "Static Binary Resource",
		Description: "A static binary resource (image) for testing", MimeType: "image/png"},
		func(context.Context, string) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{{URI: "test://static-binary", MimeType: "image/png", Blob: testImage}}, nil
		})
	srv.AddResource(mcp.Resource{URI: "test://watched-resource", Name: "watched-resource", Title: "Watched Resource",
		Description: "A resource that auto-updates every 3 seconds", MimeType: "text/plain"},
		text("test://watched-resource", "text/plain", "Watched resource content"))
	const tmpl = "test://template/{id}/data"
	_ = srv.AddResourceTemplate(mcp.ResourceTemplate{URITemplate: tmpl, Name: "template", Title: "Resource Template",
		Description: "A resource template with parameter substitution", MimeType: "application/json"},
		func(_ context.Context, uri string) ([]mcp.ResourceContents, error) {
			id := mcp.TemplateVars(tmpl, uri)["id"]
			body, _ := json.Marshal(map[string]any{"id": id, "templateTest": true, "data": "Data for ID: " + id})
			return []mcp.ResourceContents{{URI: uri, MimeType: "application/json", Text: string(body)}}, nil
		})
}

func addPrompts(srv *mcp.Server) {
	msg := func(c tool.Content) mcp.PromptMessage { return mcp.PromptMessage{Role: "user", Content: c} }
	srv.AddPrompt(mcp.Prompt{Name: "test_simple_prompt", Title: "Simple Test Prompt", Description: "A simple prompt without arguments"},
		func(context.Context, map[string]string) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{msg(tool.TextContent("This is a simple prompt for testing."))}}, nil
		})
	srv.AddPrompt(mcp.Prompt{Name: "test_prompt_with_arguments", Title: "Prompt With Arguments", Description: "A prompt with required arguments",
		Arguments: []mcp.PromptArgument{{Name: "arg1", Description: "First test argument", Required: true}, {Name: "arg2", Description: "Second test argument", Required: true}}},
		func(_ context.Context, args map[string]string) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{msg(tool.TextContent(
				fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", args["arg1"], args["arg2"])))}}, nil
		})
	srv.AddPrompt(mcp.Prompt{Name: "test_prompt_with_embedded_resource", Title: "Prompt With Embedded Resource", Description: "A prompt that includes an embedded resource",
		Arguments: []mcp.PromptArgument{{Name: "resourceUri", Description: "URI of the resource to embed", Required: true}}},
		func(_ context.Context, args map[string]string) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{
				msg(tool.EmbeddedResource(tool.ResourceContents{URI: args["resourceUri"], MimeType: "text/plain", Text: "Embedded resource content for testing."})),
				msg(tool.TextContent("Please process the embedded resource above.")),
			}}, nil
		})
	srv.AddPrompt(mcp.Prompt{Name: "test_prompt_with_image", Title: "Prompt With Image", Description: "A prompt that includes image content"},
		func(context.Context, map[string]string) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{
				msg(tool.ImageContent(testImage, "image/png")),
				msg(tool.TextContent("Please analyze the image above.")),
			}}, nil
		})
}
