package data

import (
	"context"
	"database/sql"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/toolwire/toolwire/handle"
	"github.com/toolwire/toolwire/tool"
)

// TableInfo is what a model reads of a table a tool made: its handle and
// a summary, never its rows.
type TableInfo struct {
	Table   handle.Of[*Table] `json:"table"`
	Rows    int64             `json:"rows"`
	Columns []string          `json:"columns"`
	Missing int64             `json:"missing_cells"`
	// Note says what the tool did, when a count helps ("dropped 1,204
	// rows").
	Note string `json:"note,omitempty"`
	// Preview is the first rows as CSV (query).
	Preview string `json:"preview,omitempty"`
}

// tableIn is the input of a tool that reads one table.
type tableIn struct {
	Table handle.Of[*Table] `json:"table"`
}

func ptr[T any](v T) *T { return &v }

// effect is what a tool does beyond reading tables, which its annotations
// tell hosts: they run a tool without asking when it is read-only, or not
// destructive and closed-world (Codex CLI's rule, and agent.Approval's).
// No tool of the toolset reaches beyond the server's tables and the
// allowed directories: every one is closed-world.
type effect int

const (
	// reads: reads tables and changes nothing.
	reads effect = iota
	// makesTable: makes a new table of the caller's, changing no table
	// or file there was (not destructive); a call made again makes
	// another table (not idempotent).
	makesTable
	// writesFile: writes a file, replacing one that is there.
	writesFile
	// dropsTable: releases a table: its handle stops working.
	dropsTable
)

// annotations are the hints that say e.
func (e effect) annotations() *tool.Annotations {
	return &tool.Annotations{
		ReadOnlyHint:    ptr(e == reads),
		DestructiveHint: ptr(e == writesFile || e == dropsTable),
		IdempotentHint:  ptr(e != makesTable),
		OpenWorldHint:   ptr(false),
	}
}

// makeTool makes a tool whose table handles resolve in the toolset's
// store, annotated with what it does. Each call runs under the toolset's
// time limit, and an error that is one of its bounds says which, and how
// to raise it.
func makeTool[In, Out any](t *Toolset, name, title, description string, does effect, fn func(context.Context, In) (Out, error)) *tool.Typed[In, Out] {
	bounded := func(ctx context.Context, in In) (Out, error) {
		ctx, cancel := t.bounds.withTimeLimit(ctx)
		defer cancel()
		out, err := fn(ctx, in)
		if err != nil {
			return out, t.bounds.explain(ctx, err)
		}
		return out, nil
	}
	return tool.Must(handle.Tool(t.store, name, description, bounded)).WithInfo(func(i *tool.Info) {
		i.Title = title
		i.Annotations = does.annotations()
	})
}

type loadCSVIn struct {
	Path     string `json:"path" description:"Path of the CSV file; relative paths start at the server's first allowed directory"`
	Encoding string `json:"encoding,omitempty" jsonschema:"enum=utf-8|latin-1|utf-16" description:"Text encoding of the file (default utf-8)"`
}

func (t *Toolset) loadCSV() tool.Tool {
	return makeTool(t, "load_csv", "Load a CSV file",
		"Loads a CSV file as a table and returns its handle and a summary (rows, columns, missing cells), not the rows. "+
			"Delimiter, header, column types, quoting and a BOM are detected. "+
			"The table is the file as it is now: if the file changes, load it again.",
		makesTable, func(ctx context.Context, in loadCSVIn) (TableInfo, error) {
			real, fi, err := t.dirs.Readable(in.Path)
			if err != nil {
				return TableInfo{}, err
			}
			if fi.Size() == 0 {
				return TableInfo{}, fmt.Errorf("%s is empty: there is nothing to load", in.Path)
			}
			stop := reportProgress(ctx, fmt.Sprintf("reading %s (%s)", filepath.Base(real), bytesText(fi.Size())))
			opts, err := t.csvOptions(ctx, real, in.Encoding)
			var info TableInfo
			var args string
			switch {
			case err != nil:
			case t.dataDir == "":
				info, err = t.keepFile(ctx, real, fi, opts)
			default: // replicas share the data directory, not the user's files
				if args, err = opts.args(real); err == nil {
					info, err = t.materialize(ctx, t.db, "SELECT * FROM read_csv("+args+")")
				}
			}
			stop(fmt.Sprintf("loaded %s: %d rows", filepath.Base(real), info.Rows))
			if err != nil {
				return TableInfo{}, loadError(in.Path, err)
			}
			return info, nil
		})
}

