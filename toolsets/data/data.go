// Package data is the built-in toolset for tabular data on DuckDB: load a
// CSV file, look at it, clean, filter, reshape and query it, save it as
// CSV or Parquet. Tables stay on the server behind handles (package
// handle): a model passes "tbl_…" strings from tool to tool and reads
// short summaries, never the rows, unless it asks for some (head).
//
// File access is confined to the directories the toolset is given, and
// the SQL a model writes (query) runs over the tables it names and nothing
// else: DuckDB itself refuses file and network access, extension
// installs and configuration changes.
//
// With a DataDir, tables are Parquet files there instead of DuckDB
// tables in memory, so that several server replicas sharing the directory
// and a handle store (Redis) serve each other's tables.
//
// Importing the package also registers the toolset as "data" with package
// toolsets, which opens it with a Config (nil for the zero Config).
package data

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	_ "github.com/duckdb/duckdb-go/v2" // the "duckdb" database/sql driver

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolwire/toolwire/handle"
	"github.com/toolwire/toolwire/internal/allowdir"
	"github.com/toolwire/toolwire/internal/ctxkey"
	"github.com/toolwire/toolwire/tool"
	"github.com/toolwire/toolwire/toolsets"
)

func init() {
	toolsets.Register("data", func(ctx context.Context, cfg Config) (toolsets.Toolset, error) {
		t, err := Open(ctx, cfg)
		if err != nil {
			return nil, err // not a nil *Toolset in the interface
		}
		return t, nil
	})
}

// Config configures a toolset. The zero value serves the working
// directory, keeps tables in memory with a bound of DefaultMaxBytes, and
// lets them live handle.DefaultTTL after last use.
type Config struct {
	// Dirs are the directories whose files the tools may read and write
	// (and their subdirectories); empty means the working directory.
	// Relative paths a model passes are taken from the first one.
	Dirs []string
	// DataDir, when set, keeps tables as Parquet files in this directory
	// instead of in memory: replicas that share it and Store serve each
	// other's tables.
	DataDir string
	// Store keeps the table handles. Nil means an in-memory store with
	// TTL and MaxBytes, which drops a table's data when its handle goes.
	// A store of its own (Redis, shared by replicas) needs DataDir.
	Store handle.Store
	// TTL is how long an unused table lives, for the default store; zero
	// means handle.DefaultTTL.
	TTL time.Duration
	// MaxBytes bounds the tables kept, by their estimated size in memory
	// uncompressed, for the default store; zero means DefaultMaxBytes. A
	// table larger than the whole bound is refused; others make room by
	// dropping the least recently used. A CSV file load_csv read counts as
	// the table it makes, although the file stays where it is.
	MaxBytes int64
	// MemoryLimit bounds the memory of DuckDB's buffer manager (tables,
	// sorts, hash tables); zero means DefaultMemoryLimit. Data beyond it
	// spills to a temporary directory, removed by Close. DuckDB's other
	// allocations (a query's vectors, lists and strings in flight) are
	// outside it: MaxMemory bounds those.
	MemoryLimit int64
	// MaxMemory, when positive, bounds the memory the whole process may
	// take beyond what it holds when Open returns, below DuckDB: on
	// Linux, Open sets the process's RLIMIT_DATA (its private writable
	// memory, which address space merely reserved does not count
	// towards) to its current data size plus MaxMemory, so an allocation
	// past it fails and DuckDB reports it as an error instead of the
	// process growing until the system kills it. The limit is the
	// process's: set it where the process serves the toolset (toolwire
	// serve does, with --max-memory), and in one toolset only. It must
	// exceed MemoryLimit, which it includes. Zero leaves the process
	// unbounded; other systems than Linux refuse a positive value.
	MaxMemory int64
	// MaxTempBytes bounds the disk DuckDB spills to (its
	// max_temp_directory_size); zero means DefaultMaxTempBytes. A query
	// that would spill more fails.
	MaxTempBytes int64
	// QueryTimeout bounds the time of each tool call: DuckDB is
	// interrupted when it runs out, and the call fails. Zero means
	// DefaultQueryTimeout.
	QueryTimeout time.Duration
	// MaxResultRows bounds the rows of each table a tool computes (query,
	// filter, sort, …): DuckDB stops producing rows one past it, and the
	// call fails. Zero means DefaultMaxResultRows.
	MaxResultRows int64
}

