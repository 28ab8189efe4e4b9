package data

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolwire/toolwire/mcp"
)

// hangDeadline is how long a call that must end may take before a test
// calls it hung: not a speed bound, a deadlock detector.
const hangDeadline = time.Minute

// numbers writes a CSV file of one column, i, with the numbers 0 to n-1,
// and returns its name.
func numbers(t *testing.T, dir string, n int) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("i\n")
	for i := range n {
		b.WriteString(strconv.Itoa(i) + "\n")
	}
	name := fmt.Sprintf("numbers%d.csv", n)
	must(t, os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o644))
	return name
}

// TestRowsBound: a query whose result has more rows than the bound fails
// with an error naming --max-result-rows, before DuckDB makes the rows
// beyond it, and leaves no table behind, in memory or in the data
// directory; a result of exactly the bound is kept.
func TestRowsBound(t *testing.T) {
	for _, c := range []struct {
		name    string
		dataDir bool
	}{{"in memory", false}, {"data directory", true}} {
		t.Run(c.name, func(t *testing.T) {
			// Made in full, the result would spill past 64 MB or take
			// past 20 s: the error would name another bound.
			cfg := Config{MaxResultRows: 1000, MaxTempBytes: 64 << 20, QueryTimeout: 20 * time.Second}
			if c.dataDir {
				cfg.DataDir = t.TempDir()
			}
			e := newEnv(t, cfg)
			h, _ := e.load(numbers(t, e.dir, 1000))
			tables := map[string]string{"t": h}
			before, files := e.tables(), parquetFiles(t, cfg.DataDir)
			// 10^9 rows: the bound stops DuckDB after 1001.
			_, err := e.call("query", map[string]any{"sql": "SELECT a.i AS x, b.i AS y, c.i AS z FROM t a, t b, t c", "tables": tables})
			if err == nil || !strings.Contains(err.Error(), "more than 1000 rows") || !strings.Contains(err.Error(), "--max-result-rows") {
				t.Fatalf("a result of 10^9 rows: %v", err)
			}
			if e.tables() != before || parquetFiles(t, cfg.DataDir) != files {
				t.Fatal("the refused result left a table behind")
			}
			_, info := tableOf(t, e.must("query", map[string]any{"sql": "SELECT a.i AS x, b.i AS y FROM t a, t b WHERE b.i < 1 ORDER BY x DESC", "tables": tables}))
			if info.Rows != 1000 {
				t.Fatalf("a result of exactly the bound: %d rows", info.Rows)
			}
		})
	}
}

// parquetFiles counts the files of a data directory ("" counts none).
func parquetFiles(t *testing.T, dir string) int {
	t.Helper()
	if dir == "" {
		return 0
	}
	files, err := os.ReadDir(dir)
	must(t, err)
	return len(files)
}

// TestSpillBound: a query that spills more than the bound fails with an
// error naming --max-temp-bytes, and the next query runs. It needs
// DuckDB's memory_limit as much as max_temp_directory_size: without the
// first the query fits in memory and succeeds, without the second it
// spills as much as it likes and succeeds.
func TestSpillBound(t *testing.T) {
	e := newEnv(t, Config{MemoryLimit: 128 << 20, MaxTempBytes: 64 << 20})
	csv, _ := e.load(numbers(t, e.dir, 3000))
	h, _ := tableOf(t, e.must("query", map[string]any{"sql": "SELECT i FROM t", "tables": map[string]string{"t": csv}}))
	tables := map[string]string{"t": h}
	// 9 million groups of 32-byte strings: about 600 MB of hash table.
	_, err := e.call("query", map[string]any{"sql": "SELECT md5(CAST(a.i * 3000 + b.i AS VARCHAR)) AS h, count(*) AS n FROM t a, t b GROUP BY h", "tables": tables})
	if err == nil || !strings.Contains(err.Error(), "--max-temp-bytes, 64.0 MB") {
		t.Fatalf("a query spilling past the bound: %v", err)
	}
	e.must("query", map[string]any{"sql": "SELECT count(*) AS n FROM t", "tables": tables})
}

