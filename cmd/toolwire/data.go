//go:build cgo

package main

import (
	"context"
	"fmt"

	"github.com/toolwire/toolwire/handle/redisstore"
	"github.com/toolwire/toolwire/tool"
	"github.com/toolwire/toolwire/toolsets/data"
)

// open opens the data toolset (DuckDB, linked with cgo) with its flags.
func (o dataOptions) open(ctx context.Context) ([]tool.Tool, error) {
	cfg := data.Config{Dirs: o.dirs, DataDir: o.dataDir, TTL: o.ttl, MaxBytes: o.maxBytes, MemoryLimit: o.memory,
		MaxMemory: max(o.maxMemory, 0), MaxTempBytes: o.maxTemp, QueryTimeout: o.queryTimeout, MaxResultRows: o.maxRows}
	if o.maxMemory == 0 {
		cfg.MaxMemory = data.DefaultMaxMemory
	}
	if o.redis != "" {
		if o.dataDir == "" {
			return nil, fmt.Errorf("--redis needs --data-dir: replicas share tables as Parquet files in a directory they all reach")
		}
		cfg.Store = redisstore.New(o.redis, o.ttl)
	}
	ts, err := data.Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return ts.Tools(), nil
}
