// Package toolwirepeer builds the benchmark server (tools echo and add) with
// toolwire itself (github.com/toolwire/toolwire, built from the working tree
// through the replace in bench/go.mod): typed tools (tool.New), whose input
// schemas are inferred from their argument structs and whose arguments the
// server checks against them before the functions run.
package toolwirepeer

import (
	"context"
	"strconv"

	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/tool"
)

type echoArgs struct {
	Text string `json:"text" description:"the text to echo back"`
}

type addArgs struct {
	A float64 `json:"a" description:"first addend"`
	B float64 `json:"b" description:"second addend"`
}

func echo(_ context.Context, in echoArgs) (string, error) { return in.Text, nil }

func add(_ context.Context, in addArgs) (string, error) {
	return strconv.FormatFloat(in.A+in.B, 'f', -1, 64), nil
}

// NewServer returns a server with the echo and add tools.
func NewServer() *mcp.Server {
	s := &mcp.Server{Info: mcp.Implementation{Name: "bench-toolwire", Version: "v0.0.1"}}
	err := s.AddTools(
		tool.Must(tool.New("echo", "Echo the text back", echo)),
		tool.Must(tool.New("add", "Add two numbers", add)),
	)
	if err != nil {
		panic(err)
	}
	return s
}