// TestTimeLimit: each tool's DuckDB work is interrupted at the time limit,
// whichever tool runs it, with an error naming --query-timeout; the
// toolset answers the next call.
func TestTimeLimit(t *testing.T) {
	e := newEnv(t, Config{})
	h, _ := e.load(numbers(t, e.dir, 4000))
	// 16 million rows, which no tool handles in 20 ms.
	big, _ := tableOf(t, e.must("query", map[string]any{"sql": "SELECT a.i * 4000 + b.i AS k, hash(a.i * 4000 + b.i) AS h FROM t a, t b", "tables": map[string]string{"t": h}}))
	e.ts.bounds.timeout = 20 * time.Millisecond // the calls below run one at a time
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"query", map[string]any{"sql": "SELECT count(*) AS n FROM t a, t b, t c, t d", "tables": map[string]string{"t": h}}}, // 2.56e14 rows
		{"sort", map[string]any{"table": big, "by": []string{"h"}}},
		{"group_by", map[string]any{"table": big, "by": []string{"h"}, "aggregations": []map[string]any{{"column": "k", "function": "count"}}}},
		{"filter", map[string]any{"table": big, "column": "h", "op": "gt", "value": 5}},
		{"save_parquet", map[string]any{"table": big, "path": "big.parquet"}},
	} {
		t.Run(c.tool, func(t *testing.T) {
			err := callWithin(t, e, c.tool, c.args)
			if err == nil || !strings.Contains(err.Error(), "stopped after 20ms, the data server's time limit per call (--query-timeout)") {
				t.Fatalf("%s past the time limit: %v", c.tool, err)
			}
		})
	}
	e.ts.bounds.timeout = DefaultQueryTimeout
	e.must("head", map[string]any{"table": big, "n": 1})
}

// callWithin calls a tool and returns its error, failing the test if the
// call does not end within hangDeadline.
func callWithin(t *testing.T, e *env, name string, args any) error {
	t.Helper()
	b, err := json.Marshal(args)
	must(t, err)
	done := make(chan error, 1)
	go func() {
		_, err := e.reg.Call(e.ctx, name, b)
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(hangDeadline):
		t.Fatalf("%s did not end within %s", name, hangDeadline)
		return nil
	}
}

// TestCancelCrossJoin: a client that cancels a cross join of 10^12 rows
// mid-flight gets the call back (DuckDB is interrupted, its thread freed),
// and the toolset runs the next query.
func TestCancelCrossJoin(t *testing.T) {
	e := newEnv(t, Config{})
	h, _ := e.load(numbers(t, e.dir, 1000))
	args, _ := json.Marshal(map[string]any{"sql": "SELECT count(*) AS n FROM t a, t b, t c, t d", "tables": map[string]string{"t": h}})
	ctx, cancel := context.WithCancel(e.ctx)
	done := make(chan error, 1)
	go func() {
		_, err := e.reg.Call(ctx, "query", args)
		done <- err
	}()
	time.Sleep(500 * time.Millisecond) // the query is running: no result in this time
	cancelled := time.Now()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("the cancelled query: %v", err)
		}
		t.Logf("the call returned %s after the cancellation", time.Since(cancelled).Round(time.Millisecond))
	case <-time.After(hangDeadline):
		t.Fatalf("the cancelled query did not return within %s", hangDeadline)
	}
	if err := callWithin(t, e, "query", map[string]any{"sql": "SELECT count(*) AS n FROM t a, t b", "tables": map[string]string{"t": h}}); err != nil {
		t.Fatal(err)
	}
}

// memoryCgroup makes a cgroup v1 memory cgroup capped at limit bytes,
// removed when the test ends (after its processes). It skips the test
// where there is none to make (not root, no cgroup v1), but fails it in
// CI.
func memoryCgroup(t *testing.T, limit int64) string {
	t.Helper()
	dir := filepath.Join("/sys/fs/cgroup/memory", fmt.Sprintf("toolwire-test-%d", os.Getpid()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("a memory cgroup for the test: %v", err)
		}
		t.Skipf("no memory cgroup for the test (cgroup v1, as root): %v", err)
	}
	t.Cleanup(func() {
		for range 100 { // the processes in it may take a moment to go
			if err := os.Remove(dir); err == nil || os.IsNotExist(err) {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Errorf("the cgroup %s is still there", dir)
	})
	must(t, os.WriteFile(filepath.Join(dir, "memory.limit_in_bytes"), []byte(strconv.FormatInt(limit, 10)), 0o644))
	return dir
}

// cgroupValue reads a number of a cgroup's file, or the value of a key
// in it ("oom_kill" in memory.oom_control).
func cgroupValue(t *testing.T, dir, file, key string) int64 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, file))
	must(t, err)
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		k, v, ok := strings.Cut(line, " ")
		if !ok {
			k, v = key, k
		}
		if k == key {
			n, err := strconv.ParseInt(v, 10, 64)
			must(t, err)
			return n
		}
	}
	t.Fatalf("%s has no %s: %q", file, key, b)
	return 0
}

