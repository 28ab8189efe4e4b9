package data

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/toolwire/toolwire/tool"
)

// TestQueryTypes: a query's result keeps the types DuckDB gives its
// columns, with tables in memory, whichever way it comes back to the
// toolset's database (Parquet for the types it keeps, parquetTypes; a
// DuckDB file for the others), and its values, as DuckDB writes them.
func TestQueryTypes(t *testing.T) {
	e := newEnv(t, Config{})
	e.write("a.csv", "x\n1\n2\n")
	mine, _ := e.load("a.csv")
	cases := []struct{ expr, typ, text string }{
		{"sum(x) + 1152921504606846976", "HUGEINT", "1152921504606846979"},
		{"max(x)::UHUGEINT + 340282366920938463463374607431768211452", "UHUGEINT", "340282366920938463463374607431768211454"},
		{"max('a')::ENUM('a', 'b')", "ENUM('a', 'b')", "a"},
		{"max(TIMETZ '10:00:00.123456-15:59')", "TIME WITH TIME ZONE", "10:00:00.123456-15:59"},
		{"max(INTERVAL 3 DAY) + to_microseconds(7)", "INTERVAL", "3 days 00:00:00.000007"},
		{"max(TIMESTAMP_S '2020-01-01 10:00:00')", "TIMESTAMP_S", "2020-01-01 10:00:00"},
		{"max([x]::BIGINT[1])", "BIGINT[1]", "[2]"},
		{"max({'k': x})", "STRUCT(k BIGINT)", "{'k': 2}"},
		{"max('101'::BIT)", "BIT", "101"},
		{"max(x)", "BIGINT", "2"},
		{"max(x)::UBIGINT + 18446744073709551613", "UBIGINT", "18446744073709551615"},
		{"avg(x)", "DOUBLE", "1.5"},
		{"sum(x::DECIMAL(38,12)) + 12345678901234567890123456.123456789012", "DECIMAL(38,12)", "12345678901234567890123459.123456789012"},
		{"max('ü€')", "VARCHAR", "ü€"},
		{"max(DATE 'infinity')", "DATE", "infinity"},
		{"max(TIMESTAMP '2020-01-01 10:00:00.123456')", "TIMESTAMP", "2020-01-01 10:00:00.123456"},
		{"max(TIMESTAMP_NS '2020-01-01 10:00:00.123456789')", "TIMESTAMP_NS", "2020-01-01 10:00:00.123456789"},
		{"max('ffffffff-ffff-ffff-ffff-ffffffffffff'::UUID)", "UUID", "ffffffff-ffff-ffff-ffff-ffffffffffff"},
		{"bool_and(x > 0)", "BOOLEAN", "true"},
	}
	for _, c := range cases {
		t.Run(c.typ, func(t *testing.T) {
			out := e.must("query", map[string]any{"sql": "SELECT " + c.expr + " AS c FROM mine", "tables": map[string]string{"mine": mine}})
			h, _ := tableOf(t, out)
			typ := mustResolve(t, e, "token:test", h).Columns[0].Type
			out = e.must("query", map[string]any{"sql": "SELECT CAST(c AS VARCHAR) AS v FROM r", "tables": map[string]string{"r": h}})
			if _, info := tableOf(t, out); typ != c.typ || info.Preview != "v\n"+c.text+"\n" {
				t.Fatalf("SELECT %s: %s %q, want %s %q", c.expr, typ, info.Preview, c.typ, c.text)
			}
		})
	}
}

