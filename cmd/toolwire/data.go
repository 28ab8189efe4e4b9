//go:build cgo

package main

import (
	"context"
	"fmt"
	"time"

	"github.com/toolwire/toolwire/handle/redisstore"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/toolsets/data" // registers "data" (DuckDB, linked with cgo)
)

// toolsetOptions returns the options the flags give the toolset named:
// the data toolset's Config, with its Redis store when --redis names one;
// nil (the defaults) for the others.
func (o dataOptions) toolsetOptions(ctx context.Context, name string) (any, error) {
	if name != "data" {
		return nil, nil
	}
	cfg := data.Config{Dirs: o.dirs, DataDir: o.dataDir, TTL: o.ttl, MaxBytes: o.maxBytes, MemoryLimit: o.memory,
		MaxMemory: max(o.maxMemory, 0), MaxTempBytes: o.maxTemp, QueryTimeout: o.queryTimeout, MaxResultRows: o.maxRows}
	if o.maxMemory == 0 {
		cfg.MaxMemory = data.DefaultMaxMemory
	}
	if o.redis != "" {
		if o.dataDir == "" {
			return nil, fmt.Errorf("--redis needs --data-dir: replicas share tables as Parquet files in a directory they all reach")
		}
		store, err := redisstore.New(o.redis, o.ttl)
		if err != nil {
			return nil, fmt.Errorf("--redis: %w", err)
		}
		// A wrong password or certificate is said now, not at the first
		// call.
		pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err = store.Ping(pctx)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("--redis: %w", err)
		}
		cfg.Store = store
	}
	return cfg, nil
}

// taskStore returns where the served tools' tasks (the MCP Tasks
// extension) are kept: in Redis with --redis, so that every replica
// answers for a task any of them runs; nil (in memory) otherwise.
func (o dataOptions) taskStore() (mcp.TaskStore, error) {
	if o.redis == "" {
		return nil, nil
	}
	store, err := redisstore.New(o.redis, o.ttl)
	if err != nil {
		return nil, fmt.Errorf("--redis: %w", err)
	}
	return store.Tasks(), nil
}
