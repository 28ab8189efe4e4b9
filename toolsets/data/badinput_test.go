package data

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCSVInputs loads every awkward CSV of issue 13: what DuckDB can read
// correctly loads with the right rows; what it cannot is an error that
// names the problem and the fix, and leaves no table behind.
func TestCSVInputs(t *testing.T) {
	e := newEnv(t, Config{})
	cases := []struct {
		name, content string
		encoding      string
		rows          int64
		columns       string
		err           string
	}{
		{name: "bom.csv", content: "\ufeffa,b\n1,2\n", rows: 1, columns: "a,b"},
		{name: "crlf.csv", content: "a,b\r\n1,2\r\n3,4\r\n", rows: 2, columns: "a,b"},
		{name: "mixed-endings.csv", content: "a,b\r\n1,2\n3,4\r\n", rows: 2, columns: "a,b"},
		{name: "quoted-newline.csv", content: "a,b\n\"x\ny\",2\n\"p, q\",3\n", rows: 2, columns: "a,b"},
		{name: "semicolons.csv", content: "a;b\n1;2\n", rows: 1, columns: "a,b"},
		{name: "header-only.csv", content: "a,b,c\n", rows: 0, columns: "a,b,c"},
		{name: "latin1.csv", content: "name,n\ncaf\xe9,1\n", encoding: "latin-1", rows: 1, columns: "name,n"},
		{name: "latin1-as-utf8.csv", content: "name,n\ncaf\xe9,1\n", err: `not utf-8 encoded.: pass its encoding, e.g. "encoding": "latin-1"`},
		{name: "empty.csv", content: "", err: "empty.csv is empty: there is nothing to load"},
		{name: "short-row.csv", content: "a,b,c\n1,2,3\n4,5\n6,7,8,9\n", err: "Line: 3 Expected Number of Columns: 3 Found: 2: every row must have as many fields as the header; fix the file"},
		{name: "short-last-row.csv", content: "a,b,c\n1,2,3\n4,5,6\n7,8\n", err: "Line: 4 Expected Number of Columns: 3 Found: 2"},
		{name: "long-row.csv", content: "a,b,c\n1,2,3\n4,5,6\n7,8,9,10\n", err: "Line: 4 Expected Number of Columns: 3 Found: 4"},
		{name: "ragged-semicolons.csv", content: "a;b;c\n1;2;3\n4;5\n", err: "Expected Number of Columns: 3 Found: 2"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e.write(c.name, c.content)
			args := map[string]any{"path": c.name}
			if c.encoding != "" {
				args["encoding"] = c.encoding
			}
			before := e.tables()
			out, err := e.call("load_csv", args)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("load_csv: %q, %v; want an error containing %q", out, err, c.err)
				}
				if after := e.tables(); after != before {
					t.Fatalf("a failed load left tables behind: %d before, %d after", before, after)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			_, info := tableOf(t, out)
			if info.Rows != c.rows || strings.Join(info.Columns, ",") != c.columns {
				t.Fatalf("loaded %d rows of %v, want %d of %s", info.Rows, info.Columns, c.rows, c.columns)
			}
		})
	}
}

// tables counts the DuckDB tables the toolset holds.
func (e *env) tables() int {
	e.t.Helper()
	var n int
	if err := e.ts.db.QueryRowContext(context.Background(), "SELECT count(*) FROM duckdb_tables()").Scan(&n); err != nil {
		e.t.Fatal(err)
	}
	return n
}

