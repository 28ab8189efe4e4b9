package data

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/toolwire/toolwire/handle"
	"github.com/toolwire/toolwire/tool"
)

type queryIn struct {
	SQL    string                       `json:"sql" description:"One SELECT statement (DuckDB SQL) over the tables named in tables"`
	Tables map[string]handle.Of[*Table] `json:"tables" description:"The tables the query reads, by the name the SQL uses, e.g. {\"sales\": \"tbl_…\"}"`
}

// tableName is what a name in query's tables may be.
var tableName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,62}$`)

func (t *Toolset) query() tool.Tool {
	return makeTool(t, "query", "Query tables with SQL",
		"Runs one read-only SELECT statement (DuckDB SQL) over the tables given, by the names the SQL uses for them, "+
			"and returns the result as a new table: its handle, summary and first rows. "+
			"The query reads only those tables: no files, no other tables, no changes.",
		makesTable, func(ctx context.Context, in queryIn) (TableInfo, error) {
			names := make([]string, 0, len(in.Tables))
			tables := make(map[string]*Table, len(in.Tables))
			for name, h := range in.Tables {
				if !tableName.MatchString(name) {
					return TableInfo{}, fmt.Errorf("%q cannot name a table in SQL: use letters, digits and _, starting with a letter", name)
				}
				names = append(names, name)
				tables[name] = h.Value()
			}
			sort.Strings(names)
			info, err := t.runQuery(ctx, in.SQL, names, tables)
			if err != nil {
				return TableInfo{}, err
			}
			info.Preview, err = t.csvText(ctx, info.Table.Value(), 10)
			return info, err
		}).WithInfo(func(i *tool.Info) {
		// A query that runs long becomes a task of MCP's Tasks
		// extension, for a client that can take one (mcp.TaskOptions).
		i.Execution = &tool.Execution{TaskSupport: tool.TaskOptional}
	})
}

// runQuery runs a model's SQL over its tables in a DuckDB database of
// its own, opened for this query and closed after it, which may read
// nothing but the caller's tables: the files of its Parquet and CSV
// tables and the copies of its tables in memory (snapshot), one by one
// (allowed_paths), and a private directory for DuckDB's spill. With a
// data directory it writes the result there itself, to the one file
// allowed for it; otherwise to a file in its directory, which the
// toolset's database copies. The toolset's database, its data directory
// (every caller's tables), its allowed directories and its temporary
// directory are out of the query's reach whatever the SQL says;
// checkQuery refuses, before that, any SQL that names something else, so
// that the model reads why.
func (t *Toolset) runQuery(ctx context.Context, text string, names []string, tables map[string]*Table) (TableInfo, error) {
	check, err := t.db.Conn(ctx)
	if err != nil {
		return TableInfo{}, fmt.Errorf("query: %w", err)
	}
	err = checkQuery(ctx, check, text, names)
	check.Close()
	if err != nil {
		return TableInfo{}, err
	}
	dir, err := os.MkdirTemp(t.tmpDir, "query-")
	if err != nil {
		return TableInfo{}, fmt.Errorf("query: a directory for the query: %w", err)
	}
	defer os.RemoveAll(dir)
	var files, setup []string // the only files the query may read, and how it names them
	for i, name := range names {
		tb, from := tables[name], ""
		switch {
		case tb.File != nil || tb.Parquet:
			if from, err = t.rel(tb); err != nil {
				return TableInfo{}, err
			}
			files = append(files, t.parquetPath(tb.Name))
			if tb.File != nil {
				files[len(files)-1] = tb.File.Path
			}
		default:
			snap, err := t.snapshot(ctx, tb)
			if err != nil {
				return TableInfo{}, engineError("query: copying table "+name, err)
			}
			// DuckDB looks for a log next to a database file it attaches.
			files = append(files, snap, snap+".wal")
			from = fmt.Sprintf("toolwire_%d.t", i)
			setup = append(setup, fmt.Sprintf("ATTACH %s AS toolwire_%d (READ_ONLY)", sqlString(snap), i))
		}
		setup = append(setup, "CREATE TEMP VIEW "+ident(name)+" AS SELECT * FROM "+from)
	}
	out := t.newTable()
	if out.Parquet { // the query writes it there, and nothing else
		files = append(files, t.parquetPath(out.Name)+".tmp")
	}
	sb, err := t.sandbox(ctx, dir, files)
	if err != nil {
		return TableInfo{}, err
	}
	defer sb.Close()
	conn, err := sb.Conn(ctx)
	if err != nil {
		return TableInfo{}, fmt.Errorf("query: %w", err)
	}
	defer conn.Close()
	if len(setup) > 0 {
		if _, err := conn.ExecContext(ctx, strings.Join(setup, ";\n")); err != nil {
			return TableInfo{}, engineError("query: reading the tables", err)
		}
	}
	// On a line of its own, so that a -- comment at its end does not
	// swallow what is written after it.
	sel := strings.TrimRight(strings.TrimSpace(text), ";") + "\n"
	if out.Parquet {
		if err := t.write(ctx, conn, out, sel); err != nil {
			return TableInfo{}, engineError("query failed", err)
		}
		conn.Close()
		sb.Close() // its memory goes before the result is kept
		info, err := t.keep(ctx, out)
		if err != nil {
			return TableInfo{}, engineError("query: keeping the result", err)
		}
		return info, nil
	}
	// The result goes to the toolset's database through a file: Parquet
	// when it keeps the result's types, which costs no sync to disk, else
	// a DuckDB database file.
	exact, err := parquetExact(ctx, conn, sel)
	if err != nil {
		return TableInfo{}, engineError("query failed", err)
	}
	output, steps, result := filepath.Join(dir, "output.parquet"), []string(nil), ""
	if exact {
		steps = []string{"COPY (" + t.bounds.limitRows(sel) + ") TO " + sqlString(output) + " (FORMAT parquet)"}
		result = "read_parquet(" + sqlString(output) + ")"
	} else {
		output = filepath.Join(dir, "output.duckdb")
		steps = []string{
			"ATTACH " + sqlString(output) + " AS toolwire_output",
			"CREATE TABLE toolwire_output.result AS " + t.bounds.limitRows(sel),
			"DETACH toolwire_output",
		}
	}
	for _, s := range steps {
		if _, err := conn.ExecContext(ctx, s); err != nil {
			return TableInfo{}, engineError("query failed", err)
		}
	}
	conn.Close()
	sb.Close() // its memory goes before the result is kept
	if !exact {
		alias := "q_" + randomHex()
		if _, err := t.db.ExecContext(ctx, "ATTACH "+sqlString(output)+" AS "+alias+" (READ_ONLY)"); err != nil {
			return TableInfo{}, engineError("query: reading the result", err)
		}
		defer t.db.ExecContext(context.WithoutCancel(ctx), "DETACH "+alias)
		result = alias + ".result"
	}
	if err := t.write(ctx, t.db, out, "SELECT * FROM "+result); err != nil {
		return TableInfo{}, engineError("query: keeping the result", err)
	}
	info, err := t.keep(ctx, out)
	if err != nil {
		return TableInfo{}, engineError("query: keeping the result", err)
	}
	return info, nil
}

// parquetTypes are the column types that a Parquet file keeps exactly, as
// measured (TestQueryTypes); DuckDB writes others as different types
// (HUGEINT, the type of sum() of integers, as DOUBLE; ENUM as VARCHAR; …).
var parquetTypes = regexp.MustCompile(`^(BOOLEAN|U?(TINYINT|SMALLINT|INTEGER|BIGINT)|FLOAT|DOUBLE|DECIMAL\(\d+,\d+\)|VARCHAR|BLOB|DATE|TIME|TIMESTAMP(_NS| WITH TIME ZONE)?|UUID)$`)

// parquetExact reports whether every column of the SELECT statement sel
// has one of parquetTypes.
func parquetExact(ctx context.Context, conn *sql.Conn, sel string) (bool, error) {
	rows, err := conn.QueryContext(ctx, "SELECT column_type FROM (DESCRIBE "+sel+")")
	if err != nil {
		return false, err
	}
	types, err := scanAll(rows)
	if err != nil {
		return false, err
	}
	for _, c := range types {
		if !parquetTypes.MatchString(fmt.Sprint(c[0])) {
			return false, nil
		}
	}
	return true, nil
}

// sandbox opens the DuckDB database a query runs in: in memory, spilling
// to dir, reading only dir and files, with the toolset's bounds, no
// extensions and its configuration locked. It takes the database opened
// ahead for the next query (spare), and has the next one opened.
func (t *Toolset) sandbox(ctx context.Context, dir string, files []string) (*sql.DB, error) {
	db, err := t.spare.take(ctx, t.openSandbox)
	if err != nil {
		return nil, err
	}
	allowed := make([]string, len(files))
	for i, f := range files {
		allowed[i] = sqlString(f)
	}
	set := strings.Join([]string{
		"SET temp_directory = " + sqlString(dir),
		"SET allowed_directories = [" + sqlString(dir+string(filepath.Separator)) + "]",
		"SET allowed_paths = [" + strings.Join(allowed, ", ") + "]",
		"SET enable_external_access = false",
		"SET lock_configuration = true",
	}, ";\n")
	if _, err := db.ExecContext(ctx, set); err != nil {
		db.Close()
		return nil, fmt.Errorf("query: configuring DuckDB (%s): %w", set, err)
	}
	return db, nil
}

// openSandbox opens a DuckDB database for a query, with what every
// query's has: the bounds of the toolset's database, no extensions.
// sandbox configures the rest, for the query that takes it.
func (t *Toolset) openSandbox(ctx context.Context) (*sql.DB, error) {
	rows, err := t.db.QueryContext(ctx, "SELECT name, value FROM duckdb_settings() WHERE name IN ('memory_limit', 'max_temp_directory_size', 'threads')")
	if err != nil {
		return nil, fmt.Errorf("query: reading the bounds: %w", err)
	}
	bounds, err := scanAll(rows)
	if err != nil {
		return nil, fmt.Errorf("query: reading the bounds: %w", err)
	}
	var set []string
	for _, b := range bounds {
		set = append(set, fmt.Sprintf("SET %s = %s", b[0], sqlString(fmt.Sprint(b[1]))))
	}
	set = append(set,
		"SET autoinstall_known_extensions = false",
		"SET autoload_known_extensions = false",
	)
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return nil, fmt.Errorf("query: opening DuckDB: %w", err)
	}
	for _, s := range set {
		if _, err := db.ExecContext(ctx, s); err != nil {
			db.Close()
			return nil, fmt.Errorf("query: configuring DuckDB (%s): %w", s, err)
		}
	}
	return db, nil
}

// checkQuery refuses anything but one SELECT statement that reads only
// the tables named and its own common table expressions, where they are
// in scope: no table functions (read_csv, read_text, glob, …), no file
// names used as tables, no other tables. DuckDB parses the statement
// (json_serialize_sql serializes SELECT statements only). The query runs
// where it can read nothing else anyway (runQuery): this check is there
// to tell the model why.
func checkQuery(ctx context.Context, conn *sql.Conn, text string, names []string) error {
	if strings.TrimSpace(text) == "" {
		return errors.New("the SQL is empty: pass one SELECT statement")
	}
	var raw string
	if err := conn.QueryRowContext(ctx, "SELECT CAST(json_serialize_sql(CAST(? AS VARCHAR)) AS VARCHAR)", text).Scan(&raw); err != nil {
		return engineError("query", err)
	}
	var parsed struct {
		Error      bool              `json:"error"`
		Message    string            `json:"error_message"`
		Statements []json.RawMessage `json:"statements"`
	}
	if err := json.Unmarshal([]byte(raw), &parsed); err != nil {
		return fmt.Errorf("query: reading DuckDB's parse: %w", err)
	}
	switch {
	case parsed.Error && strings.Contains(parsed.Message, "Only SELECT"):
		return errors.New("query runs one read-only SELECT statement: writing, attaching, installing, setting or copying is not allowed; make new tables with the other tools or with a SELECT")
	case parsed.Error:
		msg, _, _ := strings.Cut(parsed.Message, "\n")
		return fmt.Errorf("the SQL does not parse: %s", msg)
	case len(parsed.Statements) != 1:
		return fmt.Errorf("query runs one SELECT statement; the SQL has %d", len(parsed.Statements))
	}
	var tree any
	if err := json.Unmarshal(parsed.Statements[0], &tree); err != nil {
		return fmt.Errorf("query: reading DuckDB's parse: %w", err)
	}
	c := refChecker{names: names, tables: map[string]bool{}}
	for _, n := range names {
		c.tables[strings.ToLower(n)] = true
	}
	return c.check(tree, nil)
}

// refChecker checks the table references of a parse tree.
type refChecker struct {
	names  []string        // the tables passed, for messages
	tables map[string]bool // the same, lower case
}

// scope is the common table expressions a point of a query sees: those
// of the query nodes around it, innermost first. DuckDB matches their
// names without regard to case.
type scope struct {
	names map[string]bool
	outer *scope
}

func (s *scope) with(names ...string) *scope {
	in := &scope{names: make(map[string]bool, len(names)), outer: s}
	for _, n := range names {
		in.names[strings.ToLower(n)] = true
	}
	return in
}

func (s *scope) has(name string) bool {
	for ; s != nil; s = s.outer {
		if s.names[strings.ToLower(name)] {
			return true
		}
	}
	return false
}

// check refuses the table references under node that read anything but
// the tables passed or a common table expression in scope. A query
// node's CTEs (its cte_map, on a SELECT or on a set operation, covering
// both sides) are in scope in the rest of that node and in the CTEs
// declared after them, not in sibling or outer nodes; a recursive CTE
// sees itself in its recursive part only. Where DuckDB would not bind a
// name to a CTE it reads a table or, by replacement scan, a file of that
// name: these are DuckDB's rules, as measured (isolation_test.go).
func (c *refChecker) check(node any, sc *scope) error {
	switch n := node.(type) {
	case []any:
		for _, v := range n {
			if err := c.check(v, sc); err != nil {
				return err
			}
		}
	case map[string]any:
		if m, ok := n["cte_map"].(map[string]any); ok {
			entries, _ := m["map"].([]any)
			var declared []string
			for _, e := range entries {
				e, _ := e.(map[string]any)
				if err := c.check(e["value"], sc.with(declared...)); err != nil {
					return err
				}
				if k, ok := e["key"].(string); ok {
					declared = append(declared, k)
				}
			}
			sc = sc.with(declared...)
		}
		in := map[string]*scope{}
		switch n["type"] {
		case "TABLE_FUNCTION":
			fn := "a table function"
			if f, ok := n["function"].(map[string]any); ok {
				if name, ok := f["function_name"].(string); ok {
					fn = name + "()"
				}
			}
			return fmt.Errorf("query reads only the tables passed in tables (%s): %s is not allowed; load files with load_csv", strings.Join(c.names, ", "), fn)
		case "SHOW_REF":
			return fmt.Errorf("query reads only the tables passed in tables (%s): DESCRIBE, SUMMARIZE and SHOW are not allowed; use the describe tool", strings.Join(c.names, ", "))
		case "COLUMN_DATA":
			return fmt.Errorf("query reads only the tables passed in tables (%s)", strings.Join(c.names, ", "))
		case "BASE_TABLE":
			name, _ := n["table_name"].(string)
			schema, _ := n["schema_name"].(string)
			catalog, _ := n["catalog_name"].(string)
			if schema != "" || catalog != "" || !c.tables[strings.ToLower(name)] && !sc.has(name) {
				for _, q := range []string{schema, catalog} {
					if q != "" {
						name = q + "." + name
					}
				}
				return fmt.Errorf("query reads only the tables passed in tables (%s): %q is not one of them; add it to tables with its handle",
					strings.Join(c.names, ", "), name)
			}
		case "RECURSIVE_CTE_NODE": // the recursive part sees the CTE
			self, _ := n["cte_name"].(string)
			in["right"] = sc.with(self)
		case "CTE_NODE": // a materialized CTE: the query after it sees it
			self, _ := n["cte_name"].(string)
			in["child"] = sc.with(self)
		}
		keys := make([]string, 0, len(n))
		for k := range n {
			if k != "cte_map" {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys) // the same SQL, the same error
		for _, k := range keys {
			s := sc
			if in[k] != nil {
				s = in[k]
			}
			if err := c.check(n[k], s); err != nil {
				return err
			}
		}
	}
	return nil
}
