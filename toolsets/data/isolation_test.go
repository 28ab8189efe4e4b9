package data

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolwire/toolwire/handle"
	"github.com/toolwire/toolwire/tool"
)

// escapes are queries written to read what is not the caller's: another
// caller's table (by its file, its DuckDB name or a glob of the data
// directory), the server's files, DuckDB's catalog and settings. In
// them {B} is the victim's file (its Parquet table in the data
// directory; without one, a file in DuckDB's temporary directory standing
// for its spilled rows), {DIR} the directory of {B}, {BT} the name of
// the victim's table (its file's base name or its DuckDB table), {BH}
// its handle; mine is the attacker's own table.
var escapes = []string{
	// The shape: a CTE named like the file, declared in a
	// sibling scope.
	`SELECT b.* FROM (WITH "{B}" AS (SELECT 1) SELECT 1) a, '{B}' b`,
	`SELECT b.* FROM (WITH "{DIR}/t_*.parquet" AS (SELECT 1) SELECT 1) a, '{DIR}/t_*.parquet' b`,
	`SELECT b.* FROM (WITH "{DIR}/*" AS (SELECT 1) SELECT 1) a, '{DIR}/*' b`,
	// The CTE reused in a subquery of another scope.
	`SELECT (SELECT count(*) FROM "{B}") AS n FROM (WITH "{B}" AS (SELECT 1) SELECT 1) a`,
	`SELECT * FROM (WITH "{B}" AS (SELECT 1) SELECT 1) a WHERE EXISTS (SELECT * FROM "{B}")`,
	`SELECT * FROM mine WHERE x IN (SELECT 1 FROM (WITH "{B}" AS (SELECT 1) SELECT 1)) OR x IN (SELECT 1 FROM "{B}")`,
	// A UNION branch.
	`(WITH "{B}" AS (SELECT 1) SELECT 1, 2) UNION ALL SELECT * FROM "{B}"`,
	`SELECT * FROM "{B}" UNION ALL (WITH "{B}" AS (SELECT 1) SELECT 1, 2)`,
	`SELECT * FROM mine, (WITH "{B}" AS (SELECT 1 AS v) SELECT * FROM "{B}" UNION ALL SELECT 2) u, "{B}"`,
	// A lateral join.
	`SELECT * FROM (WITH "{B}" AS (SELECT 1) SELECT 1) a, LATERAL (SELECT * FROM "{B}") b`,
	`SELECT * FROM mine, LATERAL (SELECT * FROM '{B}') b`,
	`SELECT * FROM (WITH "{B}" AS (SELECT 1) SELECT 1) a JOIN '{B}' b ON true`,
	// CTE order and recursion: a CTE does not see those after it, nor
	// itself unless in the recursive part of a recursive CTE.
	`WITH a AS (SELECT * FROM "{B}"), "{B}" AS (SELECT 1) SELECT * FROM a`,
	`WITH "{B}" AS (SELECT * FROM "{B}") SELECT * FROM "{B}"`,
	`WITH RECURSIVE "{B}" AS (SELECT * FROM "{B}") SELECT * FROM "{B}"`,
	`WITH RECURSIVE "{B}" AS (SELECT * FROM "{B}" UNION ALL SELECT * FROM "{B}" WHERE false) SELECT * FROM "{B}"`,
	`WITH RECURSIVE r AS (SELECT 1 AS n UNION ALL SELECT n + 1 FROM r WHERE n < 3) SELECT * FROM r, "{B}"`,
	// Table functions, plain, hidden in a CTE, a subquery, a lateral
	// join, or called as scalar functions.
	`WITH c AS (SELECT * FROM read_parquet('{B}')) SELECT * FROM c`,
	`SELECT * FROM mine WHERE x IN (SELECT 1 FROM read_csv('{B}'))`,
	`SELECT * FROM mine, LATERAL read_text('{B}')`,
	`SELECT * FROM read_parquet('{DIR}/t_*.parquet')`,
	`SELECT * FROM parquet_scan('{DIR}/*.parquet')`,
	`SELECT * FROM read_csv('{B}')`,
	`SELECT * FROM read_csv_auto('{DIR}/*')`,
	`SELECT * FROM read_text('{DIR}/*')`,
	`SELECT * FROM read_blob('{DIR}/*')`,
	`SELECT * FROM read_json('{B}')`,
	`SELECT * FROM sniff_csv('{B}')`,
	`SELECT * FROM parquet_metadata('{DIR}/*.parquet')`,
	`SELECT * FROM parquet_schema('{DIR}/*.parquet')`,
	`SELECT * FROM parquet_file_metadata('{DIR}/*.parquet')`,
	`SELECT * FROM glob('{DIR}/*')`,
	`SELECT * FROM glob('{DIR}/**')`,
	`SELECT file FROM glob('/tmp/*/*')`,
	`SELECT read_text('{B}') AS v`,
	`SELECT read_blob('{B}') AS v`,
	`SELECT (SELECT string_agg(file, ',') FROM glob('{DIR}/*')) AS v`,
	`SELECT * FROM query_table('{BT}')`,
	`SELECT * FROM query('SELECT * FROM {BT}')`,
	// File names and paths as tables.
	`SELECT * FROM '{B}'`,
	`SELECT * FROM "{B}"`,
	`FROM '{B}'`,
	`SELECT * FROM '{DIR}/t_*.parquet'`,
	`SELECT * FROM '{DIR}/*'`,
	`SELECT * FROM '{DIR}/../` + `{DIRBASE}/*'`,
	`SELECT * FROM mine WHERE EXISTS (SELECT * FROM '{B}')`,
	`SELECT (SELECT count(*) FROM '{B}') AS v`,
	`SELECT * FROM mine ORDER BY (SELECT count(*) FROM '{B}')`,
	`SELECT * FROM mine a JOIN mine b ON a.x = (SELECT count(*) FROM '{B}')`,
	`SELECT * FROM (VALUES ((SELECT count(*) FROM '{B}'))) v(n)`,
	`SELECT * FROM '{B}' PIVOT (count(*) FOR x IN ('1'))`,
	`PIVOT '{B}' ON x USING count(*)`,
	// The victim's table by name, with a schema or a catalog.
	`SELECT * FROM {BT}`,
	`SELECT * FROM tables.{BT}`,
	`SELECT * FROM tables.main.{BT}`,
	`FROM tables.{BT}`,
	`SELECT * FROM memory.main.{BT}`,
	`SELECT b.* FROM (WITH {BT} AS (SELECT 1) SELECT 1) a, {BT} b`,
	`SELECT b.* FROM (WITH tables AS (SELECT 1) SELECT 1) a, tables.{BT} b`,
	// The catalog, the settings and DESCRIBE-like statements.
	`SELECT * FROM information_schema.tables`,
	`SELECT * FROM information_schema.columns`,
	`SELECT * FROM duckdb_tables()`,
	`SELECT * FROM duckdb_columns()`,
	`SELECT * FROM duckdb_views()`,
	`SELECT * FROM duckdb_databases()`,
	`SELECT * FROM duckdb_temporary_files()`,
	`SELECT * FROM duckdb_settings()`,
	`SELECT * FROM pragma_table_info('tables.{BT}')`,
	`SELECT * FROM pragma_storage_info('tables.{BT}')`,
	`SELECT * FROM pragma_database_list`,
	`SELECT * FROM sqlite_master`,
	`SUMMARIZE SELECT * FROM '{B}'`,
	`DESCRIBE '{B}'`,
	`DESCRIBE tables.{BT}`,
	`SHOW ALL TABLES`,
	`SELECT current_setting('allowed_directories') AS a, current_setting('temp_directory') AS t, getvariable('x') AS v`,
	// Not SELECT at all.
	`COPY (SELECT * FROM '{B}') TO '{DIR}/copy.csv'`,
	`ATTACH '{DIR}/x.duckdb' AS x`,
	`CREATE MACRO m() AS TABLE SELECT * FROM '{B}'`,
	`SET enable_external_access = true`,
}

