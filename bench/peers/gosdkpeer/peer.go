// Package gosdkpeer builds the benchmark server (tools echo and add) with
// github.com/modelcontextprotocol/go-sdk, the idiomatic way: typed tool
// handlers registered with mcp.AddTool, input schemas inferred from the
// argument structs.
package gosdkpeer

import (
	"context"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// EchoInput is the argument of the echo tool.
type EchoInput struct {
	Text string `json:"text" jsonschema:"the text to echo back"`
}

// AddInput is the argument of the add tool.
type AddInput struct {
	A float64 `json:"a" jsonschema:"first addend"`
	B float64 `json:"b" jsonschema:"second addend"`
}

func echo(_ context.Context, _ *mcp.CallToolRequest, in EchoInput) (*mcp.CallToolResult, any, error) {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
}

func add(_ context.Context, _ *mcp.CallToolRequest, in AddInput) (*mcp.CallToolResult, any, error) {
	sum := strconv.FormatFloat(in.A+in.B, 'f', -1, 64)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: sum}}}, nil, nil
}

// NewServer returns a server with the echo and add tools.
func NewServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "bench-gosdk", Version: "v0.0.1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echo the text back"}, echo)
	mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "Add two numbers"}, add)
	return s
}