// DefaultMaxBytes is the default bound of the tables a toolset keeps:
// 8 GiB, estimated uncompressed.
const DefaultMaxBytes = 8 << 30

// DefaultMemoryLimit is the default bound of DuckDB's buffer manager:
// 512 MiB.
const DefaultMemoryLimit = 512 << 20

// DefaultMaxTempBytes is the default bound of DuckDB's spill to disk:
// 8 GiB, as much as the tables a toolset keeps by default
// (DefaultMaxBytes), which spill there beyond MemoryLimit.
const DefaultMaxTempBytes = 8 << 30

// DefaultQueryTimeout is the default bound of a tool call's time: 2
// minutes, a fifth of an HTTP request's 10, so that a runaway query holds
// a DuckDB thread for no longer, while a CSV file of over 10 GB still
// loads (about 300 MB/s, bench/README.md).
const DefaultQueryTimeout = 2 * time.Minute

// DefaultMaxResultRows is the default bound of the rows of a table a tool
// computes: 100 million, 800 MB for one number column, well within the
// tables' bound (DefaultMaxBytes), and more than a model reads anything
// but a summary of.
const DefaultMaxResultRows = 100_000_000

// Table is a table behind a tbl_ handle: a DuckDB table, a Parquet file
// in the data directory, or a CSV file as load_csv read it.
type Table struct {
	// Name names the DuckDB table or, with Parquet set, the file
	// (Name + ".parquet" in the data directory).
	Name    string `json:"name"`
	Parquet bool   `json:"parquet,omitempty"`
	// File, when set, is the CSV file the table reads, unchanged since
	// load_csv read it; the tables made from it are DuckDB's.
	File *LoadedFile `json:"file,omitempty"`
	// Rows is the number of rows.
	Rows int64 `json:"rows"`
	// Columns are the table's columns, in order.
	Columns []Column `json:"columns"`
}

// LoadedFile is a CSV file as load_csv read it: where, how, and the size
// and modification time it had, which it must keep for its table to read
// it again.
type LoadedFile struct {
	Path    string     `json:"path"`
	CSV     CSVOptions `json:"csv"`
	Size    int64      `json:"size"`
	ModTime time.Time  `json:"modTime"`
}

// CSVOptions is how load_csv reads a CSV file: as values, from which the
// arguments of read_csv are written at each use, once checked, so that
// nothing kept in a store is pasted into SQL.
type CSVOptions struct {
	// Encoding is the file's text encoding: "" (UTF-8), latin-1 or
	// utf-16.
	Encoding string `json:"encoding,omitempty"`
	// Lenient reads with DuckDB's lenient parser (strict_mode = false),
	// which mixed line endings need, among others.
	Lenient bool `json:"lenient,omitempty"`
	// Delim, when set, reads without DuckDB's sniffer: fields separated
	// by Delim (one of csvDelimiters), a header line, and Columns, the
	// header's names, as text.
	Delim   string   `json:"delim,omitempty"`
	Columns []string `json:"columns,omitempty"`
}

// csvEncodings are the encodings load_csv reads, as read_csv names them;
// "" is UTF-8.
var csvEncodings = []string{"", "latin-1", "utf-16"}

// args returns the arguments of read_csv for the file at path, which the
// caller checked; it fails for options load_csv does not write.
func (o CSVOptions) args(path string) (string, error) {
	switch {
	case !slices.Contains(csvEncodings, o.Encoding):
		return "", corrupt("reads its file in an encoding load_csv does not name")
	case o.Delim == "" && len(o.Columns) > 0:
		return "", corrupt("reads its file with columns but no delimiter")
	case o.Delim != "" && (!slices.Contains(csvDelimiters, o.Delim) || len(o.Columns) == 0 || o.Lenient):
		return "", corrupt("reads its file with a delimiter, columns or leniency load_csv does not write")
	}
	args := sqlString(path) + ", skip = 0"
	if o.Encoding != "" {
		args += ", encoding = " + sqlString(o.Encoding)
	}
	if o.Lenient {
		args += ", strict_mode = false"
	}
	if o.Delim != "" {
		decl := make([]string, len(o.Columns))
		for i, c := range o.Columns {
			decl[i] = sqlString(c) + ": 'VARCHAR'"
		}
		args += ", delim = " + sqlString(o.Delim) + ", header = true, auto_detect = false, columns = {" + strings.Join(decl, ", ") + "}"
	}
	return args, nil
}