// victim is what one caller holds that another must never read, and the
// strings that would show it: its rows, columns, files and handle.
type victim struct {
	file, dir, table, handle string
	marks                    []string
}

// TestQueryIsolation is acceptance 2 of issue 20: caller A, with a table
// of its own, runs every query of escapes, with the victim B's file and
// table names at hand, on a toolset with a data directory shared by
// replicas and on one with tables in memory. No result, preview or error
// shows B's rows, columns, file names or handle, unless A wrote the
// string itself; no query hangs; A's own query works after.
func TestQueryIsolation(t *testing.T) {
	for _, mode := range []string{"data dir", "memory"} {
		t.Run(mode, func(t *testing.T) {
			cfg := Config{}
			if mode == "data dir" {
				cfg.DataDir = t.TempDir()
			}
			e := newEnv(t, cfg)
			v := makeVictim(t, e)
			a := tool.WithCaller(context.Background(), tool.Caller{ID: "token:a"})
			e.ctx = a
			e.write("a.csv", "x,y\n1,2\n3,4\n")
			mine, _ := e.load("a.csv")
			fill := strings.NewReplacer("{B}", v.file, "{DIR}", v.dir, "{DIRBASE}", filepath.Base(v.dir), "{BT}", v.table, "{BH}", v.handle)
			for _, shape := range escapes {
				sql := fill.Replace(shape)
				t.Run(shape, func(t *testing.T) {
					ctx, cancel := context.WithTimeout(a, time.Minute)
					defer cancel()
					e.ctx = ctx
					defer func() { e.ctx = a }()
					out, err := e.call("query", map[string]any{"sql": sql, "tables": map[string]string{"mine": mine}})
					seen := out
					if err != nil {
						seen = err.Error()
					} else {
						h, _ := tableOf(t, out)
						seen += e.must("head", map[string]any{"table": h, "n": 500})
					}
					for _, m := range v.marks {
						if strings.Contains(seen, m) && !strings.Contains(strings.ToLower(sql), strings.ToLower(m)) {
							t.Fatalf("query %s shows the other caller's %q:\n%s", sql, m, seen)
						}
					}
				})
			}
			out := e.must("query", map[string]any{"sql": "SELECT sum(x) AS s FROM mine", "tables": map[string]string{"mine": mine}})
			if _, info := tableOf(t, out); info.Preview != "s\n4\n" {
				t.Fatalf("A's own query after the escapes: %q", info.Preview)
			}
		})
	}
}

