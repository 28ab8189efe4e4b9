package data

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
)

// csvDelimiters are the delimiters DuckDB's sniffer considers.
var csvDelimiters = []string{",", ";", "\t", "|"}

// csvOptions returns how to read a file: DuckDB's sniffer detects the
// dialect, held to a strict reading that reports a row with the wrong
// number of fields instead of skipping the rows before it or taking each
// line as one field.
func (t *Toolset) csvOptions(ctx context.Context, path, encoding string) (CSVOptions, error) {
	var opts CSVOptions
	if encoding != "utf-8" {
		opts.Encoding = encoding
	}
	columns := func(opts CSVOptions) ([][]any, error) {
		args, err := opts.args(path)
		if err != nil {
			return nil, err
		}
		rows, err := t.db.QueryContext(ctx, "DESCRIBE SELECT * FROM read_csv("+args+")")
		if err != nil {
			return nil, err
		}
		return scanAll(rows)
	}
	cols, err := columns(opts)
	if err != nil && strings.Contains(err.Error(), "Error when sniffing file") {
		// Mixed line endings, among others, need the lenient parser.
		lenient := opts
		lenient.Lenient = true
		if lcols, lerr := columns(lenient); lerr == nil {
			opts, cols, err = lenient, lcols, nil
		}
	}
	if err != nil || len(cols) == 1 {
		// The sniffer gave up, or took each line as one field: rows of
		// different lengths, most likely. Reading without the sniffer,
		// with the delimiter and the columns of the first line, says
		// which row is wrong.
		if d, header := firstLine(path); d != "" {
			fields := strings.Split(header, d)
			names := make([]string, len(fields))
			for i, f := range fields {
				names[i] = strings.Trim(strings.TrimSpace(f), `"`)
			}
			return CSVOptions{Encoding: opts.Encoding, Delim: d, Columns: names}, nil
		}
	}
	return opts, err
}

// firstLine returns the first of DuckDB's candidate delimiters in the
// first line of a file, and the line; "" when there is none.
func firstLine(path string) (delim, line string) {
	f, err := os.Open(path)
	if err != nil {
		return "", ""
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	n, _ := io.ReadFull(f, buf)
	line, _, _ = strings.Cut(string(buf[:n]), "\n")
	line = strings.TrimSuffix(strings.TrimPrefix(line, "\ufeff"), "\r")
	for _, d := range csvDelimiters {
		if strings.Contains(line, d) {
			return d, line
		}
	}
	return "", ""
}

// loadError explains a CSV that did not load.
func loadError(path string, err error) error {
	full := err.Error()
	err = engineError("cannot load "+path+" as CSV", err)
	switch {
	case strings.Contains(full, "Invalid unicode") || strings.Contains(full, "not utf-8"):
		return fmt.Errorf("%w: pass its encoding, e.g. \"encoding\": \"latin-1\"", err)
	case strings.Contains(full, "Expected Number of Columns"):
		return fmt.Errorf("%w: every row must have as many fields as the header; fix the file", err)
	}
	return err
}
