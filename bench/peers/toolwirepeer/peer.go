// Package toolwirepeer builds the benchmark server (tools echo and add) with
// toolwire itself (github.com/toolwire/toolwire, built from the working tree
// through the replace in bench/go.mod): tool.Func with hand-written input
// schemas, arguments decoded with encoding/json and checked by hand.
package toolwirepeer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/tool"
)

var (
	echoSchema = json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","description":"the text to echo back"}},"required":["text"]}`)
	addSchema  = json.RawMessage(`{"type":"object","properties":{"a":{"type":"number","description":"first addend"},"b":{"type":"number","description":"second addend"}},"required":["a","b"]}`)
)

func echo(_ context.Context, args json.RawMessage) (*tool.Result, error) {
	var in struct {
		Text *string `json:"text"`
	}
	if err := json.Unmarshal(args, &in); err != nil {
		return nil, fmt.Errorf("invalid arguments: %w", err)
	}
	if in.Text == nil {
		return nil, errors.New("invalid arguments: text is required")
	}
	return tool.Text(*in.Text), nil
}

func add(_ context.Context, args json.RawMessage) (*tool.Result, error) {
	var in struct {
		A *float64 `json:"a"`
		B *float64 `json:"b"`
	}
	if err := json.Unmarshal(args, &in); err != nil {
		return nil, fmt.Errorf("invalid arguments: %w", err)
	}
	if in.A == nil || in.B == nil {
		return nil, errors.New("invalid arguments: a and b are required")
	}
	return tool.Text(strconv.FormatFloat(*in.A+*in.B, 'f', -1, 64)), nil
}

// NewServer returns a server with the echo and add tools.
func NewServer() *mcp.Server {
	s := &mcp.Server{Info: mcp.Implementation{Name: "bench-toolwire", Version: "v0.0.1"}}
	err := s.AddTools(
		tool.Func{Def: tool.Info{Name: "echo", Description: "Echo the text back", InputSchema: echoSchema}, Fn: echo},
		tool.Func{Def: tool.Info{Name: "add", Description: "Add two numbers", InputSchema: addSchema}, Fn: add},
	)
	if err != nil {
		panic(err)
	}
	return s
}