// makeVictim gives caller B a table with its own column names and
// values, made by a query from a CSV file that is then removed: the
// server alone holds it.
func makeVictim(t *testing.T, e *env) victim {
	t.Helper()
	b := tool.WithCaller(context.Background(), tool.Caller{ID: "token:b"})
	e.ctx = b
	e.write("b.csv", "seed\nb\n")
	seed, _ := e.load("b.csv")
	out := e.must("query", map[string]any{
		"sql":    "SELECT 'SECRET-B-7f3a' AS secret_b_9c2e, 73311337 AS kb_9c2e FROM seed",
		"tables": map[string]string{"seed": seed},
	})
	h, _ := tableOf(t, out)
	e.must("release", map[string]any{"table": seed})
	must(t, os.Remove(filepath.Join(e.dir, "b.csv")))
	tb, err := handle.Resolve[*Table](b, e.ts.store, h)
	must(t, err)
	v := victim{table: tb.Name, handle: h, marks: []string{"SECRET-B-7f3a", "secret_b_9c2e", "73311337", "kb_9c2e", tb.Name, h}}
	if tb.Parquet {
		v.file, v.dir = e.ts.parquetPath(tb.Name), e.ts.dataDir
		return v
	}
	// A table in memory has a file once a query read it: its copy for
	// queries (snapshot), next to the other callers' copies.
	e.must("query", map[string]any{"sql": "SELECT * FROM v", "tables": map[string]string{"v": h}})
	v.file = e.ts.snapshotPath(tb.Name)
	v.dir = filepath.Dir(v.file)
	_, err = os.Stat(v.file)
	must(t, err)
	return v
}

