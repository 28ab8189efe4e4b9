//go:build !cgo

package main

import (
	"context"
	"errors"

	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/toolsets"
)

// This build has no data toolset, which runs on DuckDB: "data" opens to
// an error that says how to build one that has it.
func init() {
	toolsets.Register("data", func(context.Context, any) (toolsets.Toolset, error) {
		return nil, errors.New("this toolwire was built without cgo (CGO_ENABLED=0), so it has no data toolset, which runs on DuckDB: " +
			"build it with cgo (the default on Linux and macOS, with a C compiler installed): go build ./cmd/toolwire")
	})
}

// toolsetOptions gives every toolset its defaults: the data toolset's
// flags have no toolset to reach in this build.
func (o dataOptions) toolsetOptions(context.Context, string) (any, error) {
	return nil, nil
}

// taskStore keeps tasks in memory: without the data toolset, --redis has
// no store to reach in this build.
func (o dataOptions) taskStore() (mcp.TaskStore, error) {
	return nil, nil
}