// keepFile makes a table of the CSV file at path (as fi describes it,
// read as opts says) without copying it: the file is
// read once here, to check and summarize it, and again by each tool that
// uses the table, as long as it stays as it is. The tables made from it
// are DuckDB's own. Copying the file into DuckDB's storage instead took
// about three times as long as reading it (bench/README.md).
func (t *Toolset) keepFile(ctx context.Context, path string, fi os.FileInfo, opts CSVOptions) (TableInfo, error) {
	tb := &Table{Name: "f_" + randomHex(), File: &LoadedFile{Path: path, CSV: opts, Size: fi.Size(), ModTime: fi.ModTime()}}
	info, size, err := t.summarize(ctx, tb)
	if err == nil {
		err = tb.File.unchanged() // it changed while being read
	}
	if err == nil {
		info.Table, err = handle.Put(ctx, t.store, tb, size)
	}
	return info, err
}

// reportProgress reports progress to the call's client (tool.Progress)
// while a long step runs: once at once, then every second; the returned
// func reports the last.
func reportProgress(ctx context.Context, msg string) (stop func(done string)) {
	start := time.Now()
	_ = tool.Progress(ctx, 0, 0, msg)
	quit := make(chan struct{})
	sent := make(chan int)
	go func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		n := 0
		for {
			select {
			case <-quit:
				sent <- n
				return
			case <-tick.C:
				n++
				_ = tool.Progress(ctx, float64(n), 0, fmt.Sprintf("%s: %s", msg, time.Since(start).Round(time.Second)))
			}
		}
	}()
	return func(done string) {
		close(quit)
		_ = tool.Progress(ctx, float64(<-sent+1), 0, done)
	}
}

func bytesText(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f kB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

type headIn struct {
	Table handle.Of[*Table] `json:"table"`
	N     int               `json:"n" jsonschema:"default=10,minimum=1,maximum=500" description:"How many rows"`
}

func (t *Toolset) head() tool.Tool {
	return makeTool(t, "head", "First rows",
		"Shows the first n rows of a table as CSV text.",
		reads, func(ctx context.Context, in headIn) (string, error) {
			return t.csvText(ctx, in.Table.Value(), in.N)
		})
}

// csvText renders the first n rows of tb as CSV, with a header.
func (t *Toolset) csvText(ctx context.Context, tb *Table, n int) (string, error) {
	from, err := t.rel(tb)
	if err != nil {
		return "", err
	}
	rows, err := t.db.QueryContext(ctx, "SELECT * FROM "+from+" LIMIT "+strconv.Itoa(n))
	if err != nil {
		return "", engineError("reading the table", err)
	}
	vals, err := scanAll(rows)
	if err != nil {
		return "", engineError("reading the table", err)
	}
	var b strings.Builder
	w := csv.NewWriter(&b)
	header := make([]string, len(tb.Columns))
	for i, c := range tb.Columns {
		header[i] = c.Name
	}
	_ = w.Write(header) // a strings.Builder does not fail
	rec := make([]string, len(header))
	for _, r := range vals {
		for i, v := range r {
			rec[i] = cell(v)
		}
		_ = w.Write(rec)
	}
	w.Flush()
	return b.String(), nil
}

// cell writes a value as CSV text: NULL is empty.
func cell(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case time.Time:
		if x.Hour() == 0 && x.Minute() == 0 && x.Second() == 0 && x.Nanosecond() == 0 {
			return x.Format(time.DateOnly)
		}
		return x.Format(time.DateTime)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case []byte:
		return string(x)
	}
	return fmt.Sprint(v)
}

