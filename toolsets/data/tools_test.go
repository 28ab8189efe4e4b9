package data

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/handle"
	"github.com/toolwire/toolwire/tool"
)

const sales = `date,region,product,units,price
2024-01-02,north,apple,3,1.5
2024-01-02,south,pear,,2.0
2024-01-03,north,pear,5,2.0
2024-01-03,,apple,2,1.5
2024-01-04,south,apple,7,1.25
`

func TestTools(t *testing.T) {
	e := newEnv(t, Config{TTL: time.Hour})
	e.write("sales.csv", sales)
	h, info := e.load("sales.csv")
	if info.Rows != 5 || info.Missing != 2 || strings.Join(info.Columns, ",") != "date,region,product,units,price" {
		t.Fatalf("load summary %+v", info)
	}
	load, _ := e.reg.Lookup("load_csv")
	if d := load.Info().Description; !strings.HasSuffix(d, "Tables expire after 1 hour unused, or sooner when the server needs the room (least recently used first).") {
		t.Fatalf("load_csv description does not state the lifetime: %q", d)
	}
	head, _ := e.reg.Lookup("head")
	if strings.Contains(head.Info().Description, "expire") {
		t.Fatalf("head creates no tables but says %q", head.Info().Description)
	}
	if out := e.must("head", map[string]any{"table": h, "n": 2}); out != "date,region,product,units,price\n2024-01-02,north,apple,3,1.5\n2024-01-02,south,pear,,2\n" {
		t.Fatalf("head: %q", out)
	}
	var d Description
	must(t, json.Unmarshal([]byte(e.must("describe", map[string]any{"table": h})), &d))
	units := d.Columns[3]
	if units.Name != "units" || units.Count != 4 || units.Missing != 1 || *units.Min != "2" || *units.Max != "7" || *units.Mean != 4.25 {
		t.Fatalf("describe units: %+v", units)
	}
	if region := d.Columns[1]; region.Missing != 1 || *region.Top != "north" && *region.Top != "south" {
		t.Fatalf("describe region: %+v", region)
	}

	clean, ci := tableOf(t, e.must("drop_missing", map[string]any{"table": h}))
	if ci.Rows != 3 || ci.Missing != 0 || ci.Note != "dropped 2 of 5 rows" {
		t.Fatalf("drop_missing: %+v", ci)
	}
	_, ci = tableOf(t, e.must("drop_missing", map[string]any{"table": h, "columns": []string{"units"}}))
	if ci.Rows != 4 {
		t.Fatalf("drop_missing(units): %+v", ci)
	}
	for _, c := range []struct {
		op    string
		value any
		rows  int64
	}{{"gt", 2, 3}, {"eq", "north", 0}, {"ge", "2.0", 2}, {"contains", "pp", 0}, {"is_missing", nil, 1}, {"not_missing", nil, 4}} {
		col := "units"
		if c.op == "eq" || c.op == "contains" {
			col = "product"
		}
		if c.op == "ge" {
			col = "price"
		}
		args := map[string]any{"table": h, "column": col, "op": c.op}
		if c.value != nil {
			args["value"] = c.value
		}
		_, fi := tableOf(t, e.must("filter", args))
		want := c.rows
		if c.op == "contains" {
			want = 3 // apple
		}
		if fi.Rows != want {
			t.Errorf("filter %s %s %v: %d rows, want %d", col, c.op, c.value, fi.Rows, want)
		}
	}
	if _, err := e.call("filter", map[string]any{"table": h, "column": "units", "op": "gt", "value": "many"}); err == nil ||
		!strings.Contains(err.Error(), `the value "many" is not a BIGINT, the type of column units`) {
		t.Fatalf("filter with a bad value: %v", err)
	}
	if _, err := e.call("filter", map[string]any{"table": h, "column": "colour", "op": "eq", "value": 1}); err == nil ||
		!strings.Contains(err.Error(), `the table has no column "colour"; its columns are: date, region, product, units, price`) {
		t.Fatalf("filter on a missing column: %v", err)
	}
	sel, si := tableOf(t, e.must("select", map[string]any{"table": clean, "columns": []string{"product", "units"}}))
	if strings.Join(si.Columns, ",") != "product,units" {
		t.Fatalf("select: %+v", si)
	}
	sorted, _ := tableOf(t, e.must("sort", map[string]any{"table": sel, "by": []string{"units"}, "descending": true}))
	if out := e.must("head", map[string]any{"table": sorted}); out != "product,units\napple,7\npear,5\napple,3\n" {
		t.Fatalf("sort: %q", out)
	}
	g, _ := tableOf(t, e.must("group_by", map[string]any{"table": h, "by": []string{"product"},
		"aggregations": []map[string]string{{"column": "units", "function": "sum"}, {"column": "date", "function": "count"}}}))
	if out := e.must("head", map[string]any{"table": g}); out != "product,sum_units,count_date\napple,12,3\npear,5,2\n" {
		t.Fatalf("group_by: %q", out)
	}
	if _, err := e.call("group_by", map[string]any{"table": h, "by": []string{"product"},
		"aggregations": []map[string]string{{"column": "region", "function": "mean"}}}); err == nil || !strings.Contains(err.Error(), "it is VARCHAR, not a number") {
		t.Fatalf("mean of text: %v", err)
	}
	var saved Saved
	must(t, json.Unmarshal([]byte(e.must("save_csv", map[string]any{"table": sorted, "path": "out/../top.csv"})), &saved))
	if b, _ := os.ReadFile(filepath.Join(e.dir, "top.csv")); string(b) != "product,units\napple,7\npear,5\napple,3\n" || saved.Rows != 3 {
		t.Fatalf("save_csv wrote %q (%+v)", b, saved)
	}
	e.must("save_parquet", map[string]any{"table": clean, "path": "clean.parquet"})
	// What was saved loads back through the toolset's own engine.
	var n int
	must(t, e.ts.db.QueryRow("SELECT count(*) FROM read_parquet(?)", filepath.Join(e.dir, "clean.parquet")).Scan(&n))
	if n != 3 {
		t.Fatalf("the Parquet file has %d rows", n)
	}
	if ents, _ := os.ReadDir(e.dir); len(ents) != 3 {
		t.Fatalf("left-over files: %v", ents)
	}

	before := e.tables()
	e.must("release", map[string]any{"table": clean})
	if e.tables() != before-1 {
		t.Fatal("release kept the DuckDB table")
	}
	if _, err := e.call("head", map[string]any{"table": clean}); err == nil || err.Error() != "handle "+clean+" was released; load the file again (load_csv)" {
		t.Fatalf("a released table: %v", err)
	}
	if _, err := e.call("head", map[string]any{"table": "fil_" + clean[4:]}); err == nil || !strings.Contains(err.Error(), "is a fil_ handle, not a table handle") {
		t.Fatalf("a handle of another kind: %v", err)
	}
}

