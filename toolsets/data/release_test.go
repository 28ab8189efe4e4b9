package data

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/toolwire/toolwire/handle"
	"github.com/toolwire/toolwire/tool"
)

// TestReleaseOwner: a caller cannot release another caller's table, with
// the toolset's own store and with a shared one and a data directory
// (replicas, where releasing deletes the table's Parquet file). The
// release tool resolves the handle first, which is an owner check of its
// own, so the test also makes the store release the toolset then makes,
// as the other caller: it must refuse too. The owner's table, and its
// file, stay; the owner can still release it.
func TestReleaseOwner(t *testing.T) {
	for _, tt := range []struct {
		name    string
		dataDir bool
	}{
		{"own store", false},
		{"shared store and data directory", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var cfg Config
			if tt.dataDir {
				cfg = Config{DataDir: t.TempDir(), Store: &handle.Memory{}}
			}
			e := newEnv(t, cfg)
			e.write("sales.csv", sales)
			h, _ := e.load("sales.csv")
			parquet := func() []string {
				if !tt.dataDir {
					return nil
				}
				files, err := filepath.Glob(filepath.Join(cfg.DataDir, "*.parquet"))
				must(t, err)
				return files
			}
			files := parquet()
			if tt.dataDir && len(files) != 1 {
				t.Fatalf("the data directory holds %v, want the table's file", files)
			}

			a := e.ctx
			b := tool.WithCaller(context.Background(), tool.Caller{ID: "token:b"})
			e.ctx = b
			if _, err := e.call("release", map[string]any{"table": h}); !errors.Is(err, handle.ErrExpired) {
				t.Fatalf("B releasing A's table: %v; want it refused as an unknown handle", err)
			}
			if err := handle.Release[*Table](b, e.ts.store, h); !errors.Is(err, handle.ErrExpired) {
				t.Fatalf("the store releasing A's table for B: %v; want it refused as an unknown handle", err)
			}

			e.ctx = a
			e.must("describe", map[string]any{"table": h})
			if got := parquet(); len(got) != len(files) {
				t.Fatalf("after B's release the data directory holds %v, want %v", got, files)
			}
			e.must("release", map[string]any{"table": h})
			if _, err := e.call("describe", map[string]any{"table": h}); !errors.Is(err, handle.ErrExpired) {
				t.Fatalf("describing a released table: %v", err)
			}
			if got := parquet(); len(got) != 0 {
				t.Fatalf("after A's release the data directory holds %v", got)
			}
		})
	}
}
