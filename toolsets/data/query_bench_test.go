package data

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkQuery measures the query tool as a caller calls it (through
// the registry, with its preview) over a table of 100 rows and one of a
// million, kept in memory (a table a tool made, in the toolset's catalog)
// and in a data directory (a Parquet file), with a count and a small
// GROUP BY, called back to back, and a count called after a pause.
func BenchmarkQuery(b *testing.B) {
	queries := []struct{ name, sql string }{
		{"count", "SELECT count(*) AS n FROM t"},
		{"groupby", "SELECT g, count(*) AS n, sum(v) AS s FROM t GROUP BY g ORDER BY g"},
	}
	for _, store := range []string{"memory", "datadir"} {
		for _, rows := range []int{100, 1_000_000} {
			b.Run(fmt.Sprintf("store=%s/rows=%d", store, rows), func(b *testing.B) {
				var cfg Config
				if store == "datadir" {
					cfg.DataDir = b.TempDir()
				}
				e := newEnv(b, cfg)
				h, _ := e.load(writeRows(b, e.dir, rows))
				if store == "memory" { // a table in the catalog, not the CSV file
					h, _ = tableOf(b, e.must("query", map[string]any{"sql": "SELECT * FROM t", "tables": map[string]string{"t": h}}))
				}
				for _, q := range queries {
					b.Run("sql="+q.name, func(b *testing.B) {
						args := map[string]any{"sql": q.sql, "tables": map[string]string{"t": h}}
						for b.Loop() {
							e.must("query", args)
						}
					})
				}
				// A model's calls come seconds apart: the time of one
				// call after a pause, which is not timed.
				b.Run("sql=count/paced", func(b *testing.B) {
					args := map[string]any{"sql": queries[0].sql, "tables": map[string]string{"t": h}}
					for b.Loop() {
						b.StopTimer()
						time.Sleep(50 * time.Millisecond)
						b.StartTimer()
						e.must("query", args)
					}
				})
			})
		}
	}
}

// writeRows writes a CSV file of n rows (id, g in 0..99, v) in dir.
func writeRows(b *testing.B, dir string, n int) string {
	b.Helper()
	path := filepath.Join(dir, fmt.Sprintf("rows%d.csv", n))
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, "id,g,v")
	for i := range n {
		fmt.Fprintf(w, "%d,%d,%d.%d\n", i, i%100, i%1000, i%7)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return path
}