// TestCallers: one caller cannot read, describe or release another's
// table; to B, A's handle reads exactly like one that never existed.
func TestCallers(t *testing.T) {
	e := newEnv(t, Config{})
	e.write("sales.csv", sales)
	h, _ := e.load("sales.csv")
	a := e.ctx
	e.ctx = tool.WithCaller(context.Background(), tool.Caller{ID: "token:b"})
	unknown := handle.NewID((*Table)(nil).HandleKind())
	for _, name := range []string{"head", "describe", "drop_missing", "release", "save_csv"} {
		args := map[string]any{"table": h, "path": "b.csv"}
		if name != "save_csv" {
			delete(args, "path")
		}
		_, err := e.call(name, args)
		args["table"] = unknown
		_, errUnknown := e.call(name, args)
		if err == nil || !errors.Is(err, handle.ErrExpired) || strings.ReplaceAll(err.Error(), h, unknown) != errUnknown.Error() {
			t.Fatalf("B's %s on A's table: %v (unknown handle: %v)", name, err, errUnknown)
		}
	}
	if _, err := e.call("query", map[string]any{"sql": "SELECT * FROM t", "tables": map[string]string{"t": h}}); !errors.Is(err, handle.ErrExpired) {
		t.Fatalf("B's query on A's table: %v", err)
	}
	e.ctx = a
	e.must("describe", map[string]any{"table": h})
}

