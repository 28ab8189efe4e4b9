package spill

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// What a preview shows, in bytes and lines.
const (
	headLines, headBytes = 10, 1500
	tailLines, tailBytes = 5, 700
	lineBytes            = 300 // each line shown is cut to this
	shapeBytes           = 1500
	itemBytes            = 400 // each first item shown is cut to this
	firstItems           = 3
	// maxShapeInput is the largest JSON whose shape a preview describes:
	// describing it decodes it.
	maxShapeInput = 8 << 20
)

// preview is the text a model reads in place of v, kept behind id; err
// says why v could not be kept, when it could not.
func preview(v *Value, id string, err error) string {
	var b strings.Builder
	text := v.text()
	switch {
	case v.Blob != "":
		fmt.Fprintf(&b, "[%s returned a binary resource %s (%s, %d bytes)", v.Tool, v.URI, orUnknown(v.MimeType), decodedLen(v.Blob))
	case v.JSON != nil:
		fmt.Fprintf(&b, "[%s returned structured content of %d bytes (JSON)", v.Tool, len(v.JSON))
	default:
		fmt.Fprintf(&b, "[%s returned %d bytes of text in %d lines", v.Tool, len(text), lineCount(text))
		if v.URI != "" {
			fmt.Fprintf(&b, " (resource %s)", v.URI)
		}
	}
	if err != nil {
		fmt.Fprintf(&b, ", too large to keep: %v. Only this preview of it remains: ask the tool for a smaller part.]\n", err)
	} else {
		fmt.Fprintf(&b, ", kept whole behind the handle %s instead of shown here.]\n", id)
	}
	if v.Blob == "" {
		if doc, ok := asJSON(text); ok {
			writeShape(&b, doc)
		} else {
			writeHeadTail(&b, text)
		}
	}
	if err == nil {
		fmt.Fprintf(&b, "[To see more: read_result {\"handle\":%q,\"start_line\":1,\"end_line\":100} reads lines (or offset and length in bytes); "+
			"query_result runs a jq expression over JSON; save_result writes it to a file. "+
			"Pass %q as any tool's argument, alone, and the tool receives the whole value.]", id, id)
	}
	return b.String()
}

// decodedLen is the number of bytes the base64 data s holds.
func decodedLen(s string) int {
	return base64.StdEncoding.DecodedLen(len(s)) - (len(s) - len(strings.TrimRight(s, "=")))
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown type"
	}
	return s
}

// lineCount counts the lines of s, the last one whether or not a newline
// ends it.
func lineCount(s string) int {
	n := strings.Count(s, "\n")
	if s != "" && !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}

// writeHeadTail writes the first and last lines of s.
func writeHeadTail(b *strings.Builder, s string) {
	end := headEnd(s, headLines, headBytes)
	b.WriteString("First lines:\n")
	b.WriteString(cutLines(s[:end]))
	rest := s[end:]
	if rest == "" {
		return
	}
	start := tailStart(rest, tailLines, tailBytes)
	if skipped := lineCount(rest[:start]); skipped > 0 {
		fmt.Fprintf(b, "… %d lines left out …\n", skipped)
	}
	b.WriteString("Last lines:\n")
	b.WriteString(cutLines(rest[start:]))
}

// headEnd is where the first n lines of s end, or fewer once they pass
// max bytes.
func headEnd(s string, n, max int) int {
	end := 0
	for i := 0; i < n && end < len(s) && end < max; i++ {
		nl := strings.IndexByte(s[end:], '\n')
		if nl < 0 {
			return len(s)
		}
		end += nl + 1
	}
	return end
}

// tailStart is where the last n lines of s start, or fewer once they
// pass max bytes.
func tailStart(s string, n, max int) int {
	start := len(s)
	end := len(strings.TrimSuffix(s, "\n"))
	for range n {
		nl := strings.LastIndexByte(s[:end], '\n')
		start = nl + 1
		if nl < 0 || len(s)-start >= max {
			break
		}
		end = nl
	}
	return start
}

// cutLines cuts each line of s to lineBytes, saying so, and ends s with a
// newline.
func cutLines(s string) string {
	var b strings.Builder
	for line := range strings.Lines(s) {
		line = strings.TrimSuffix(line, "\n")
		if len(line) > lineBytes {
			fmt.Fprintf(&b, "%s… (%d bytes in this line)\n", cutUTF8(line, lineBytes), len(line))
			continue
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String()
}

// cutUTF8 cuts s to at most n bytes, on a character boundary.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// asJSON decodes s when it is a JSON object or array small enough to
// describe.
func asJSON(s string) (any, bool) {
	t := strings.TrimSpace(s)
	if len(t) > maxShapeInput || t == "" || t[0] != '{' && t[0] != '[' {
		return nil, false
	}
	dec := json.NewDecoder(strings.NewReader(t))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil || dec.More() {
		return nil, false
	}
	return v, true
}

// writeShape describes the JSON value doc: its shape, then the first
// items of its first or largest array.
func writeShape(b *strings.Builder, doc any) {
	b.WriteString("JSON of shape: ")
	b.WriteString(cutUTF8(shape(doc, 0), shapeBytes))
	b.WriteByte('\n')
	path, items := firstArray(doc)
	if len(items) == 0 {
		return
	}
	fmt.Fprintf(b, "First items of %s (%d items):\n", path, len(items))
	for _, it := range items[:min(firstItems, len(items))] {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(it) // decoded JSON encodes
		line := strings.TrimSuffix(buf.String(), "\n")
		if len(line) > itemBytes {
			line = cutUTF8(line, itemBytes) + fmt.Sprintf("… (%d bytes)", len(line))
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
}

// shape writes the type of v: an object's keys and their shapes, an
// array's length and its first element's shape, to a depth of 3.
func shape(v any, depth int) string {
	switch x := v.(type) {
	case map[string]any:
		if depth >= 3 {
			return fmt.Sprintf("object(%d keys)", len(x))
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var b strings.Builder
		b.WriteByte('{')
		for i, k := range keys {
			if i == 20 {
				fmt.Fprintf(&b, ", … %d more keys", len(keys)-i)
				break
			}
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%q: %s", k, shape(x[k], depth+1))
		}
		b.WriteByte('}')
		return b.String()
	case []any:
		if len(x) == 0 {
			return "array(0)"
		}
		if depth >= 3 {
			return fmt.Sprintf("array(%d)", len(x))
		}
		return fmt.Sprintf("array(%d) of %s", len(x), shape(x[0], depth+1))
	case string:
		return "string"
	case json.Number:
		return "number"
	case bool:
		return "boolean"
	}
	return "null"
}

// firstArray finds the array a preview shows items of: doc itself, or
// the longest array among its members, with its jq path.
func firstArray(doc any) (string, []any) {
	switch x := doc.(type) {
	case []any:
		return ".", x
	case map[string]any:
		best, path := []any(nil), ""
		for k, v := range x {
			if a, ok := v.([]any); ok && (len(a) > len(best) || len(a) == len(best) && k < path) {
				best, path = a, k
			}
		}
		if best != nil {
			q, _ := json.Marshal(path)
			return "." + string(q), best
		}
	}
	return "", nil
}