// ColumnStats describes one column.
type ColumnStats struct {
	Name    string   `json:"name"`
	Type    string   `json:"type"`
	Count   int64    `json:"count"`
	Missing int64    `json:"missing"`
	Min     *string  `json:"min,omitempty"`
	Max     *string  `json:"max,omitempty"`
	Mean    *float64 `json:"mean,omitempty"`
	Std     *float64 `json:"std,omitempty"`
	// Distinct is the number of distinct values, and Top the most
	// frequent one, for text columns.
	Distinct *int64  `json:"distinct,omitempty"`
	Top      *string `json:"top,omitempty"`
}

// Description describes a table.
type Description struct {
	Rows    int64         `json:"rows"`
	Columns []ColumnStats `json:"columns"`
}

func numeric(typ string) bool {
	for _, p := range []string{"TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT", "UHUGEINT", "FLOAT", "DOUBLE", "DECIMAL"} {
		if strings.HasPrefix(typ, p) {
			return true
		}
	}
	return false
}

func (t *Toolset) describe() tool.Tool {
	return makeTool(t, "describe", "Describe a table",
		"Describes each column of a table: type, count, missing values, min/max, mean and standard deviation for numbers, "+
			"distinct values and the most frequent value for text.",
		reads, func(ctx context.Context, in tableIn) (Description, error) {
			return t.describeTable(ctx, in.Table.Value())
		})
}

func (t *Toolset) describeTable(ctx context.Context, tb *Table) (Description, error) {
	from, err := t.rel(tb)
	if err != nil {
		return Description{}, err
	}
	var exprs []string
	for _, c := range tb.Columns {
		q := ident(c.Name)
		exprs = append(exprs, "count("+q+")", "CAST(min("+q+") AS VARCHAR)", "CAST(max("+q+") AS VARCHAR)")
		switch {
		case numeric(c.Type):
			exprs = append(exprs, "avg(CAST("+q+" AS DOUBLE))", "stddev_samp(CAST("+q+" AS DOUBLE))", "NULL", "NULL")
		case c.Type == "VARCHAR":
			exprs = append(exprs, "NULL", "NULL", "count(DISTINCT "+q+")", "mode("+q+")")
		default:
			exprs = append(exprs, "NULL", "NULL", "NULL", "NULL")
		}
	}
	d := Description{Rows: tb.Rows, Columns: make([]ColumnStats, len(tb.Columns))}
	if len(exprs) == 0 {
		return d, nil
	}
	var ptrs []any
	for i, c := range tb.Columns {
		s := &d.Columns[i]
		s.Name, s.Type = c.Name, c.Type
		ptrs = append(ptrs, &s.Count, &s.Min, &s.Max, &s.Mean, &s.Std, &s.Distinct, &s.Top)
	}
	if err := t.db.QueryRowContext(ctx, "SELECT "+strings.Join(exprs, ", ")+" FROM "+from).Scan(ptrs...); err != nil {
		return Description{}, engineError("describing the table", err)
	}
	for i := range d.Columns {
		d.Columns[i].Missing = tb.Rows - d.Columns[i].Count
	}
	return d, nil
}

// from is the SQL relation of tb (see rel), once the columns named are
// known to be tb's.
func (t *Toolset) from(tb *Table, columns ...string) (string, error) {
	if err := checkColumns(tb, columns); err != nil {
		return "", err
	}
	return t.rel(tb)
}

// checkColumns refuses column names tb does not have, naming the ones it
// has.
func checkColumns(tb *Table, names []string) error {
	have := make(map[string]bool, len(tb.Columns))
	for _, c := range tb.Columns {
		have[c.Name] = true
	}
	for _, n := range names {
		if !have[n] {
			all := make([]string, len(tb.Columns))
			for i, c := range tb.Columns {
				all[i] = c.Name
			}
			return fmt.Errorf("the table has no column %q; its columns are: %s", n, strings.Join(all, ", "))
		}
	}
	return nil
}