// TestSharedDataDir: two toolsets (replicas) with one data directory and
// one handle store serve each other's tables, kept as Parquet files.
func TestSharedDataDir(t *testing.T) {
	store := &handle.Memory{}
	dataDir := t.TempDir()
	e1 := newEnv(t, Config{DataDir: dataDir, Store: store})
	e2 := newEnv(t, Config{Dirs: []string{e1.dir}, DataDir: dataDir, Store: store})
	e1.write("sales.csv", sales)
	h, _ := e1.load("sales.csv")
	must(t, e1.ts.Close())
	clean, ci := tableOf(t, e2.must("drop_missing", map[string]any{"table": h}))
	if ci.Rows != 3 {
		t.Fatalf("drop_missing on the second replica: %+v", ci)
	}
	e2.must("describe", map[string]any{"table": h})
	e2.must("save_csv", map[string]any{"table": clean, "path": "clean.csv"})
	if b, err := os.ReadFile(filepath.Join(e1.dir, "clean.csv")); err != nil || strings.Count(string(b), "\n") != 4 {
		t.Fatalf("saved %q, %v", b, err)
	}
	files, _ := filepath.Glob(filepath.Join(dataDir, "*.parquet"))
	if len(files) != 2 {
		t.Fatalf("data directory holds %v, want 2 tables", files)
	}
	e2.must("release", map[string]any{"table": clean})
	if files, _ := filepath.Glob(filepath.Join(dataDir, "*.parquet")); len(files) != 1 {
		t.Fatalf("after release the data directory holds %v", files)
	}
	// A table nobody used for twice the lifetime is swept when the next
	// one is made; one in use stays, however old its file.
	files, _ = filepath.Glob(filepath.Join(dataDir, "*.parquet"))
	b, err := os.ReadFile(files[0])
	must(t, err)
	stray := filepath.Join(dataDir, "t_stray.parquet")
	must(t, os.WriteFile(stray, b, 0o644))
	old := time.Now().Add(-3 * store.EntryTTL())
	must(t, os.Chtimes(stray, old, old))
	must(t, os.Chtimes(files[0], old, old))
	e2.must("filter", map[string]any{"table": h, "column": "units", "op": "not_missing"})
	if _, err := os.Stat(stray); err == nil {
		t.Fatal("an unused table was not swept")
	}
	e2.must("head", map[string]any{"table": h})
	if _, err := Open(context.Background(), Config{Store: store}); err == nil || !strings.Contains(err.Error(), "needs a data directory") {
		t.Fatalf("a shared store without a data directory: %v", err)
	}
}

// TestLoadedFileChanges: a table load_csv made reads its file as it was
// loaded; once the file changes or goes, the table's tools say so and
// what to do, while the tables made from it live on.
func TestLoadedFileChanges(t *testing.T) {
	tests := []struct {
		name   string
		change func(path string) error
		want   string
	}{
		{"rewritten", func(p string) error { return os.WriteFile(p, []byte("a,b\n9,9\n9,9\n9,9\n"), 0o644) }, "changed since it was loaded"},
		{"same size, touched", func(p string) error {
			later := time.Now().Add(time.Hour)
			return os.Chtimes(p, later, later)
		}, "changed since it was loaded"},
		{"removed", os.Remove, "is gone"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, Config{})
			path := e.write("f.csv", "a,b\n1,\n2,3\n4,5\n")
			raw, info := e.load("f.csv")
			if info.Rows != 3 || info.Missing != 1 {
				t.Fatalf("loaded %+v", info)
			}
			clean, _ := tableOf(t, e.must("drop_missing", map[string]any{"table": raw}))
			if err := tc.change(path); err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{"head", "describe", "drop_missing"} {
				_, err := e.call(name, map[string]any{"table": raw})
				if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "load the file again") {
					t.Errorf("%s of the loaded table: %v, want %q and what to do", name, err, tc.want)
				}
			}
			if got := e.must("head", map[string]any{"table": clean, "n": 5}); got != "a,b\n2,3\n4,5\n" {
				t.Errorf("the table made from it: %q", got)
			}
		})
	}
}
