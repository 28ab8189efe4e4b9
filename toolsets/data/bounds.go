package data

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// bounds are what a toolset allows each tool call: DuckDB's buffer
// memory, the process's memory, the disk DuckDB spills to, the time and
// the rows of a table made. Their errors name the toolwire flag that
// raises each.
type bounds struct {
	memoryLimit int64         // DuckDB's buffer manager (memory_limit)
	maxMemory   int64         // the process, beyond what it held at Open (RLIMIT_DATA); 0: none
	maxTemp     int64         // DuckDB's spill (max_temp_directory_size)
	timeout     time.Duration // each tool call
	maxRows     int64         // each table a tool computes
}

// newBounds returns cfg's bounds, with the defaults for those unset.
func newBounds(cfg Config) (bounds, error) {
	b := bounds{memoryLimit: cfg.MemoryLimit, maxMemory: cfg.MaxMemory, maxTemp: cfg.MaxTempBytes, timeout: cfg.QueryTimeout, maxRows: cfg.MaxResultRows}
	if b.memoryLimit == 0 {
		b.memoryLimit = DefaultMemoryLimit
	}
	if b.maxTemp == 0 {
		b.maxTemp = DefaultMaxTempBytes
	}
	if b.timeout == 0 {
		b.timeout = DefaultQueryTimeout
	}
	if b.maxRows == 0 {
		b.maxRows = DefaultMaxResultRows
	}
	switch {
	case b.memoryLimit < 0 || b.maxMemory < 0 || b.maxTemp < 0 || b.timeout < 0 || b.maxRows < 0:
		return bounds{}, errors.New("data: a bound is negative: give each a positive value, or 0 for its default")
	case b.maxMemory > 0 && b.maxMemory <= b.memoryLimit:
		return bounds{}, fmt.Errorf("data: the process's memory bound (--max-memory, %s) must exceed DuckDB's buffer memory (--memory-limit, %s), which it includes",
			bytesText(b.maxMemory), bytesText(b.memoryLimit))
	}
	return b, nil
}

// errTimeLimit is the cause of a tool call's context when the call ran
// out of time.
var errTimeLimit = errors.New("the data server's time limit per call")

// withTimeLimit bounds the time of a tool call: DuckDB, running under the
// context returned, is interrupted when it runs out.
func (b bounds) withTimeLimit(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(ctx, b.timeout, errTimeLimit)
}

// explain says which bound a tool call's error is, and how to raise it;
// other errors it returns as they are. ctx is the call's, from
// withTimeLimit.
func (b bounds) explain(ctx context.Context, err error) error {
	msg := err.Error()
	switch {
	case errors.Is(context.Cause(ctx), errTimeLimit):
		return fmt.Errorf("stopped after %s, the data server's time limit per call (--query-timeout): "+
			"make the work smaller (filter, select or aggregate first), or raise the limit", b.timeout)
	case errors.Is(ctx.Err(), context.Canceled):
		// The caller cancelled: DuckDB, interrupted, may say only
		// "Interrupted!", which is not the reason.
		return ctx.Err()
	case strings.Contains(msg, "max_temp_directory_size"):
		return fmt.Errorf("%w: the data server's bound on the disk a query spills to (--max-temp-bytes, %s): "+
			"make the work smaller (filter, select or aggregate first), or raise the bound", err, bytesText(b.maxTemp))
	case strings.Contains(msg, "Out of Memory Error") && b.bufferFull(msg):
		return fmt.Errorf("%w: DuckDB's buffer memory (--memory-limit, %s) is full, and it cannot spill this: "+
			"make the work smaller (filter, select or aggregate first), or raise the bound", err, bytesText(b.memoryLimit))
	case strings.Contains(msg, "Out of Memory Error") || strings.Contains(msg, "bad_alloc"):
		bound := "the memory the system gives the data server"
		if b.maxMemory > 0 {
			bound = "the data server's memory bound (--max-memory, " + bytesText(b.maxMemory) + " beyond what it holds idle)"
		}
		return fmt.Errorf("%w: the query needs more than %s: make it need less (smaller lists and strings, fewer rows at once), "+
			"or raise the bound", err, bound)
	}
	return err
}

// outOfMemory is how DuckDB says that an allocation failed: its size and
// the buffer manager's use and limit (memory_limit), whether the buffer
// manager refused the allocation or the system did (--max-memory).
var outOfMemory = regexp.MustCompile(`of size ([0-9.]+ [A-Za-z]+) \(([0-9.]+ [A-Za-z]+)/([0-9.]+ [A-Za-z]+) used\)`)

// bufferFull reports whether DuckDB's out-of-memory error msg is its
// buffer manager's, at memory_limit, rather than the process's bound: the
// allocation fits what the process may still take, and not what the
// buffer manager has left.
func (b bounds) bufferFull(msg string) bool {
	if strings.Contains(msg, "could not allocate block") {
		return true // the buffer manager's own words
	}
	m := outOfMemory.FindStringSubmatch(msg)
	if m == nil {
		return false
	}
	size, used, limit := duckdbBytes(m[1]), duckdbBytes(m[2]), duckdbBytes(m[3])
	if free, ok := memoryLeft(); ok && b.maxMemory > 0 && size > free {
		return false
	}
	return used+size > limit
}

// duckdbBytes reads a size as DuckDB writes it ("4.0 GiB", "512 bytes");
// 0 when it cannot.
func duckdbBytes(s string) int64 {
	num, unit, _ := strings.Cut(s, " ")
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0
	}
	for i, u := range []string{"bytes", "KiB", "MiB", "GiB", "TiB"} {
		if unit == u {
			return int64(f * float64(int64(1)<<(10*i)))
		}
	}
	return 0
}

// limitRows is the SELECT statement sel stopped one row past the rows
// bound: DuckDB never makes the rows beyond.
func (b bounds) limitRows(sel string) string {
	return "SELECT * FROM (" + sel + ") LIMIT " + strconv.FormatInt(b.maxRows+1, 10)
}

// rowsError says that a table a tool computed has more rows than allowed.
func (b bounds) rowsError() error {
	return fmt.Errorf("the result has more than %d rows, the data server's bound on a table's rows (--max-result-rows): "+
		"filter or aggregate to fewer rows, or raise the bound", b.maxRows)
}
