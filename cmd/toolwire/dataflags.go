package main

import (
	"time"

	"github.com/spf13/pflag"

	"github.com/toolwire/toolwire/handle"
)

// dataOptions are the flags of the data toolset.
type dataOptions struct {
	dirs     []string
	dataDir  string
	redis    string
	ttl      time.Duration
	maxBytes int64
	memory   int64
	// maxMemory is --max-memory: 0 for the default, negative for none.
	maxMemory    int64
	maxTemp      int64
	queryTimeout time.Duration
	maxRows      int64
}

func (o *dataOptions) addFlags(f *pflag.FlagSet) {
	f.StringSliceVar(&o.dirs, "allow-dir", nil, "data toolset: directories whose files the tools may read and write (default: the working directory)")
	f.StringVar(&o.dataDir, "data-dir", "", "data toolset: keep tables as Parquet files in this directory (shared by replicas) instead of in memory")
	f.StringVar(&o.redis, "redis", "", "data toolset: keep table handles in this Redis server, shared by replicas; needs --data-dir. "+
		"host:port, or a URL with a password and TLS: redis://[user:password@]host:port[/db], rediss://… (TLS; trust a private CA with SSL_CERT_FILE=ca.pem)")
	f.DurationVar(&o.ttl, "table-ttl", handle.DefaultTTL, "data toolset: how long a table lives after its last use")
	f.Int64Var(&o.maxBytes, "max-table-bytes", 0, "data toolset: bound of the tables kept (estimated size uncompressed), in bytes; the least recently used go first (0: 8 GiB)")
	f.Int64Var(&o.memory, "memory-limit", 0, "data toolset: bound of DuckDB's buffer memory (tables, sorts, hash tables), in bytes; beyond it they spill to a temporary directory (0: 512 MiB)")
	f.Int64Var(&o.maxMemory, "max-memory", 0, "data toolset: bound of all the memory the process may take beyond what it holds once open, in bytes, enforced below DuckDB (RLIMIT_DATA, Linux): an allocation past it fails the query that made it; includes --memory-limit (0: 2 GiB on Linux; -1: none)")
	f.Int64Var(&o.maxTemp, "max-temp-bytes", 0, "data toolset: bound of the disk DuckDB spills to beyond --memory-limit, in bytes: a query that would spill more fails (0: 8 GiB)")
	f.DurationVar(&o.queryTimeout, "query-timeout", 0, "data toolset: time limit of each tool call; DuckDB is interrupted when it runs out and the call fails (0: 2m)")
	f.Int64Var(&o.maxRows, "max-result-rows", 0, "data toolset: bound of the rows of a table a tool computes (query, filter, sort, ...); DuckDB stops one row past it and the call fails (0: 100,000,000)")
}