// unchanged reports an error when the file is not as it was loaded.
func (f *LoadedFile) unchanged() error {
	fi, err := os.Stat(f.Path)
	switch {
	case err != nil:
		return fmt.Errorf("%s, loaded as this table, is gone (%w): load the file again (load_csv)", f.Path, err)
	case fi.Size() != f.Size || !fi.ModTime().Equal(f.ModTime):
		return fmt.Errorf("%s changed since it was loaded as this table (%d bytes, modified %s; now %d bytes, modified %s): load the file again (load_csv)",
			f.Path, f.Size, f.ModTime.Format(time.RFC3339), fi.Size(), fi.ModTime().Format(time.RFC3339))
	}
	return nil
}

// corrupt is the error for a table, as a store returned it, that is not
// one this toolset writes: a forged or damaged entry in a shared store.
func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: the table %s; load the file again (load_csv)", handle.ErrCorrupt, fmt.Sprintf(format, args...))
}

// mintedTable and mintedFile are the names of the tables the toolset
// makes: t_ (a DuckDB table or a Parquet file) or f_ (a CSV file read
// where it is) and randomHex.
var (
	mintedTable = regexp.MustCompile(`^t_[0-9a-f]{24}$`)
	mintedFile  = regexp.MustCompile(`^f_[0-9a-f]{24}$`)
)

// valid checks a table as a store returned it. A shared store (Redis) is
// input like any other: whoever reaches it may have written the entry.
// The name must be one the toolset makes, so that no file outside the
// data directory is read or removed; a file must be one the tools may
// read; the counts must be counts.
func (t *Toolset) valid(tb *Table) error {
	minted := mintedTable
	if tb.File != nil {
		minted = mintedFile
	}
	if !minted.MatchString(tb.Name) {
		return corrupt("name is not one this server makes (t_ or f_ and 24 hex digits)")
	}
	if tb.Rows < 0 {
		return corrupt("has %d rows", tb.Rows)
	}
	for _, c := range tb.Columns {
		if c.Name == "" || c.Type == "" {
			return corrupt("has a column without a name or a type")
		}
	}
	if tb.File == nil {
		return nil
	}
	// load_csv keeps the real path of a file it may read (readable): in
	// the allowed directories, with no link nor .. in it.
	f := tb.File
	if !t.dirs.Within(f.Path) {
		return corrupt("file %.80q is not in the directories this server may use", f.Path)
	}
	if real, err := filepath.EvalSymlinks(f.Path); err == nil && real != f.Path {
		return corrupt("file %s is not its real path (%s)", f.Path, real)
	}
	return nil
}

// Column is a column of a table.
type Column struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// HandleKind names table handles: tbl_….
func (*Table) HandleKind() handle.Kind {
	return handle.Kind{Prefix: "tbl", Noun: "table", Again: "load the file again (load_csv)"}
}

// Toolset is the data tools over one DuckDB database. Close it when done.
type Toolset struct {
	db      *sql.DB
	store   handle.Store
	dirs    allowdir.Dirs
	dataDir string // absolute, symlinks resolved; "" for tables in memory
	tmpDir  string // where DuckDB spills, removed by Close
	bounds  bounds
	tmpLock *os.File // held while the toolset is open (lockTemp)
	spare   spare    // the next query's database, opened ahead
}