func columnType(tb *Table, name string) string {
	for _, c := range tb.Columns {
		if c.Name == name {
			return c.Type
		}
	}
	return ""
}

type dropMissingIn struct {
	Table   handle.Of[*Table] `json:"table"`
	Columns []string          `json:"columns,omitempty" description:"Drop rows missing a value in any of these columns (default: any column)"`
}

func (t *Toolset) dropMissing() tool.Tool {
	return makeTool(t, "drop_missing", "Drop rows with missing values",
		"Makes a new table without the rows that miss a value (in any column, or in the columns given), and returns its handle and summary.",
		makesTable, func(ctx context.Context, in dropMissingIn) (TableInfo, error) {
			tb := in.Table.Value()
			from, err := t.from(tb, in.Columns...)
			if err != nil {
				return TableInfo{}, err
			}
			cols := in.Columns
			if len(cols) == 0 {
				for _, c := range tb.Columns {
					cols = append(cols, c.Name)
				}
			}
			conds := make([]string, len(cols))
			for i, c := range cols {
				conds[i] = ident(c) + " IS NOT NULL"
			}
			where := "true"
			if len(conds) > 0 {
				where = strings.Join(conds, " AND ")
			}
			info, err := t.materialize(ctx, t.db, "SELECT * FROM "+from+" WHERE "+where)
			if err != nil {
				return TableInfo{}, engineError("dropping missing values", err)
			}
			info.Note = fmt.Sprintf("dropped %d of %d rows", tb.Rows-info.Rows, tb.Rows)
			return info, nil
		})
}

type filterIn struct {
	Table  handle.Of[*Table] `json:"table"`
	Column string            `json:"column"`
	Op     string            `json:"op" jsonschema:"enum=eq|ne|lt|le|gt|ge|contains|is_missing|not_missing" description:"Comparison: eq, ne, lt, le, gt, ge, contains (text), is_missing, not_missing"`
	Value  compareValue      `json:"value,omitzero"`
}

// compareValue is filter's value: a string, number or boolean, read as
// the column's type; null or left out for is_missing and not_missing.
type compareValue struct{ v any }

// JSONSchema gives the value its types (a host's strict check wants a
// type on every property).
func (compareValue) JSONSchema() json.RawMessage {
	return json.RawMessage(`{"type":["string","number","boolean","null"],"description":"The value to compare with, read as the column's type (not needed for is_missing and not_missing)"}`)
}

// UnmarshalJSON reads any JSON value; the schema lets only those it names
// through.
func (c *compareValue) UnmarshalJSON(b []byte) error { return json.Unmarshal(b, &c.v) }

var comparisons = map[string]string{"eq": "=", "ne": "<>", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}

func (t *Toolset) filter() tool.Tool {
	return makeTool(t, "filter", "Filter rows",
		"Makes a new table with the rows whose column compares to the value as asked, and returns its handle and summary.",
		makesTable, func(ctx context.Context, in filterIn) (TableInfo, error) {
			tb := in.Table.Value()
			from, err := t.from(tb, in.Column)
			if err != nil {
				return TableInfo{}, err
			}
			col := ident(in.Column)
			var where string
			var args []any
			switch in.Op {
			case "is_missing":
				where = col + " IS NULL"
			case "not_missing":
				where = col + " IS NOT NULL"
			default:
				if in.Value.v == nil {
					return TableInfo{}, fmt.Errorf("op %s needs a value", in.Op)
				}
				v := fmt.Sprint(in.Value.v)
				if f, ok := in.Value.v.(float64); ok {
					v = strconv.FormatFloat(f, 'f', -1, 64)
				}
				if in.Op == "contains" {
					where = "contains(CAST(" + col + " AS VARCHAR), ?)"
					args = append(args, v)
					break
				}
				// The type as DuckDB reads it, not as the store says: a
				// type is pasted into SQL.
				var typ string
				if err := t.db.QueryRowContext(ctx, "SELECT column_type FROM (DESCRIBE SELECT "+col+" FROM "+from+")").Scan(&typ); err != nil {
					return TableInfo{}, engineError("filtering", err)
				}
				var ok bool
				if err := t.db.QueryRowContext(ctx, "SELECT TRY_CAST(? AS "+typ+") IS NOT NULL", v).Scan(&ok); err != nil || !ok {
					return TableInfo{}, fmt.Errorf("the value %q is not a %s, the type of column %s: pass a value of that type", v, typ, in.Column)
				}
				where = col + " " + comparisons[in.Op] + " CAST(? AS " + typ + ")"
				args = append(args, v)
			}
			info, err := t.materialize(ctx, t.db, "SELECT * FROM "+from+" WHERE "+where, args...)
			if err != nil {
				return TableInfo{}, engineError("filtering", err)
			}
			info.Note = fmt.Sprintf("kept %d of %d rows", info.Rows, tb.Rows)
			return info, nil
		})
}

