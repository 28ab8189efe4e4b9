// Package mcpgopeer builds the benchmark server (tools echo and add) with
// github.com/mark3labs/mcp-go, the idiomatic way: mcp.NewTool with property
// options and request.Require* accessors in the handlers.
package mcpgopeer

import (
	"context"
	"strconv"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

func echo(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	text, err := req.RequireString("text")
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	return mcp.NewToolResultText(text), nil
}

func add(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	a, err := req.RequireFloat("a")
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	b, err := req.RequireFloat("b")
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	return mcp.NewToolResultText(strconv.FormatFloat(a+b, 'f', -1, 64)), nil
}

// NewServer returns a server with the echo and add tools.
func NewServer() *server.MCPServer {
	s := server.NewMCPServer("bench-mcpgo", "v0.0.1", server.WithToolCapabilities(false))
	s.AddTool(mcp.NewTool("echo",
		mcp.WithDescription("Echo the text back"),
		mcp.WithString("text", mcp.Required(), mcp.Description("the text to echo back")),
	), echo)
	s.AddTool(mcp.NewTool("add",
		mcp.WithDescription("Add two numbers"),
		mcp.WithNumber("a", mcp.Required(), mcp.Description("first addend")),
		mcp.WithNumber("b", mcp.Required(), mcp.Description("second addend")),
	), add)
	return s
}