// Open opens a toolset: an in-memory DuckDB database locked down to the
// allowed directories (and the data directory), with no network access,
// no extension installs and no configuration changes after this.
func Open(ctx context.Context, cfg Config) (*Toolset, error) {
	dirs, err := allowdir.Open(cfg.Dirs)
	if err != nil {
		return nil, fmt.Errorf("data: %w", err)
	}
	b, err := newBounds(cfg)
	if err != nil {
		return nil, err
	}
	t := &Toolset{bounds: b, dirs: dirs}
	if cfg.DataDir != "" {
		real, err := allowdir.RealDir(cfg.DataDir)
		if err != nil {
			return nil, fmt.Errorf("data: data directory: %w", err)
		}
		t.dataDir = real
	}
	sweepTemp() // what toolsets killed left
	tmp, err := os.MkdirTemp("", "toolwire-data-")
	if err != nil {
		return nil, fmt.Errorf("data: a temporary directory for DuckDB: %w", err)
	}
	t.tmpDir = tmp
	if t.tmpLock, err = lockTemp(tmp); err != nil {
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("data: locking the temporary directory for DuckDB: %w", err)
	}
	db, err := sql.Open("duckdb", "")
	if err != nil {
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("data: opening DuckDB: %w", err)
	}
	t.db = db
	if err := t.lockDown(ctx); err != nil {
		t.Close()
		return nil, err
	}
	t.store = cfg.Store
	if t.store != nil && t.dataDir == "" {
		t.Close()
		return nil, errors.New("data: a shared handle store needs a data directory (DataDir) for the tables")
	}
	if t.store == nil {
		max := cfg.MaxBytes
		if max == 0 {
			max = DefaultMaxBytes
		}
		t.store = &handle.Memory{TTL: cfg.TTL, MaxBytes: max, OnDrop: t.dropEntry}
	}
	if t.dataDir != "" {
		t.sweep() // what replicas that died left
	}
	if cfg.MaxMemory > 0 {
		if err := t.bounds.limitMemory(); err != nil {
			t.Close()
			return nil, err
		}
	}
	return t, nil
}

// lockDown applies DuckDB's own safeguards: files only in the allowed
// directories, nothing else from outside, and the configuration locked.
func (t *Toolset) lockDown(ctx context.Context) error {
	allowed := make([]string, 0, len(t.dirs)+2)
	for _, d := range append(append([]string(nil), t.dirs...), t.dataDir, t.tmpDir) {
		if d != "" {
			allowed = append(allowed, sqlString(strings.TrimSuffix(d, string(filepath.Separator))+string(filepath.Separator)))
		}
	}
	for _, s := range []string{
		// Tables live in an in-memory catalog of their own, compressed
		// as DuckDB compresses tables on disk.
		"ATTACH ':memory:' AS " + catalog + " (COMPRESS)",
		fmt.Sprintf("SET memory_limit = '%dMiB'", max(t.bounds.memoryLimit>>20, 1)),
		"SET temp_directory = " + sqlString(t.tmpDir),
		fmt.Sprintf("SET max_temp_directory_size = '%dMiB'", max(t.bounds.maxTemp>>20, 1)),
		"SET allowed_directories = [" + strings.Join(allowed, ", ") + "]",
		"SET autoinstall_known_extensions = false",
		"SET autoload_known_extensions = false",
		"SET enable_external_access = false",
		"SET lock_configuration = true",
	} {
		if _, err := t.db.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("data: configuring DuckDB (%s): %w", s, err)
		}
	}
	return nil
}

// Close closes the database. Tables kept in memory are gone; Parquet
// files in the data directory stay for the other replicas.
func (t *Toolset) Close() error {
	t.spare.close()
	err := t.db.Close()
	if rerr := os.RemoveAll(t.tmpDir); err == nil {
		err = rerr
	}
	if t.tmpLock != nil {
		t.tmpLock.Close()
	}
	return err
}

// dropEntry drops the data of a table whose handle the store dropped.
func (t *Toolset) dropEntry(e handle.Entry) {
	tb, ok := e.Value.(*Table)
	if !ok {
		return
	}
	_ = t.drop(tb)
}

