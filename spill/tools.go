package spill

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/itchyny/gojq"

	"github.com/toolwire/toolwire/handle"
	"github.com/toolwire/toolwire/internal/allowdir"
	"github.com/toolwire/toolwire/tool"
)

// maxQueryInput is the largest JSON query_result runs over: a query
// decodes it whole, which takes several times its size in memory.
const maxQueryInput = 64 << 20

// own is one of this package's tools: it takes result handles itself,
// and its results are never kept.
type own struct{ tool.Tool }

func (own) readsResults() {}

// Tools returns the tools that read kept results back: read_result
// (lines or bytes), query_result (a jq expression over JSON) and
// save_result (to a file in Dirs). Three tools rather than one with
// modes: each does one thing its name says, so a model picks it from the
// list and its parameters need no rules about which go together.
func (r *Results) Tools() ([]tool.Tool, error) {
	dirs, err := allowdir.Open(r.Dirs)
	if err != nil {
		return nil, fmt.Errorf("spill: save_result: %w", err)
	}
	s := r.store()
	yes, no := true, false
	read, err := handle.Tool(s, "read_result",
		"Reads part of a large tool result kept behind a handle (res_…): lines start_line to end_line (from 1), "+
			"or length bytes from offset (from 0). Returns at most "+fmt.Sprint(r.maxOutput())+" bytes; read on from where it stops.",
		r.read)
	if err != nil {
		return nil, err
	}
	query, err := handle.Tool(s, "query_result",
		"Runs a jq expression over a large JSON tool result kept behind a handle (res_…) and returns its outputs, one JSON value a line: "+
			"e.g. `.items | length`, `.items[0:5]`, `[.items[] | select(.price > 10) | .name]`, `keys`. "+
			"Returns at most "+fmt.Sprint(r.maxOutput())+" bytes and runs at most "+r.queryTimeout().String()+".",
		r.query)
	if err != nil {
		return nil, err
	}
	save, err := handle.Tool(s, "save_result",
		"Writes the whole of a tool result kept behind a handle (res_…) to a file, replacing it if it exists: its text, its JSON, "+
			"or a binary resource's bytes. The file must be in "+strings.Join(dirs, ", ")+" (relative paths start at "+dirs[0]+").",
		func(ctx context.Context, in saveIn) (string, error) { return save(ctx, dirs, in) })
	if err != nil {
		return nil, err
	}
	// Reading changes nothing; saving replaces the file there was
	// (destructive), the same file for the same call (idempotent).
	read = read.WithInfo(func(i *tool.Info) {
		i.Title = "Read a kept result"
		i.Annotations = &tool.Annotations{ReadOnlyHint: &yes, DestructiveHint: &no, IdempotentHint: &yes, OpenWorldHint: &no}
	})
	query = query.WithInfo(func(i *tool.Info) {
		i.Title = "Query a kept JSON result"
		i.Annotations = &tool.Annotations{ReadOnlyHint: &yes, DestructiveHint: &no, IdempotentHint: &yes, OpenWorldHint: &no}
	})
	save = save.WithInfo(func(i *tool.Info) {
		i.Title = "Save a kept result to a file"
		i.Annotations = &tool.Annotations{ReadOnlyHint: &no, DestructiveHint: &yes, IdempotentHint: &yes, OpenWorldHint: &no}
	})
	return []tool.Tool{own{read}, own{query}, own{save}}, nil
}

func (r *Results) queryTimeout() time.Duration {
	if r.QueryTimeout > 0 {
		return r.QueryTimeout
	}
	return DefaultQueryTimeout
}

type readIn struct {
	Handle    handle.Of[*Value] `json:"handle"`
	StartLine int               `json:"start_line,omitempty" jsonschema:"minimum=1" description:"First line to read, from 1 (default 1)"`
	EndLine   int               `json:"end_line,omitempty" jsonschema:"minimum=1" description:"Last line to read, included (default: as many as fit)"`
	Offset    int64             `json:"offset,omitempty" jsonschema:"minimum=0" description:"To read bytes instead of lines: the first byte, from 0"`
	Length    int64             `json:"length,omitempty" jsonschema:"minimum=1" description:"To read bytes: how many, from offset (default: as many as fit)"`
}

// read is read_result.
func (r *Results) read(_ context.Context, in readIn) (string, error) {
	text, limit := in.Handle.Value().text(), r.maxOutput()
	byLines := in.StartLine > 0 || in.EndLine > 0
	if byLines && (in.Offset > 0 || in.Length > 0) {
		return "", errors.New("pass start_line and end_line, or offset and length, not both")
	}
	if !byLines && (in.Offset > 0 || in.Length > 0) {
		return readBytes(text, in.Offset, in.Length, limit)
	}
	return readLines(text, max(in.StartLine, 1), in.EndLine, limit)
}

// readBytes returns length bytes of text from offset, at most limit, with
// a line saying which.
func readBytes(text string, offset, length int64, limit int) (string, error) {
	size := int64(len(text))
	if offset >= size {
		return "", fmt.Errorf("offset %d is past the end: the value has %d bytes (offsets 0 to %d)", offset, size, size-1)
	}
	end := size
	if length > 0 {
		end = min(end, offset+length)
	}
	if end-offset > int64(limit) { // cut, on a character boundary
		end = offset + int64(len(cutUTF8(text[offset:], limit)))
	}
	chunk := text[offset:end]
	note := ""
	if end < size && (length == 0 || end < offset+length) {
		note = fmt.Sprintf("; cut at %d bytes, read on at offset %d", limit, end)
	}
	return fmt.Sprintf("[bytes %d to %d of %d%s]\n%s", offset, end-1, size, note, chunk), nil
}

