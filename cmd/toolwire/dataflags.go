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
}

func (o *dataOptions) addFlags(f *pflag.FlagSet) {
	f.StringSliceVar(&o.dirs, "allow-dir", nil, "data toolset: directories whose files the tools may read and write (default: the working directory)")
	f.StringVar(&o.dataDir, "data-dir", "", "data toolset: keep tables as Parquet files in this directory (shared by replicas) instead of in memory")
	f.StringVar(&o.redis, "redis", "", "data toolset: keep table handles in this Redis server, shared by replicas; needs --data-dir. "+
		"host:port, or a URL with a password and TLS: redis://[user:password@]host:port[/db], rediss://… (TLS; trust a private CA with SSL_CERT_FILE=ca.pem)")
	f.DurationVar(&o.ttl, "table-ttl", handle.DefaultTTL, "data toolset: how long a table lives after its last use")
	f.Int64Var(&o.maxBytes, "max-table-bytes", 0, "data toolset: bound of the tables kept (estimated size uncompressed), in bytes; the least recently used go first (0: 8 GiB)")
	f.Int64Var(&o.memory, "memory-limit", 0, "data toolset: bound of DuckDB's memory, in bytes; tables beyond it spill to a temporary directory (0: 512 MiB)")
}