// TestBadSQL runs every kind of query issue 13 names as bad: writes,
// attaches, file reads, extension installs; each is refused with a reason,
// before it runs, and the table is unchanged.
func TestBadSQL(t *testing.T) {
	e := newEnv(t, Config{})
	e.write("a.csv", "x,y\n1,2\n3,4\n")
	h, _ := e.load("a.csv")
	tables := map[string]string{"t": h}
	cases := []struct{ sql, err string }{
		{"INSERT INTO t VALUES (5, 6)", "query runs one read-only SELECT statement"},
		{"DELETE FROM t", "query runs one read-only SELECT statement"},
		{"UPDATE t SET x = 0", "query runs one read-only SELECT statement"},
		{"DROP TABLE t", "query runs one read-only SELECT statement"},
		{"CREATE TABLE u AS SELECT * FROM t", "query runs one read-only SELECT statement"},
		{"ATTACH 'other.db' AS o", "query runs one read-only SELECT statement"},
		{"COPY t TO 'out.csv'", "query runs one read-only SELECT statement"},
		{"INSTALL httpfs", "query runs one read-only SELECT statement"},
		{"LOAD httpfs", "query runs one read-only SELECT statement"},
		{"SET enable_external_access = true", "query runs one read-only SELECT statement"},
		{"PRAGMA database_list", "query runs one read-only SELECT statement"},
		{"SELECT * FROM read_csv('a.csv')", "read_csv() is not allowed"},
		{"SELECT * FROM read_text('/etc/passwd')", "read_text() is not allowed"},
		{"SELECT * FROM read_parquet('https://example.com/x.parquet')", "read_parquet() is not allowed"},
		{"SELECT * FROM 'a.csv'", `"a.csv" is not one of them`},
		{"SELECT * FROM '/etc/passwd'", `"/etc/passwd" is not one of them`},
		{"SELECT * FROM t, (SELECT * FROM glob('*'))", "glob() is not allowed"},
		{"SELECT * FROM duckdb_tables()", "duckdb_tables() is not allowed"},
		{"SELECT * FROM main.t", `"main.t" is not one of them`},
		{"SELECT * FROM other", `"other" is not one of them`},
		{"WITH c AS (SELECT * FROM read_csv('a.csv')) SELECT * FROM c", "read_csv() is not allowed"},
		{"SELECT 1; SELECT 2", "query runs one SELECT statement; the SQL has 2"},
		{"SELEC 1", "the SQL does not parse"},
		{"", "the SQL is empty"},
		{"SELECT nope FROM t", `query failed: Binder Error: Referenced column "nope" not found`},
	}
	for _, c := range cases {
		t.Run(c.sql, func(t *testing.T) {
			out, err := e.call("query", map[string]any{"sql": c.sql, "tables": tables})
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Fatalf("query %q: %q, %v; want an error containing %q", c.sql, out, err, c.err)
			}
		})
	}
	if _, err := e.call("query", map[string]any{"sql": "SELECT 1", "tables": map[string]string{"bad name": h}}); err == nil ||
		!strings.Contains(err.Error(), `"bad name" cannot name a table in SQL`) {
		t.Fatalf("a bad table name: %v", err)
	}
	if out := e.must("head", map[string]any{"table": h}); out != "x,y\n1,2\n3,4\n" {
		t.Fatalf("the table after the refused queries: %q", out)
	}
	// What is allowed: a SELECT over the tables and its own CTEs.
	out := e.must("query", map[string]any{"sql": "WITH c AS (SELECT x + y AS s FROM t) SELECT sum(s) AS total FROM c;", "tables": tables})
	if _, info := tableOf(t, out); info.Preview != "total\n10\n" {
		t.Fatalf("query preview %q", info.Preview)
	}
	// A comment to the end of the line does not swallow what the server
	// adds after the SQL (the rows bound).
	out = e.must("query", map[string]any{"sql": "SELECT sum(x) AS total FROM t -- the first column", "tables": tables})
	if _, info := tableOf(t, out); info.Preview != "total\n4\n" {
		t.Fatalf("query preview %q", info.Preview)
	}
}