// drop removes a table's data; a table that is not valid has none it may
// remove.
func (t *Toolset) drop(tb *Table) error {
	if err := t.valid(tb); err != nil {
		return err
	}
	if tb.File != nil {
		return nil // the file is the user's
	}
	if tb.Parquet {
		_ = os.Remove(t.parquetPath(tb.Name))
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, _ = t.db.ExecContext(ctx, "DROP TABLE IF EXISTS "+catalog+"."+ident(tb.Name))
	_ = os.Remove(t.snapshotPath(tb.Name)) // after the table: see snapshot
	return nil
}

func (t *Toolset) parquetPath(name string) string {
	return filepath.Join(t.dataDir, name+".parquet")
}

// rel is the SQL relation of a table; it fails for a loaded file that
// changed since. Using a Parquet table marks its file used now, for sweep.
func (t *Toolset) rel(tb *Table) (string, error) {
	if err := t.valid(tb); err != nil {
		return "", err
	}
	switch {
	case tb.File != nil:
		if err := tb.File.unchanged(); err != nil {
			return "", err
		}
		args, err := tb.File.CSV.args(tb.File.Path)
		if err != nil {
			return "", err
		}
		return "read_csv(" + args + ")", nil
	case tb.Parquet:
		now := time.Now()
		_ = os.Chtimes(t.parquetPath(tb.Name), now, now) // a missing file fails the query itself
		return "read_parquet(" + sqlString(t.parquetPath(tb.Name)) + ")", nil
	}
	return catalog + "." + ident(tb.Name), nil
}

// catalog is the in-memory DuckDB catalog of the tables.
const catalog = "tables"

// staleWrite is the age past which a Parquet file being written
// (.parquet.tmp) was left by a replica that died while writing it: no
// write lasts that long (requests time out after 10 minutes), so no live
// replica is still writing it.
const staleWrite = time.Hour

// sweep removes what no replica uses from the data directory: the Parquet
// tables no replica used for twice the handles' lifetime (their handles
// expired in the shared store, which tells no one), and the files a
// replica killed while writing a table left, once older than staleWrite
// and than the tables swept.
func (t *Toolset) sweep() {
	now := time.Now()
	ttl := 2 * t.store.EntryTTL()
	for pattern, age := range map[string]time.Duration{"t_*.parquet": ttl, "t_*.parquet.tmp": max(ttl, staleWrite)} {
		files, err := filepath.Glob(filepath.Join(t.dataDir, pattern))
		if err != nil {
			continue
		}
		for _, f := range files {
			if fi, err := os.Stat(f); err == nil && fi.ModTime().Before(now.Add(-age)) {
				_ = os.Remove(f)
			}
		}
	}
}

// materialize keeps the rows of the SELECT statement sel as a new table
// (run by q) and returns its handle and summary. A table the store refuses (too
// large) is dropped again: nothing is left half-stored.
func (t *Toolset) materialize(ctx context.Context, q execer, sel string, args ...any) (TableInfo, error) {
	tb := t.newTable()
	if err := t.write(ctx, q, tb, sel, args...); err != nil {
		return TableInfo{}, err
	}
	return t.keep(ctx, tb)
}

// newTable names a new table, in the data directory when there is one.
func (t *Toolset) newTable() *Table {
	return &Table{Name: "t_" + randomHex(), Parquet: t.dataDir != ""}
}

// write writes the rows of the SELECT statement sel (run by q) as the
// new table tb, for keep: its Parquet file, in place once complete, or
// its DuckDB table.
func (t *Toolset) write(ctx context.Context, q execer, tb *Table, sel string, args ...any) error {
	sel = t.bounds.limitRows(sel)
	if !tb.Parquet {
		_, err := q.ExecContext(ctx, "CREATE TABLE "+catalog+"."+ident(tb.Name)+" AS "+sel, args...)
		return err
	}
	t.sweep()
	final := t.parquetPath(tb.Name)
	tmp := final + ".tmp"
	if _, err := q.ExecContext(ctx, "COPY ("+sel+") TO "+sqlString(tmp)+" (FORMAT parquet)", args...); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, final); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("keeping the table in the data directory: %w", err)
	}
	return nil
}

// keep summarizes a new table and puts it in the store, or drops it again
// when it has more rows than allowed or the store refuses it (too large):
// nothing is left half-stored.
func (t *Toolset) keep(ctx context.Context, tb *Table) (TableInfo, error) {
	info, size, err := t.summarize(ctx, tb)
	if err == nil && info.Rows > t.bounds.maxRows {
		err = t.bounds.rowsError()
	}
	if err == nil {
		info.Table, err = handle.Put(ctx, t.store, tb, size)
	}
	if err != nil {
		_ = t.drop(tb)
		return TableInfo{}, err
	}
	if sp, ok := ctx.Value(ctxkey.ToolSpan{}).(trace.Span); ok && sp.IsRecording() {
		// On the call's execute_tool span: the rows and bytes the call
		// made.
		sp.SetAttributes(attribute.Int64("db.response.returned_rows", info.Rows), attribute.Int64("toolwire.data.table_bytes", size))
	}
	return info, nil
}

