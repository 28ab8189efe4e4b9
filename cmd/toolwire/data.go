//go:build cgo

package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/toolwire/toolwire/handle/redisstore"
	"github.com/toolwire/toolwire/tool"
	"github.com/toolwire/toolwire/toolsets/data"
)

// open opens the data toolset (DuckDB, linked with cgo) with its flags.
// Close it when done: that removes its temporary directory.
func (o dataOptions) open(ctx context.Context) ([]tool.Tool, io.Closer, error) {
	cfg := data.Config{Dirs: o.dirs, DataDir: o.dataDir, TTL: o.ttl, MaxBytes: o.maxBytes, MemoryLimit: o.memory,
		MaxMemory: max(o.maxMemory, 0), MaxTempBytes: o.maxTemp, QueryTimeout: o.queryTimeout, MaxResultRows: o.maxRows}
	if o.maxMemory == 0 {
		cfg.MaxMemory = data.DefaultMaxMemory
	}
	if o.redis != "" {
		if o.dataDir == "" {
			return nil, nil, fmt.Errorf("--redis needs --data-dir: replicas share tables as Parquet files in a directory they all reach")
		}
		store, err := redisstore.New(o.redis, o.ttl)
		if err != nil {
			return nil, nil, fmt.Errorf("--redis: %w", err)
		}
		// A wrong password or certificate is said now, not at the first
		// call.
		pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err = store.Ping(pctx)
		cancel()
		if err != nil {
			return nil, nil, fmt.Errorf("--redis: %w", err)
		}
		cfg.Store = store
	}
	ts, err := data.Open(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	return ts.Tools(), ts, nil
}
