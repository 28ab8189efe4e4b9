// Package demo runs the CSV flow — read a CSV, drop the rows with
// missing values, describe what is left — over MCP against the data
// toolset, and measures what a model reads compared with the naive flow
// in which tools return the rows and the model passes them on.
package demo

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strconv"

	"github.com/toolwire/toolwire/mcp"
)

// Step is one tool call of the flow.
type Step struct {
	Tool string
	// Args is what the model wrote; Result what it read back.
	Args   string
	Result string
	// DataBytes is the size of the data the tool worked on.
	DataBytes int64
}

// Report is the flow as run, and the naive flow's size for comparison.
type Report struct {
	Steps []Step
	// Handle is the bytes a model reads and writes in the flow with
	// handles: every argument and result.
	Handle int64
	// Naive is the same for the naive flow: load returns the file's rows,
	// the model passes them to drop_missing, which returns the cleaned
	// rows, which the model passes to describe, which returns what
	// describe returned here.
	Naive int64
	// Cleaned is the cleaned table's handle.
	Cleaned string
}

// Tokens estimates tokens from bytes, the same way for both flows: four
// bytes a token.
func Tokens(bytes int64) int64 { return (bytes + 3) / 4 }

// Run runs the flow on the CSV file at path (as the server sees it;
// local is the same file as this process sees it, for its size) over
// the session.
func Run(ctx context.Context, cs *mcp.ClientSession, path, local string) (*Report, error) {
	raw, err := os.ReadFile(local)
	if err != nil {
		return nil, err
	}
	cleaned, err := DropMissing(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	r := &Report{}
	call := func(name string, args map[string]any, data int64) (string, error) {
		b, _ := json.Marshal(args) // strings only: encoding cannot fail
		res, err := cs.CallTool(ctx, name, b)
		if err != nil {
			return "", fmt.Errorf("%s: %w", name, err)
		}
		text := res.ToolResult().ForModel().Text
		if res.IsError {
			return "", fmt.Errorf("%s: %s", name, text)
		}
		r.Steps = append(r.Steps, Step{Tool: name, Args: string(b), Result: text, DataBytes: data})
		r.Handle += int64(len(b) + len(text))
		return text, nil
	}
	handleOf := func(text string) (string, error) {
		var out struct {
			Table string `json:"table"`
		}
		if err := json.Unmarshal([]byte(text), &out); err != nil || out.Table == "" {
			return "", fmt.Errorf("no table handle in %q", text)
		}
		return out.Table, nil
	}
	text, err := call("load_csv", map[string]any{"path": path}, int64(len(raw)))
	if err != nil {
		return nil, err
	}
	loaded, err := handleOf(text)
	if err != nil {
		return nil, err
	}
	if text, err = call("drop_missing", map[string]any{"table": loaded}, int64(len(raw))); err != nil {
		return nil, err
	}
	if r.Cleaned, err = handleOf(text); err != nil {
		return nil, err
	}
	described, err := call("describe", map[string]any{"table": r.Cleaned}, int64(len(cleaned)))
	if err != nil {
		return nil, err
	}
	// The naive flow: the rows come back, are passed on as arguments,
	// come back cleaned, and are passed on again.
	r.Naive = int64(len(raw))*2 + int64(len(cleaned))*2 + int64(len(described))
	return r, nil
}

// Print writes what each tool returned to the model next to the size of
// the data it handled, and the two flows' sizes.
func (r *Report) Print(w io.Writer) {
	for _, s := range r.Steps {
		fmt.Fprintf(w, "→ %s %s   (data: %s)\n← %s\n\n", s.Tool, s.Args, size(s.DataBytes), s.Result)
	}
	fmt.Fprintf(w, "The model read and wrote %s (~%d tokens) with handles; passing the rows, it would have been %s (~%d tokens): %.2f%%.\n",
		size(r.Handle), Tokens(r.Handle), size(r.Naive), Tokens(r.Naive), 100*float64(r.Handle)/float64(r.Naive))
}

func size(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f kB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// DropMissing computes the cleaned table directly, without DuckDB: the
// CSV's rows (header first) without those that have an empty field,
// written as CSV.
func DropMissing(r io.Reader) ([]byte, error) {
	cr := csv.NewReader(r)
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	for first := true; ; first = false {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if !first && hasEmpty(rec) {
			continue
		}
		if err := w.Write(rec); err != nil {
			return nil, err
		}
	}
	w.Flush()
	return buf.Bytes(), w.Error()
}

func hasEmpty(rec []string) bool {
	for _, f := range rec {
		if f == "" {
			return true
		}
	}
	return false
}

// SameCells compares two CSV texts cell for cell: numbers as numbers
// (DuckDB writes 12.50 as 12.5), everything else as text. It returns a
// description of the first difference, or "".
func SameCells(a, b io.Reader) (string, error) {
	ra, rb := csv.NewReader(a), csv.NewReader(b)
	for row := 0; ; row++ {
		x, errA := ra.Read()
		y, errB := rb.Read()
		if errA == io.EOF && errB == io.EOF {
			return "", nil
		}
		if errA != nil || errB != nil {
			if errA == io.EOF || errB == io.EOF {
				return fmt.Sprintf("row %d: one table ends before the other", row), nil
			}
			return "", fmt.Errorf("row %d: %v / %v", row, errA, errB)
		}
		if len(x) != len(y) {
			return fmt.Sprintf("row %d: %d cells vs %d", row, len(x), len(y)), nil
		}
		for i := range x {
			if x[i] == y[i] {
				continue
			}
			fx, e1 := strconv.ParseFloat(x[i], 64)
			fy, e2 := strconv.ParseFloat(y[i], 64)
			if e1 != nil || e2 != nil || fx != fy {
				return fmt.Sprintf("row %d, column %d: %q vs %q", row, i, x[i], y[i]), nil
			}
		}
	}
}

// GenerateCSV writes a sales table of n rows (date, region, product,
// units, price, note) with about 1% of its cells missing, the same for
// the same seed. Notes hold commas and quotes, as real exports do.
func GenerateCSV(w io.Writer, n int, seed uint64) error {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	regions := []string{"north", "south", "east", "west", "central"}
	products := []string{"apple", "pear", "plum", "cherry", "grape", "melon", "kiwi", "lemon"}
	notes := []string{"ok", "late delivery", "damaged, partly", `customer said "fine"`, "repeat order", "promo"}
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"date", "region", "product", "units", "price", "note"}); err != nil {
		return err
	}
	rec := make([]string, 6)
	for i := range n {
		rec[0] = fmt.Sprintf("2024-%02d-%02d", 1+i%12, 1+i%28)
		rec[1] = regions[rng.IntN(len(regions))]
		rec[2] = products[rng.IntN(len(products))]
		rec[3] = strconv.Itoa(1 + rng.IntN(50))
		rec[4] = strconv.FormatFloat(float64(50+rng.IntN(2000))/100, 'f', 2, 64)
		rec[5] = notes[rng.IntN(len(notes))]
		for c := 1; c < 6; c++ { // dates are never missing
			if rng.IntN(100) == 0 {
				rec[c] = ""
			}
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