// TestFIFO is issue 20's item 9: a FIFO in an allowed directory is never
// opened. load_csv refuses it (and a socket), naming what it is; query
// cannot reach it whatever its shape; the next call is answered. A call
// that blocks on the FIFO is caught by a deadline of 30 s (the test then
// opens the FIFO's other end to free it).
func TestFIFO(t *testing.T) {
	e := newEnv(t, Config{})
	fifo := filepath.Join(e.dir, "pipe.csv")
	must(t, syscall.Mkfifo(fifo, 0o644))
	e.write("a.csv", "x\n1\n")
	mine, _ := e.load("a.csv")
	call := func(name string, args map[string]any) (string, error) {
		t.Helper()
		type result struct {
			out string
			err error
		}
		done := make(chan result, 1)
		go func() {
			b, _ := json.Marshal(args)
			res, err := e.reg.Call(e.ctx, name, b)
			if err != nil {
				done <- result{err: err}
				return
			}
			done <- result{out: res.ForModel().Text}
		}()
		select {
		case r := <-done:
			return r.out, r.err
		case <-time.After(30 * time.Second):
			// Free the blocked reader: each open for writing, closed at
			// once, reads as the end of the file; DuckDB may open it
			// again.
			for freed := false; !freed; {
				if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
					w.Close()
				}
				select {
				case <-done:
					freed = true
				case <-time.After(100 * time.Millisecond):
				}
			}
			t.Errorf("%s(%v) blocked on the FIFO", name, args)
			return "", errors.New("blocked")
		}
	}
	if _, err := call("load_csv", map[string]any{"path": "pipe.csv"}); err == nil ||
		!strings.Contains(err.Error(), fifo+" is not a regular file (a named pipe): pass the path of a regular file") {
		t.Errorf("load_csv of a FIFO: %v", err)
	}
	sock := filepath.Join(e.dir, "sock.csv")
	l, err := net.Listen("unix", sock)
	must(t, err)
	defer l.Close()
	if _, err := call("load_csv", map[string]any{"path": "sock.csv"}); err == nil ||
		!strings.Contains(err.Error(), sock+" is not a regular file (a socket)") {
		t.Errorf("load_csv of a socket: %v", err)
	}
	for _, sql := range []string{
		`SELECT b.* FROM (WITH "pipe.csv" AS (SELECT 1) SELECT 1) a, 'pipe.csv' b`,
		`SELECT b.* FROM (WITH "` + fifo + `" AS (SELECT 1) SELECT 1) a, '` + fifo + `' b`,
		`SELECT * FROM '` + fifo + `'`,
		`SELECT * FROM read_csv('` + fifo + `')`,
		`SELECT * FROM read_text('` + e.dir + `/*')`,
	} {
		if out, err := call("query", map[string]any{"sql": sql, "tables": map[string]string{"mine": mine}}); err == nil {
			t.Errorf("query %s read the FIFO: %s", sql, out)
		}
	}
	for _, tool := range []string{"save_csv", "save_parquet"} {
		if _, err := call(tool, map[string]any{"table": mine, "path": "pipe.csv"}); err == nil ||
			!strings.Contains(err.Error(), "it is not a regular file (a named pipe)") {
			t.Errorf("%s over a FIFO: %v", tool, err)
		}
	}
	out, err := call("query", map[string]any{"sql": "SELECT x + 1 AS y FROM mine", "tables": map[string]string{"mine": mine}})
	if err != nil {
		t.Fatal(err)
	}
	if _, info := tableOf(t, out); info.Preview != "y\n2\n" {
		t.Fatalf("the call after: %q", info.Preview)
	}
}

// TestLockDown checks DuckDB's own guards on the toolset's database,
// whatever SQL reaches it: a file outside the allowed directories cannot
// be read (enable_external_access), one inside can (allowed_directories),
// and no setting can be changed (lock_configuration).
func TestLockDown(t *testing.T) {
	e := newEnv(t, Config{})
	outside := filepath.Join(t.TempDir(), "outside.csv")
	must(t, os.WriteFile(outside, []byte("p\nsecret\n"), 0o644))
	inside := e.write("inside.csv", "p\nfine\n")
	ctx := context.Background()
	var got string
	if err := e.ts.db.QueryRowContext(ctx, "SELECT content FROM read_text("+sqlString(outside)+")").Scan(&got); err == nil ||
		!strings.Contains(err.Error(), "Permission Error") {
		t.Fatalf("reading a file outside the allowed directories: %q, %v", got, err)
	}
	if err := e.ts.db.QueryRowContext(ctx, "SELECT content FROM read_text("+sqlString(inside)+")").Scan(&got); err != nil || got != "p\nfine\n" {
		t.Fatalf("reading a file inside: %q, %v", got, err)
	}
	for _, s := range []string{
		"SET enable_external_access = true",
		"SET allowed_directories = ['/']",
		"SET lock_configuration = false",
		"SET threads = 1",
		"SET memory_limit = '64GiB'",
		"SET temp_directory = '/tmp'",
		"SET autoload_known_extensions = true",
		"RESET memory_limit",
	} {
		if _, err := e.ts.db.ExecContext(ctx, s); err == nil || !strings.Contains(err.Error(), "configuration has been locked") {
			t.Errorf("%s after Open: %v, want the configuration locked", s, err)
		}
	}
}

