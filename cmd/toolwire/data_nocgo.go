//go:build !cgo

package main

import (
	"context"
	"errors"
	"io"

	"github.com/toolwire/toolwire/tool"
)

// open says that this build has no data toolset: DuckDB needs cgo.
func (o dataOptions) open(context.Context) ([]tool.Tool, io.Closer, error) {
	return nil, nil, errors.New("this toolwire was built without cgo (CGO_ENABLED=0), so it has no data toolset, which runs on DuckDB: " +
		"build it with cgo (the default on Linux and macOS, with a C compiler installed): go build ./cmd/toolwire")
}