// TestPaths refuses paths outside the allowed directories and symlinks
// that lead out, for reading and for writing.
func TestPaths(t *testing.T) {
	e := newEnv(t, Config{})
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.csv")
	if err := os.WriteFile(secret, []byte("p\nsecret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.write("ok.csv", "a\n1\n")
	must(t, os.Symlink(secret, filepath.Join(e.dir, "link.csv")))
	must(t, os.Symlink(outside, filepath.Join(e.dir, "outdir")))
	must(t, os.Mkdir(filepath.Join(e.dir, "sub"), 0o755))
	must(t, os.Symlink(filepath.Join(e.dir, "ok.csv"), filepath.Join(e.dir, "sub", "inside-link.csv")))
	h, _ := e.load("ok.csv")

	reads := []struct{ path, err string }{
		{secret, "is outside the directories this server may use"},
		{"../" + filepath.Base(outside) + "/secret.csv", "is outside the directories this server may use"},
		{"link.csv", "is a symlink to " + secret + ", outside the directories"},
		{"outdir/secret.csv", "outside the directories"},
		{"missing.csv", "there is no file " + filepath.Join(e.dir, "missing.csv")},
		{"sub", "is a directory: pass the path of a file in it"},
		{"", "the path is empty"},
		{"/etc/passwd", "is outside the directories"},
	}
	for _, c := range reads {
		t.Run("read "+c.path, func(t *testing.T) {
			_, err := e.call("load_csv", map[string]any{"path": c.path})
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Fatalf("load_csv(%q): %v, want %q", c.path, err, c.err)
			}
		})
	}
	// A symlink that stays inside is fine.
	e.load("sub/inside-link.csv")

	must(t, os.Symlink(secret, filepath.Join(e.dir, "out-link.csv")))
	writes := []struct{ path, err string }{
		{filepath.Join(outside, "x.csv"), "is outside the directories"},
		{"../x.csv", "is outside the directories"},
		{"outdir/x.csv", "its directory is a symlink to " + outside},
		{"out-link.csv", "it is a symlink"},
		{"nodir/x.csv", "does not exist: save into an existing directory"},
		{"sub", "it is a directory"},
	}
	for _, c := range writes {
		for _, tool := range []string{"save_csv", "save_parquet"} {
			t.Run(tool+" "+c.path, func(t *testing.T) {
				_, err := e.call(tool, map[string]any{"table": h, "path": c.path})
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("%s(%q): %v, want %q", tool, c.path, err, c.err)
				}
			})
		}
	}
	if b, _ := os.ReadFile(secret); string(b) != "p\nsecret\n" {
		t.Fatalf("the file outside was changed: %q", b)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 1 {
		t.Fatalf("files written outside: %v", ents)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestMemoryBound: a load larger than the bound fails clearly and leaves
// nothing behind; smaller tables evict the least recently used, whose
// handles then read as expired.
func TestMemoryBound(t *testing.T) {
	e := newEnv(t, Config{MaxBytes: 4000})
	var big, small strings.Builder
	big.WriteString("id,name\n")
	for i := range 500 {
		big.WriteString(strings.Repeat("x", 10) + "," + string(rune('a'+i%26)) + "\n")
	}
	small.WriteString("id,v\n")
	for i := range 50 {
		small.WriteString("k" + string(rune('a'+i%26)) + ",1\n")
	}
	e.write("big.csv", big.String())
	e.write("small.csv", small.String())
	before := e.tables()
	_, err := e.call("load_csv", map[string]any{"path": "big.csv"})
	if err == nil || !strings.Contains(err.Error(), "the table is too large to keep") || !strings.Contains(err.Error(), "bound 4000 bytes") {
		t.Fatalf("oversized load: %v", err)
	}
	if e.tables() != before {
		t.Fatal("the oversized load left a table behind")
	}
	first, _ := e.load("small.csv")
	var last string
	for range 4 { // each about 1.3 kB: the first goes
		last, _ = e.load("small.csv")
	}
	if _, err := e.call("describe", map[string]any{"table": first}); err == nil ||
		err.Error() != "handle "+first+" was dropped to make room for newer ones (the server's memory bound); load the file again (load_csv)" {
		t.Fatalf("evicted table: %v", err)
	}
	e.must("describe", map[string]any{"table": last})
	if n := e.tables(); n > 3 {
		t.Fatalf("%d DuckDB tables held under a bound for 3", n)
	}
}