// TestSandbox checks the database a query runs in (runQuery), without
// the SQL check in front: it reads the caller's own files and its
// directory, nothing else (allowed_paths, enable_external_access); its
// settings are locked and take the toolset's bounds.
func TestSandbox(t *testing.T) {
	e := newEnv(t, Config{DataDir: t.TempDir(), MemoryLimit: 300 << 20})
	e.write("a.csv", "x\n1\n")
	e.write("b.csv", "secret\nSECRET-B\n")
	a, _ := e.load("a.csv")
	e.ctx = tool.WithCaller(context.Background(), tool.Caller{ID: "token:b"})
	b, _ := e.load("b.csv")
	ctx := context.Background()
	own := e.ts.parquetPath(mustResolve(t, e, "token:test", a).Name)
	other := e.ts.parquetPath(mustResolve(t, e, "token:b", b).Name)
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "mine.csv"), []byte("m\n1\n"), 0o644))
	sb, err := e.ts.sandbox(ctx, dir, []string{own})
	must(t, err)
	defer sb.Close()
	read := func(from string) (string, error) {
		var s string
		err := sb.QueryRowContext(ctx, "SELECT CAST(count(*) AS VARCHAR) FROM "+from).Scan(&s)
		return s, err
	}
	for _, from := range []string{sqlString(own), "read_csv(" + sqlString(filepath.Join(dir, "mine.csv")) + ")"} {
		if n, err := read(from); err != nil || n != "1" {
			t.Fatalf("the sandbox reading %s: %q, %v", from, n, err)
		}
	}
	for _, from := range []string{
		sqlString(other),
		sqlString(filepath.Join(e.ts.dataDir, "*.parquet")),
		"glob(" + sqlString(e.ts.dataDir+"/*") + ")",
		"read_text(" + sqlString(filepath.Join(e.dir, "a.csv")) + ")",
		"read_text(" + sqlString(own+"/../"+filepath.Base(other)) + ")",
		"read_text(" + sqlString(dir+"/../"+filepath.Base(dir)+"/../*/*") + ")",
	} {
		if n, err := read(from); err == nil || !strings.Contains(err.Error(), "Permission Error") {
			t.Errorf("the sandbox reading %s: %q, %v; want a permission error", from, n, err)
		}
	}
	for _, s := range []string{"SET enable_external_access = true", "SET allowed_paths = ['/']", "SET threads = 1", "SET memory_limit = '64GiB'"} {
		if _, err := sb.ExecContext(ctx, s); err == nil || !strings.Contains(err.Error(), "configuration has been locked") {
			t.Errorf("%s in the sandbox: %v, want the configuration locked", s, err)
		}
	}
	var limit string
	must(t, sb.QueryRowContext(ctx, "SELECT current_setting('memory_limit')").Scan(&limit))
	if limit != "300.0 MiB" {
		t.Fatalf("the sandbox's memory limit is %s, not the toolset's 300 MiB", limit)
	}
}

func mustResolve(t *testing.T, e *env, caller, h string) *Table {
	t.Helper()
	tb, err := handle.Resolve[*Table](tool.WithCaller(context.Background(), tool.Caller{ID: caller}), e.ts.store, h)
	must(t, err)
	return tb
}

