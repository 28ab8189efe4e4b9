package mcp

import (
	"testing"

	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/tool"
)

// TestAppendCallToolResult holds the direct encoder of tools/call results
// to what encoding/json writes for the same value.
func TestAppendCallToolResult(t *testing.T) {
	prio := 0.5
	tests := map[string]*CallToolResult{
		"empty":             {},
		"no content":        {Content: []tool.Content{}},
		"text":              {Content: []tool.Content{tool.TextContent("hello")}},
		"escapes":           {Content: []tool.Content{tool.TextContent("a\"b\\c\n\t\x01 <tag> & \u2028 \xff é 世界")}},
		"error":             {Content: []tool.Content{tool.TextContent("bad")}, IsError: true},
		"image and text":    {Content: []tool.Content{tool.ImageContent("aGk=", "image/png"), tool.TextContent("x")}},
		"annotated text":    {Content: []tool.Content{{Type: tool.TypeText, Text: "x", Annotations: &tool.ContentAnnotations{Priority: &prio}}}},
		"text with _meta":   {Content: []tool.Content{{Type: tool.TypeText, Text: "x", Meta: map[string]any{"k": 1.0}}}},
		"structured":        {Content: []tool.Content{tool.TextContent("{}")}, StructuredContent: map[string]any{"b": []any{1.0, "x"}, "a": nil}},
		"structured struct": {StructuredContent: struct{ N int }{3}},
		"modern":            {ResultBase: ResultBase{ResultType: ResultComplete, Meta: map[string]any{MetaServerInfo: Implementation{Name: "s", Version: "1"}}}, Content: []tool.Content{tool.TextContent("x")}},
	}
	for name, r := range tests {
		t.Run(name, func(t *testing.T) {
			want, err := jsonrpc.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			got, err := appendCallToolResult(nil, r)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("appendCallToolResult:\n got %s\nwant %s", got, want)
			}
		})
	}
	bad := &CallToolResult{Content: []tool.Content{{Type: "video"}}}
	if _, err := appendCallToolResult(nil, bad); err == nil {
		t.Error("a block of an unknown type encoded without error")
	}
}
