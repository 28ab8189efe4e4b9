package data

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
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
		false, func(ctx context.Context, in queryIn) (TableInfo, error) {
			names := make([]string, 0, len(in.Tables))
			for name := range in.Tables {
				if !tableName.MatchString(name) {
					return TableInfo{}, fmt.Errorf("%q cannot name a table in SQL: use letters, digits and _, starting with a letter", name)
				}
				names = append(names, name)
			}
			sort.Strings(names)
			conn, err := t.db.Conn(ctx)
			if err != nil {
				return TableInfo{}, fmt.Errorf("query: %w", err)
			}
			defer conn.Close()
			if err := checkQuery(ctx, conn, in.SQL, names); err != nil {
				return TableInfo{}, err
			}
			// The names are views on this connection only, dropped after.
			for _, name := range names {
				defer conn.ExecContext(context.WithoutCancel(ctx), "DROP VIEW IF EXISTS temp."+ident(name))
				from, err := t.rel(in.Tables[name].Value())
				if err != nil {
					return TableInfo{}, err
				}
				if _, err := conn.ExecContext(ctx, "CREATE OR REPLACE TEMP VIEW "+ident(name)+" AS SELECT * FROM "+from); err != nil {
					return TableInfo{}, engineError("query: naming table "+name, err)
				}
			}
			info, err := t.materialize(ctx, conn, strings.TrimRight(strings.TrimSpace(in.SQL), ";"))
			if err != nil {
				return TableInfo{}, engineError("query failed", err)
			}
			info.Preview, err = t.csvText(ctx, info.Table.Value(), 10)
			return info, err
		})
}

// checkQuery refuses anything but one SELECT statement that reads only
// the tables named and its own common table expressions: no table
// functions (read_csv, read_text, …), no file names used as tables, no
// other tables. DuckDB parses the statement (json_serialize_sql serializes
// SELECT statements only); its own settings refuse file and network
// access in any case.
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
	allowed := map[string]bool{}
	for _, n := range names {
		allowed[strings.ToLower(n)] = true
	}
	collectCTEs(tree, allowed)
	return checkRefs(tree, allowed, names)
}

// collectCTEs adds the names of the common table expressions in a parse
// tree to names.
func collectCTEs(node any, names map[string]bool) {
	switch n := node.(type) {
	case map[string]any:
		if m, ok := n["cte_map"].(map[string]any); ok {
			if entries, ok := m["map"].([]any); ok {
				for _, e := range entries {
					if e, ok := e.(map[string]any); ok {
						if k, ok := e["key"].(string); ok {
							names[strings.ToLower(k)] = true
						}
					}
				}
			}
		}
		for _, v := range n {
			collectCTEs(v, names)
		}
	case []any:
		for _, v := range n {
			collectCTEs(v, names)
		}
	}
}

// checkRefs refuses the table references of a parse tree that read
// anything but the tables allowed.
func checkRefs(node any, allowed map[string]bool, names []string) error {
	switch n := node.(type) {
	case map[string]any:
		switch n["type"] {
		case "TABLE_FUNCTION":
			fn := "a table function"
			if f, ok := n["function"].(map[string]any); ok {
				if name, ok := f["function_name"].(string); ok {
					fn = name + "()"
				}
			}
			return fmt.Errorf("query reads only the tables passed in tables (%s): %s is not allowed; load files with load_csv", strings.Join(names, ", "), fn)
		case "SHOW_REF", "COLUMN_DATA":
			return fmt.Errorf("query reads only the tables passed in tables (%s)", strings.Join(names, ", "))
		case "BASE_TABLE":
			name, _ := n["table_name"].(string)
			schema, _ := n["schema_name"].(string)
			catalog, _ := n["catalog_name"].(string)
			if schema != "" || catalog != "" || !allowed[strings.ToLower(name)] {
				if schema != "" {
					name = schema + "." + name
				}
				return fmt.Errorf("query reads only the tables passed in tables (%s): %q is not one of them; add it to tables with its handle",
					strings.Join(names, ", "), name)
			}
		}
		for _, v := range n {
			if err := checkRefs(v, allowed, names); err != nil {
				return err
			}
		}
	case []any:
		for _, v := range n {
			if err := checkRefs(v, allowed, names); err != nil {
				return err
			}
		}
	}
	return nil
}
