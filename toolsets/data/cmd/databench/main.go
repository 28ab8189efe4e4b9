// Command databench times the CSV flow in process on a large CSV file —
// load_csv, drop_missing, describe, through a tool registry as an agent
// calls them — and reports load_csv's throughput and the process's peak
// resident memory. bench/data/run.sh runs it next to pandas.
//
//	go run ./cmd/databench -csv /tmp/sales.csv -generate-bytes 1073741824
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/toolwire/toolwire/tool"
	"github.com/toolwire/toolwire/toolsets/data"
	"github.com/toolwire/toolwire/toolsets/data/demo"
)

func main() {
	csvPath := flag.String("csv", "sales.csv", "the CSV file")
	genBytes := flag.Int64("generate-bytes", 0, "when the file is missing, first generate a sales table of about this size")
	memory := flag.Int64("memory-limit", data.DefaultMemoryLimit, "DuckDB's memory bound, in bytes")
	flag.Parse()
	if err := run(*csvPath, *genBytes, *memory); err != nil {
		fmt.Fprintln(os.Stderr, "databench:", err)
		os.Exit(1)
	}
}

// bytesPerRow is about the size of a generated row.
const bytesPerRow = 44

func run(path string, genBytes, memory int64) error {
	if _, err := os.Stat(path); os.IsNotExist(err) && genBytes > 0 {
		start := time.Now()
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		w := bufio.NewWriterSize(f, 1<<20)
		if err := demo.GenerateCSV(w, int(genBytes/bytesPerRow), 0); err != nil {
			return err
		}
		if err := w.Flush(); err != nil {
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		fmt.Printf("generated %s in %s\n", path, time.Since(start).Round(time.Millisecond))
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return err
	}
	ctx := tool.WithCaller(context.Background(), tool.Caller{ID: "bench"})
	ts, err := data.Open(ctx, data.Config{Dirs: []string{filepath.Dir(abs)}, MaxBytes: 1 << 40, MemoryLimit: memory})
	if err != nil {
		return err
	}
	defer ts.Close()
	var reg tool.Registry
	if err := reg.Add(ts.Tools()...); err != nil {
		return err
	}
	call := func(name string, args map[string]any) (string, time.Duration, error) {
		b, _ := json.Marshal(args) // strings only
		start := time.Now()
		res, err := reg.Call(ctx, name, b)
		d := time.Since(start)
		if err != nil {
			return "", d, fmt.Errorf("%s: %w", name, err)
		}
		return res.ForModel().Text, d, nil
	}
	table := func(text string) string {
		var out struct{ Table string }
		_ = json.Unmarshal([]byte(text), &out)
		return out.Table
	}
	text, dLoad, err := call("load_csv", map[string]any{"path": filepath.Base(abs)})
	if err != nil {
		return err
	}
	mb := float64(fi.Size()) / 1e6
	fmt.Printf("memory limit  %8d MiB\n", memory>>20)
	fmt.Printf("load_csv      %8.2f s  %7.1f MB/s  (%.0f MB)\n", dLoad.Seconds(), mb/dLoad.Seconds(), mb)
	text, dDrop, err := call("drop_missing", map[string]any{"table": table(text)})
	if err != nil {
		return err
	}
	fmt.Printf("drop_missing  %8.2f s\n", dDrop.Seconds())
	_, dDesc, err := call("describe", map[string]any{"table": table(text)})
	if err != nil {
		return err
	}
	fmt.Printf("describe      %8.2f s\n", dDesc.Seconds())
	fmt.Printf("total         %8.2f s\n", (dLoad + dDrop + dDesc).Seconds())
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
		fmt.Printf("peak RSS      %8.0f MB  (file %.0f MB)\n", float64(ru.Maxrss)*1024/1e6, mb)
	}
	return nil
}
