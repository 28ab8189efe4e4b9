package data

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
)

// snapshot returns a DuckDB database file holding a copy of tb, a table
// in the toolset's catalog, as its table "t", for a query's own database
// to attach read-only (runQuery): that database cannot see the toolset's.
// Tables never change once made, so the copy is written once, by the
// first query that reads the table, kept in the toolset's temporary
// directory (removed by Close), reused by the queries after, and removed
// when the table is dropped (drop). The copies take the disk of the
// tables queried, compressed as DuckDB stores tables: less than the
// tables' bound (Config.MaxBytes), and outside DuckDB's spill bound.
//
// Two first queries at once each write a file of their own, checkpointed
// (DETACH alone may leave the rows in the file's log while other
// transactions hold the database), and rename it into place: the file at
// the path is always whole. drop removes the file after the table, and
// placeSnapshot checks for the table after the rename, so that a table
// dropped while its copy was being written leaves no file behind.
func (t *Toolset) snapshot(ctx context.Context, tb *Table) (string, error) {
	path := t.snapshotPath(tb.Name)
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", fmt.Errorf("a directory for copies of the tables: %w", err)
	}
	tmp := path + "." + randomHex() + ".tmp"
	alias := "s_" + randomHex()
	conn, err := t.db.Conn(ctx)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "ATTACH "+sqlString(tmp)+" AS "+alias); err != nil {
		_ = os.Remove(tmp)
		return "", err
	}
	_, err = conn.ExecContext(ctx, "CREATE TABLE "+alias+".t AS SELECT * FROM "+catalog+"."+ident(tb.Name))
	if err == nil {
		_, err = conn.ExecContext(ctx, "CHECKPOINT "+alias)
	}
	if _, derr := conn.ExecContext(context.WithoutCancel(ctx), "DETACH "+alias); err == nil {
		err = derr
	}
	if err != nil {
		_ = os.Remove(tmp)
		_ = os.Remove(tmp + ".wal")
		return "", err
	}
	if err := t.placeSnapshot(ctx, tb, tmp); err != nil {
		return "", err
	}
	return path, nil
}

// placeSnapshot renames the copy of tb written at tmp to its path, and
// removes it again when the table is gone by then (dropped meanwhile).
func (t *Toolset) placeSnapshot(ctx context.Context, tb *Table, tmp string) error {
	path := t.snapshotPath(tb.Name)
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	// A look at the catalog alone: one at every database (duckdb_tables())
	// would hold the copies other queries are writing, which then cannot
	// be checkpointed.
	rows, err := t.db.QueryContext(ctx, "SELECT * FROM "+catalog+"."+ident(tb.Name)+" LIMIT 0")
	if err == nil {
		err = rows.Close()
	}
	if err != nil {
		_ = os.Remove(path)
	}
	return err
}

// snapshotPath is where snapshot keeps the copy of the table named name.
func (t *Toolset) snapshotPath(name string) string {
	return filepath.Join(t.tmpDir, "tables", name+".duckdb")
}