// readLines returns lines from to through to (0: as many as fit), at most
// limit bytes, with a line saying which.
func readLines(text string, from, to, limit int) (string, error) {
	total := lineCount(text)
	if from > total {
		return "", fmt.Errorf("start_line %d is past the end: the value has %d lines", from, total)
	}
	if to > 0 && to < from {
		return "", fmt.Errorf("end_line %d is before start_line %d", to, from)
	}
	if to == 0 || to > total {
		to = total
	}
	start := 0
	for line := 1; line < from; line++ {
		start += strings.IndexByte(text[start:], '\n') + 1
	}
	end, last := start, from-1
	for last < to {
		nl := strings.IndexByte(text[end:], '\n')
		next := len(text)
		if nl >= 0 {
			next = end + nl + 1
		}
		if next-start > limit {
			break
		}
		end, last = next, last+1
	}
	if last < from { // the first line alone is over max
		return fmt.Sprintf("[line %d is longer than %d bytes: read it by bytes, from offset %d]\n%s", from, limit, start, cutUTF8(text[start:], limit)), nil
	}
	note := ""
	if last < to {
		note = fmt.Sprintf("; cut at %d bytes, read on from line %d", limit, last+1)
	}
	return fmt.Sprintf("[lines %d to %d of %d%s]\n%s", from, last, total, note, text[start:end]), nil
}

type queryIn struct {
	Handle handle.Of[*Value] `json:"handle"`
	Jq     string            `json:"jq" description:"A jq expression, run over the whole JSON value"`
}

// query is query_result.
func (r *Results) query(ctx context.Context, in queryIn) (string, error) {
	v := in.Handle.Value()
	doc := v.JSON
	if doc == nil {
		if v.Blob != "" || !json.Valid([]byte(v.Text)) {
			return "", fmt.Errorf("%s holds text that is not JSON: read it with read_result instead", in.Handle.ID)
		}
		doc = json.RawMessage(v.Text)
	}
	if len(doc) > maxQueryInput {
		return "", fmt.Errorf("%s holds %d bytes of JSON, more than query_result takes (%d): read it with read_result, or save it with save_result", in.Handle.ID, len(doc), maxQueryInput)
	}
	q, err := gojq.Parse(in.Jq)
	if err != nil {
		return "", fmt.Errorf("the jq expression does not parse: %w", err)
	}
	code, err := gojq.Compile(q)
	if err != nil {
		return "", fmt.Errorf("the jq expression does not compile: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var input any
	if err := dec.Decode(&input); err != nil {
		return "", fmt.Errorf("%s: decoding its JSON: %w", in.Handle.ID, err)
	}
	ctx, cancel := context.WithTimeout(ctx, r.queryTimeout())
	defer cancel()
	var out strings.Builder
	limit := r.maxOutput()
	iter := code.RunWithContext(ctx, input)
	for {
		x, ok := iter.Next()
		if !ok {
			break
		}
		if err, isErr := x.(error); isErr {
			var halt *gojq.HaltError
			if errors.As(err, &halt) && halt.Value() == nil {
				break
			}
			if ctx.Err() != nil {
				return "", fmt.Errorf("the jq expression ran past its time limit (%s): make it do less, e.g. take a slice .[0:100] first", r.queryTimeout())
			}
			return "", fmt.Errorf("jq: %w", err)
		}
		b, err := gojq.Marshal(x)
		if err != nil {
			return "", fmt.Errorf("jq: encoding an output: %w", err)
		}
		if out.Len()+len(b)+1 > limit {
			return "", fmt.Errorf("the jq expression's output passed %d bytes: narrow it (a slice like .[0:20], select(...), length, keys)", limit)
		}
		out.Write(b)
		out.WriteByte('\n')
	}
	if out.Len() == 0 {
		return "(no output)", nil
	}
	return out.String(), nil
}

type saveIn struct {
	Handle handle.Of[*Value] `json:"handle"`
	Path   string            `json:"path" description:"The file to write; relative paths start at the first allowed directory"`
}

// save is save_result: it writes next to the file and renames, so a
// failed save leaves the old file as it was.
func save(_ context.Context, dirs allowdir.Dirs, in saveIn) (string, error) {
	real, err := dirs.Writable(in.Path)
	if err != nil {
		return "", err
	}
	v := in.Handle.Value()
	data := []byte(v.text())
	if v.Blob != "" {
		if data, err = base64.StdEncoding.DecodeString(v.Blob); err != nil {
			return "", fmt.Errorf("%s: the resource's data is not base64 (%v): save its text with read_result instead", in.Handle.ID, err)
		}
	}
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	tmp := filepath.Join(filepath.Dir(real), "."+filepath.Base(real)+".tmp-"+hex.EncodeToString(rnd[:]))
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return "", fmt.Errorf("saving %s: %w", in.Path, err)
	}
	if err := os.Rename(tmp, real); err != nil {
		_ = os.Remove(tmp)
		return "", fmt.Errorf("saving %s: %w", in.Path, err)
	}
	return fmt.Sprintf("wrote %d bytes to %s", len(data), real), nil
}