// TestQueryErrorsHideFiles: an error about the caller's own table does
// not show the server's files: its file in the data directory, the
// query's temporary directory.
func TestQueryErrorsHideFiles(t *testing.T) {
	e := newEnv(t, Config{DataDir: t.TempDir()})
	e.write("a.csv", "x\n1\n")
	h, _ := e.load("a.csv")
	tb := mustResolve(t, e, "token:test", h)
	must(t, os.Remove(e.ts.parquetPath(tb.Name)))
	_, err := e.call("query", map[string]any{"sql": "SELECT * FROM a", "tables": map[string]string{"a": h}})
	if err == nil || strings.Contains(err.Error(), e.ts.dataDir) || strings.Contains(err.Error(), tb.Name) ||
		strings.Contains(err.Error(), e.ts.tmpDir) || !strings.Contains(err.Error(), "(a server file)") {
		t.Fatalf("query of a table whose file is gone: %v", err)
	}
}

// TestQueryScopes checks checkQuery's scoping of common table
// expressions against DuckDB's, as measured: where DuckDB binds a name to
// a CTE the query passes; where it would read a table or a file of that
// name instead, the query is refused, naming it.
func TestQueryScopes(t *testing.T) {
	e := newEnv(t, Config{})
	conn, err := e.ts.db.Conn(context.Background())
	must(t, err)
	defer conn.Close()
	cases := []struct{ sql, refused string }{
		{`WITH c AS (SELECT * FROM t) SELECT * FROM c`, ""},
		{`WITH C AS (SELECT 1) SELECT * FROM c`, ""}, // DuckDB ignores case
		{`WITH a AS (SELECT 1), b AS (SELECT * FROM a) SELECT * FROM b`, ""},
		{`WITH c AS (SELECT 1) SELECT * FROM (SELECT * FROM (SELECT * FROM c))`, ""},
		{`WITH c AS (SELECT 1) SELECT (SELECT count(*) FROM c) FROM t WHERE EXISTS (SELECT * FROM c)`, ""},
		{`WITH c AS (SELECT 1) SELECT * FROM c UNION ALL SELECT * FROM c`, ""}, // a WITH on a set operation covers both sides
		{`WITH c AS (SELECT 1) SELECT * FROM t, LATERAL (SELECT * FROM c)`, ""},
		{`WITH RECURSIVE r AS (SELECT 1 AS n UNION ALL SELECT n + 1 FROM r WHERE n < 3) SELECT * FROM r`, ""},
		{`WITH c AS MATERIALIZED (SELECT 1) SELECT * FROM c`, ""},
		{`SELECT b.* FROM (WITH "x.csv" AS (SELECT 1) SELECT 1) a, 'x.csv' b`, "x.csv"},
		{`SELECT * FROM (WITH c AS (SELECT 1) SELECT 1) a, LATERAL (SELECT * FROM c)`, "c"},
		{`SELECT (SELECT count(*) FROM c) FROM (WITH c AS (SELECT 1) SELECT 1)`, "c"},
		{`(WITH c AS (SELECT 1) SELECT 1) UNION ALL SELECT * FROM c`, "c"},
		{`SELECT * FROM c UNION ALL (WITH c AS (SELECT 1) SELECT 1)`, "c"},
		{`WITH a AS (SELECT * FROM b), b AS (SELECT 1) SELECT * FROM a`, "b"},
		{`WITH c AS (SELECT * FROM c) SELECT * FROM c`, "c"},
		{`WITH RECURSIVE c AS (SELECT * FROM c) SELECT * FROM c`, "c"},
		{`WITH RECURSIVE c AS (SELECT * FROM c UNION ALL SELECT * FROM c) SELECT * FROM c`, "c"},
		{`SELECT * FROM (WITH c AS (SELECT 1) SELECT * FROM c) x, c`, "c"},
		{`WITH c AS (SELECT 1) SELECT * FROM main.c`, "main.c"},
	}
	for _, c := range cases {
		t.Run(c.sql, func(t *testing.T) {
			err := checkQuery(context.Background(), conn, c.sql, []string{"t"})
			switch {
			case c.refused == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.refused != "" && (err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%q is not one of them", c.refused))):
				t.Fatalf("%v; want %q refused", err, c.refused)
			}
		})
	}
}