// TestBoundsUnderMemoryCap is issue 20's acceptance for bad queries:
// `toolwire serve data`, as toolwire runs it, with its bounds set low, in
// a cgroup capped at 2 GiB. Each query that would take more memory,
// spill more, make more rows or run longer than its bound fails with an
// error naming the bound's flag, the server is not killed, and its next
// call succeeds. Without the bounds the first query gets the server
// OOM-killed.
func TestBoundsUnderMemoryCap(t *testing.T) {
	bin := toolwire(t)
	cg := memoryCgroup(t, 2<<30)
	work := t.TempDir()
	csv := numbers(t, work, 1000)
	cs, err := (&mcp.Client{Info: mcp.Implementation{Name: "bounds-test", Version: "1"}}).Connect(context.Background(), &mcp.CommandTransport{
		Command: "sh",
		Args: []string{"-c", `echo $$ > "$0/cgroup.procs" && exec "$@"`, cg, bin, "serve", "data",
			"--memory-limit", strconv.Itoa(128 << 20), "--max-memory", strconv.Itoa(1 << 30), "--max-temp-bytes", strconv.Itoa(256 << 20),
			"--query-timeout", "10s", "--max-result-rows", "1000000"},
		Dir:    work,
		Stderr: os.Stderr,
	})
	must(t, err)
	t.Cleanup(func() { cs.Close() })
	loaded, _ := tableOf(t, mustTool(t, cs, "load_csv", map[string]any{"path": csv}))
	// A table of DuckDB's, not read from the file each time: the CSV
	// reader takes 30 MiB of buffer memory a query.
	h, _ := tableOf(t, mustTool(t, cs, "query", map[string]any{"sql": "SELECT i FROM t", "tables": map[string]string{"t": loaded}}))
	query := func(ctx context.Context, sql string) (string, bool, error) {
		b, _ := json.Marshal(map[string]any{"sql": sql, "tables": map[string]string{"t": h}})
		res, err := cs.CallTool(ctx, "query", b)
		if err != nil {
			return "", false, err
		}
		return res.ToolResult().ForModel().Text, res.IsError, nil
	}
	for _, c := range []struct {
		name, sql string
		times     int // run at once; 0 is 1
		bound     string
	}{
		{"a list of 300 million", "SELECT range(300000000) AS x", 0, "--max-memory"},
		{"a string of 2 GB", "SELECT repeat('x', 2000000000) AS x", 0, "--max-memory"},
		{"a list of 10 million a row", "SELECT range(10000000 + i) AS x FROM t", 0, "--max-memory"},
		{"4 at once", "SELECT range(300000000) AS x", 4, "--max-memory"},
		{"10^9 rows", "SELECT a.i AS x, b.i AS y, c.i AS z FROM t a, t b, t c", 0, "--max-result-rows"},
		{"a cross join grouped", "SELECT a.i AS x, b.i AS y, c.i AS z, count(*) AS n FROM t a, t b, t c GROUP BY ALL", 0, "--max-temp-bytes"},
		{"a cross join sorted", "SELECT a.i AS x, b.i AS y, c.i AS z FROM t a, t b, t c ORDER BY hash(a.i, b.i, c.i)", 0, "--memory-limit"},
		{"a cross join of 10^12", "SELECT count(*) AS n FROM t a, t b, t c, t d", 0, "--query-timeout"},
	} {
		t.Run(c.name, func(t *testing.T) {
			must(t, os.WriteFile(filepath.Join(cg, "memory.max_usage_in_bytes"), []byte("0"), 0o644))
			start := time.Now()
			var wg sync.WaitGroup
			for range max(c.times, 1) {
				wg.Go(func() {
					ctx, cancel := context.WithTimeout(context.Background(), hangDeadline)
					defer cancel()
					text, isErr, err := query(ctx, c.sql)
					if err != nil || !isErr || !strings.Contains(text, c.bound) {
						t.Errorf("%s: %q, %v; want an error naming %s", c.sql, text, err, c.bound)
					}
				})
			}
			wg.Wait()
			t.Logf("%s: peak %.0f MiB in the cgroup, %s", c.name, float64(cgroupValue(t, cg, "memory.max_usage_in_bytes", ""))/(1<<20), time.Since(start).Round(time.Millisecond))
			if n := cgroupValue(t, cg, "memory.oom_control", "oom_kill"); n != 0 {
				t.Fatalf("%d processes OOM-killed in the cgroup", n)
			}
			if text, isErr, err := query(context.Background(), "SELECT 42 AS x"); err != nil || isErr {
				t.Fatalf("the next query: %q, %v", text, err)
			}
		})
	}

	// A client that gives up on a query cancels it: the server answers
	// the next one.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, _, err := query(ctx, "SELECT count(*) AS n FROM t a, t b, t c, t d"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a query given up on: %v", err)
	}
	if text, isErr, err := query(context.Background(), "SELECT 42 AS x"); err != nil || isErr {
		t.Fatalf("the query after the cancelled one: %q, %v", text, err)
	}
}