type selectIn struct {
	Table   handle.Of[*Table] `json:"table"`
	Columns []string          `json:"columns" jsonschema:"minItems=1" description:"The columns to keep, in order"`
}

func (t *Toolset) selectColumns() tool.Tool {
	return makeTool(t, "select", "Select columns",
		"Makes a new table with only the columns given, in that order, and returns its handle and summary.",
		makesTable, func(ctx context.Context, in selectIn) (TableInfo, error) {
			tb := in.Table.Value()
			from, err := t.from(tb, in.Columns...)
			if err != nil {
				return TableInfo{}, err
			}
			info, err := t.materialize(ctx, t.db, "SELECT "+identList(in.Columns)+" FROM "+from)
			if err != nil {
				return TableInfo{}, engineError("selecting columns", err)
			}
			return info, nil
		})
}

func identList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = ident(n)
	}
	return strings.Join(q, ", ")
}

type sortIn struct {
	Table      handle.Of[*Table] `json:"table"`
	By         []string          `json:"by" jsonschema:"minItems=1" description:"Columns to sort by, the first one first"`
	Descending bool              `json:"descending,omitempty" description:"Largest first"`
}

func (t *Toolset) sort() tool.Tool {
	return makeTool(t, "sort", "Sort rows",
		"Makes a new table with the rows sorted by the columns given (missing values last), and returns its handle and summary.",
		makesTable, func(ctx context.Context, in sortIn) (TableInfo, error) {
			tb := in.Table.Value()
			from, err := t.from(tb, in.By...)
			if err != nil {
				return TableInfo{}, err
			}
			dir := " ASC NULLS LAST"
			if in.Descending {
				dir = " DESC NULLS LAST"
			}
			keys := make([]string, len(in.By))
			for i, c := range in.By {
				keys[i] = ident(c) + dir
			}
			info, err := t.materialize(ctx, t.db, "SELECT * FROM "+from+" ORDER BY "+strings.Join(keys, ", "))
			if err != nil {
				return TableInfo{}, engineError("sorting", err)
			}
			return info, nil
		})
}

// Aggregation is one aggregate of a group_by.
type Aggregation struct {
	Column   string `json:"column" description:"The column to aggregate (any column for count)"`
	Function string `json:"function" jsonschema:"enum=count|sum|mean|min|max|count_distinct"`
}

type groupByIn struct {
	Table        handle.Of[*Table] `json:"table"`
	By           []string          `json:"by" jsonschema:"minItems=1" description:"Columns to group by"`
	Aggregations []Aggregation     `json:"aggregations" jsonschema:"minItems=1" description:"Aggregates per group; each becomes a column named function_column"`
}

var aggregates = map[string]string{"count": "count(%s)", "sum": "sum(%s)", "mean": "avg(%s)", "min": "min(%s)", "max": "max(%s)", "count_distinct": "count(DISTINCT %s)"}