// summarize fills tb's columns and rows and returns the summary a model
// reads and the table's size in memory (estimated: 8 bytes a fixed-width
// value, 16 bytes plus the text for a string).
func (t *Toolset) summarize(ctx context.Context, tb *Table) (TableInfo, int64, error) {
	from, err := t.rel(tb)
	if err != nil {
		return TableInfo{}, 0, err
	}
	rows, err := t.db.QueryContext(ctx, "DESCRIBE SELECT * FROM "+from)
	if err != nil {
		return TableInfo{}, 0, fmt.Errorf("reading the table's columns: %w", err)
	}
	cols, err := scanAll(rows)
	if err != nil {
		return TableInfo{}, 0, fmt.Errorf("reading the table's columns: %w", err)
	}
	tb.Columns = tb.Columns[:0]
	exprs := []string{"count(*)"}
	var strs []string
	for _, c := range cols {
		col := Column{Name: fmt.Sprint(c[0]), Type: fmt.Sprint(c[1])}
		tb.Columns = append(tb.Columns, col)
		exprs = append(exprs, "count("+ident(col.Name)+")")
		if col.Type == "VARCHAR" {
			strs = append(strs, "coalesce(sum(strlen("+ident(col.Name)+")), 0)")
		}
	}
	if len(strs) == 0 {
		strs = []string{"0"}
	}
	exprs = append(exprs, strings.Join(strs, " + "))
	vals := make([]int64, len(exprs))
	ptrs := make([]any, len(exprs))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := t.db.QueryRowContext(ctx, "SELECT "+strings.Join(exprs, ", ")+" FROM "+from).Scan(ptrs...); err != nil {
		return TableInfo{}, 0, fmt.Errorf("counting the table's rows: %w", err)
	}
	tb.Rows = vals[0]
	info := TableInfo{Rows: tb.Rows, Columns: make([]string, len(tb.Columns))}
	var nstr int64
	for i, c := range tb.Columns {
		info.Columns[i] = c.Name
		info.Missing += tb.Rows - vals[i+1]
		if c.Type == "VARCHAR" {
			nstr++
		}
	}
	size := tb.Rows*(8*(int64(len(tb.Columns))-nstr)+16*nstr) + vals[len(vals)-1]
	if tb.Parquet {
		if fi, err := os.Stat(t.parquetPath(tb.Name)); err == nil {
			size = fi.Size()
		}
	}
	return info, size, nil
}

// Tools returns the toolset's tools.
func (t *Toolset) Tools() []tool.Tool {
	return []tool.Tool{
		t.loadCSV(), t.head(), t.describe(), t.dropMissing(), t.filter(), t.selectColumns(),
		t.sort(), t.groupBy(), t.query(), t.saveCSV(), t.saveParquet(), t.release(),
	}
}

// scanAll reads every row of rows as values.
func scanAll(rows *sql.Rows) ([][]any, error) {
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out [][]any
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		out = append(out, vals)
	}
	return out, rows.Err()
}

// ident quotes a SQL identifier.
func ident(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// sqlString quotes a SQL string literal.
func sqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func randomHex() string {
	var b [12]byte
	_, _ = rand.Read(b[:]) // never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}

// serverFile matches the paths and names of files in an error message
// that are the server's, not the model's: tables' files (the data
// directory holds every caller's) and DuckDB's temporary directory.
var serverFile = regexp.MustCompile(`[^\s'"]*(?:\bt_[0-9a-f]{24}\b|toolwire-data-)[^\s'"]*`)

// engineError rewrites a DuckDB error for a model: the lines that say
// what is wrong, without DuckDB's list of options to try, and without
// the server's files (serverFile).
func engineError(what string, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var he *handle.Error
	if errors.As(err, &he) || errors.Is(err, handle.ErrTooLarge) || errors.Is(err, handle.ErrUnavailable) {
		return err
	}
	var keep []string
	for _, line := range strings.Split(err.Error(), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "Possible") || strings.HasPrefix(line, "file =") || strings.HasPrefix(line, "LINE ") ||
			strings.HasPrefix(line, "The search space") {
			break
		}
		if line != "" && !strings.HasPrefix(line, "Original Line") {
			keep = append(keep, line)
		}
	}
	msg := serverFile.ReplaceAllString(strings.Join(keep, " "), "(a server file)")
	if len(msg) > 400 {
		msg = msg[:397] + "..."
	}
	return fmt.Errorf("%s: %s", what, msg)
}