// TestQuerySnapshots: a table in memory is copied once, by the first
// query that reads it, even when several queries read it first at once;
// later queries read the same copy, and dropping the table (release)
// removes it.
func TestQuerySnapshots(t *testing.T) {
	e := newEnv(t, Config{})
	var csv strings.Builder
	csv.WriteString("x\n")
	for i := range 1000 {
		fmt.Fprintf(&csv, "%d\n", i)
	}
	e.write("a.csv", csv.String())
	file, _ := e.load("a.csv")
	h, _ := tableOf(t, e.must("query", map[string]any{"sql": "SELECT x FROM a", "tables": map[string]string{"a": file}}))
	tb := mustResolve(t, e, "token:test", h)
	snap := e.ts.snapshotPath(tb.Name)
	if _, err := os.Stat(snap); !os.IsNotExist(err) {
		t.Fatalf("a copy of the table before any query read it: %v", err)
	}
	count := map[string]any{"sql": "SELECT count(*) AS n, sum(x) AS s FROM a", "tables": map[string]string{"a": h}}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			out, err := e.call("query", count)
			if err == nil && !strings.Contains(out, `"preview":"n,s\n1000,499500\n"`) {
				err = fmt.Errorf("query result %s", out)
			}
			if err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	files, _ := filepath.Glob(filepath.Join(filepath.Dir(snap), "*"))
	if len(files) != 1 || files[0] != snap {
		t.Fatalf("after the first queries, the copies are %v, want %s alone", files, snap)
	}
	before, err := os.Stat(snap)
	must(t, err)
	e.must("query", count)
	if after, err := os.Stat(snap); err != nil || !os.SameFile(before, after) || !after.ModTime().Equal(before.ModTime()) {
		t.Fatalf("a later query wrote the copy again: %v", err)
	}
	e.must("release", map[string]any{"table": h})
	if _, err := os.Stat(snap); !os.IsNotExist(err) {
		t.Fatalf("the copy of a released table: %v", err)
	}
}

// TestSnapshotOfDroppedTable: a copy placed after its table was dropped
// (drop ran while it was being written) is removed again.
func TestSnapshotOfDroppedTable(t *testing.T) {
	e := newEnv(t, Config{})
	tb := &Table{Name: "t_" + randomHex()}
	snap := e.ts.snapshotPath(tb.Name)
	must(t, os.MkdirAll(filepath.Dir(snap), 0o700))
	tmp := snap + ".x.tmp"
	must(t, os.WriteFile(tmp, []byte("a copy"), 0o600))
	if err := e.ts.placeSnapshot(context.Background(), tb, tmp); err == nil {
		t.Fatal("placing the copy of a dropped table succeeded")
	}
	if files, _ := filepath.Glob(filepath.Join(filepath.Dir(snap), "*")); len(files) != 0 {
		t.Fatalf("files left: %v", files)
	}
}

// TestSandboxSnapshots checks the database a query runs in with tables in
// memory, without the SQL check in front: it attaches the copy of the
// caller's table (snapshot) and no other caller's, lists none, and writes
// only the one file allowed for a result.
func TestSandboxSnapshots(t *testing.T) {
	e := newEnv(t, Config{})
	ctx := context.Background()
	snaps := map[string]string{}
	for _, caller := range []string{"token:a", "token:b"} {
		e.ctx = tool.WithCaller(context.Background(), tool.Caller{ID: caller})
		e.write("x.csv", "x\n1\n")
		file, _ := e.load("x.csv")
		h, _ := tableOf(t, e.must("query", map[string]any{"sql": "SELECT x FROM f", "tables": map[string]string{"f": file}}))
		e.must("query", map[string]any{"sql": "SELECT x FROM m", "tables": map[string]string{"m": h}})
		snaps[caller] = e.ts.snapshotPath(mustResolve(t, e, caller, h).Name)
	}
	own, other := snaps["token:a"], snaps["token:b"]
	dir := t.TempDir()
	result := filepath.Join(e.dir, "t_result.parquet.tmp")
	sb, err := e.ts.sandbox(ctx, dir, []string{own, own + ".wal", result})
	must(t, err)
	defer sb.Close()
	for _, s := range []string{
		"ATTACH " + sqlString(own) + " AS own (READ_ONLY)",
		"COPY (SELECT * FROM own.t) TO " + sqlString(result) + " (FORMAT parquet)",
	} {
		if _, err := sb.ExecContext(ctx, s); err != nil {
			t.Fatalf("the sandbox: %s: %v", s, err)
		}
	}
	for _, s := range []string{
		"ATTACH " + sqlString(other) + " AS other (READ_ONLY)",
		"SELECT * FROM read_blob(" + sqlString(other) + ")",
		"SELECT * FROM glob(" + sqlString(filepath.Dir(own)+"/*") + ")",
		"SELECT * FROM read_blob(" + sqlString(filepath.Dir(own)+"/*") + ")",
		"COPY (SELECT 1) TO " + sqlString(filepath.Join(filepath.Dir(own), "x.parquet")) + " (FORMAT parquet)",
		"COPY (SELECT 1) TO " + sqlString(filepath.Join(e.dir, "t_other.parquet")) + " (FORMAT parquet)",
	} {
		if _, err := sb.ExecContext(ctx, s); err == nil || !strings.Contains(err.Error(), "Permission Error") {
			t.Errorf("the sandbox: %s: %v; want a permission error", s, err)
		}
	}
}