func (t *Toolset) groupBy() tool.Tool {
	return makeTool(t, "group_by", "Group and aggregate",
		"Makes a new table with one row per group of the columns given and the aggregates asked for, and returns its handle and summary.",
		makesTable, func(ctx context.Context, in groupByIn) (TableInfo, error) {
			tb := in.Table.Value()
			from, err := t.from(tb, in.By...)
			if err != nil {
				return TableInfo{}, err
			}
			sel := []string{identList(in.By)}
			for _, a := range in.Aggregations {
				if err := checkColumns(tb, []string{a.Column}); err != nil {
					return TableInfo{}, err
				}
				if (a.Function == "sum" || a.Function == "mean") && !numeric(columnType(tb, a.Column)) {
					return TableInfo{}, fmt.Errorf("cannot take the %s of column %s: it is %s, not a number", a.Function, a.Column, columnType(tb, a.Column))
				}
				sel = append(sel, fmt.Sprintf(aggregates[a.Function], ident(a.Column))+" AS "+ident(a.Function+"_"+a.Column))
			}
			info, err := t.materialize(ctx, t.db, "SELECT "+strings.Join(sel, ", ")+" FROM "+from+" GROUP BY "+identList(in.By)+" ORDER BY "+identList(in.By))
			if err != nil {
				return TableInfo{}, engineError("grouping", err)
			}
			return info, nil
		})
}

type saveIn struct {
	Table handle.Of[*Table] `json:"table"`
	Path  string            `json:"path" description:"Path of the file to write (replaced if it exists); relative paths start at the server's first allowed directory"`
}

// Saved tells where a table was written.
type Saved struct {
	Path  string `json:"path"`
	Rows  int64  `json:"rows"`
	Bytes int64  `json:"bytes"`
}

func (t *Toolset) saveCSV() tool.Tool {
	return makeTool(t, "save_csv", "Save as CSV",
		"Writes a table to a CSV file (with a header).",
		writesFile, func(ctx context.Context, in saveIn) (Saved, error) {
			return t.save(ctx, in, "FORMAT csv, HEADER true")
		})
}

func (t *Toolset) saveParquet() tool.Tool {
	return makeTool(t, "save_parquet", "Save as Parquet",
		"Writes a table to a Parquet file.",
		writesFile, func(ctx context.Context, in saveIn) (Saved, error) {
			return t.save(ctx, in, "FORMAT parquet")
		})
}

// save writes a table to a file next to the destination and renames it
// into place, so that a failed save leaves the old file as it was.
func (t *Toolset) save(ctx context.Context, in saveIn, format string) (Saved, error) {
	real, err := t.dirs.Writable(in.Path)
	if err != nil {
		return Saved{}, err
	}
	tb := in.Table.Value()
	from, err := t.rel(tb)
	if err != nil {
		return Saved{}, err
	}
	tmp := filepath.Join(filepath.Dir(real), "."+filepath.Base(real)+".tmp-"+randomHex())
	if _, err := t.db.ExecContext(ctx, "COPY (SELECT * FROM "+from+") TO "+sqlString(tmp)+" ("+format+")"); err != nil {
		_ = os.Remove(tmp)
		return Saved{}, engineError("saving "+in.Path, err)
	}
	if err := os.Rename(tmp, real); err != nil {
		_ = os.Remove(tmp)
		return Saved{}, fmt.Errorf("saving %s: %w", in.Path, err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return Saved{}, fmt.Errorf("saving %s: %w", in.Path, err)
	}
	return Saved{Path: real, Rows: tb.Rows, Bytes: fi.Size()}, nil
}

func (t *Toolset) release() tool.Tool {
	return makeTool(t, "release", "Release a table",
		"Frees a table the conversation no longer needs; its handle stops working.",
		dropsTable, func(ctx context.Context, in tableIn) (string, error) {
			if err := handle.Release[*Table](ctx, t.store, in.Table.ID); err != nil {
				return "", err
			}
			if in.Table.Value().Parquet { // a shared store does not drop data
				if err := t.drop(in.Table.Value()); err != nil {
					return "", fmt.Errorf("released %s, and removed no file: %w", in.Table.ID, err)
				}
			}
			return "released " + in.Table.ID, nil
		})
}

// execer runs statements: the database or one connection of it.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}
