package schema

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/toolwire/toolwire/internal/jsonvalue"
)

// acceptsJSON reports whether raw, one JSON value with optional white
// space around it, certainly satisfies the schema: when it returns true,
// jsonvalue.Decode(raw) succeeds and Validate returns nil for the value it
// gives. This spares a caller that only needs the verdict decoding raw
// (package tool, through fastpath.AcceptsJSON).
//
// Like the fast check behind Validate, it is sound but not complete:
// false only means that the value must be decoded and validated to know.
// It is false for a schema Validate leaves to the library, for a string
// with escapes or invalid UTF-8 whose content a keyword reads (enum,
// format, pattern, lengths), for a format on an array or object, for more
// than 64 required properties, for an object with a duplicate key or more
// than 16 members when minProperties needs their distinct count, and for
// arrays and objects nested more than 64 deep.
//
// It reads raw in place and allocates nothing, except to unescape an
// object key with escapes and to pass a value to a format check.
func (v *Validator) acceptsJSON(raw []byte) bool {
	if v.fast == nil {
		return false
	}
	start := jsonvalue.SkipSpace(raw, 0)
	end, err := jsonvalue.Skip(raw, start)
	if err != nil || jsonvalue.End(raw, end) != nil {
		return false
	}
	doc := rawDoc{b: raw, s: unsafe.String(unsafe.SliceData(raw), len(raw))}
	return v.fast.acceptsJSON(&doc, start, end)
}

// rawDoc is JSON text read in place: as bytes for the scanner, and as a
// string sharing their memory for numbers and string contents, which
// nothing keeps beyond acceptsJSON.
type rawDoc struct {
	b     []byte
	s     string
	depth int // of the arrays and objects being read
}

// maxNesting is how deeply nested arrays and objects acceptsJSON reads.
// The scanner skips a value before it hands it over, so reading one
// nested d deep costs d times its size: past this depth, decoding, whose
// cost is linear, is the cheaper way to know.
const maxNesting = 64

// anyValue is the schema of an object member or array item that no
// keyword constrains: its acceptsJSON only makes sure the value decodes.
var anyValue = newFastNode()

// maxCounted is how many members of an object acceptsJSON keeps to count
// the distinct keys for minProperties.
const maxCounted = 16

// acceptsJSON is accepts for the JSON value doc.b[start:end], whose
// syntax is known to be valid: it reports whether the value decodes (its
// numbers are within float64 range) and accepts certainly accepts the
// value it decodes to.
//
// A value is read where the node has keywords for its members or items,
// or no subschema to do it: what a subschema accepts, it has read, and
// subschemas cannot lead back to the same value (buildFast refuses such
// schemas).
//
// A duplicate key needs no care where the check counts no members: the
// decoded object keeps the last value for a key, which is checked as
// every other is, and the count of members bounds its size from above.
func (n *fastNode) acceptsJSON(doc *rawDoc, start, end int) bool {
	if n.reject {
		return false
	}
	switch c := doc.s[start]; c {
	case 'n':
		if !n.allows(tNull, false) || !n.inEnum(nil) || n.format != nil && n.format(nil) != nil {
			return false
		}
	case 't', 'f':
		b := c == 't'
		if !n.allows(tBoolean, false) || !n.inEnum(b) || n.format != nil && n.format(b) != nil {
			return false
		}
	case '"':
		if !n.allows(tString, false) {
			return false
		}
		if n.hasEnum || n.format != nil || n.minLen >= 0 || n.maxLen >= 0 || n.pattern != nil {
			// Without escapes and as valid UTF-8, the string decodes to
			// the bytes between the quotes: only then are they what the
			// keywords read.
			s := doc.s[start+1 : end-1]
			if strings.IndexByte(s, '\\') >= 0 || !utf8.ValidString(s) ||
				!n.inEnum(s) || n.format != nil && n.format(s) != nil || !n.acceptsString(s) {
				return false
			}
		}
	case '[':
		// An enum holds no arrays; a format's verdict on one is unknown.
		if !n.allows(tArray, false) || n.hasEnum || n.format != nil || doc.depth == maxNesting {
			return false
		}
		if n.items == nil && n.minItems < 0 && n.maxItems < 0 && n.hasSubschemas() {
			break // nothing to check here; a subschema that accepts reads the items
		}
		items := n.items
		if items == nil {
			items = anyValue
		}
		k, ok := 0, true
		doc.depth++
		_, err := jsonvalue.Array(doc.b, start, func(s, e int) {
			k++
			ok = ok && items.acceptsJSON(doc, s, e)
		})
		doc.depth--
		if err != nil || !ok || !within(k, n.minItems, n.maxItems) {
			return false
		}
	case '{':
		if !n.allows(tObject, false) || n.hasEnum || n.format != nil || len(n.required) > 64 || doc.depth == maxNesting {
			return false
		}
		if len(n.props) == 0 && n.addl == addlAllow && len(n.required) == 0 && n.minProps < 0 && n.maxProps < 0 &&
			n.hasSubschemas() {
			break // nothing to check here; a subschema that accepts reads the members
		}
		var seen [maxCounted]string // the keys, when their distinct count matters
		counted := n.minProps > 0
		k, ok := 0, true
		var found uint64 // bit i: required[i] is present
		doc.depth++
		_, err := jsonvalue.Object(doc.b, start, func(key string, s, e int) {
			if !ok {
				return
			}
			if counted {
				if k == len(seen) || slices.Contains(seen[:k], key) {
					ok = false
					return
				}
				seen[k] = key // valid until doc changes, which it does not here
			}
			k++
			for i, r := range n.required {
				if r == key {
					found |= 1 << i
				}
			}
			p, allowed := n.member(key)
			if p == nil {
				p = anyValue
			}
			ok = allowed && p.acceptsJSON(doc, s, e)
		})
		doc.depth--
		if err != nil || !ok || !within(k, n.minProps, n.maxProps) || found != uint64(1)<<len(n.required)-1 {
			return false
		}
	default:
		// A number: Decode reads it with ParseFloat too, and fails where
		// it does (out of range).
		f, err := strconv.ParseFloat(doc.s[start:end], 64)
		if err != nil || !n.allows(tNumber, f == math.Trunc(f)) || !n.inEnum(f) ||
			n.format != nil && n.format(f) != nil || !n.acceptsNumber(f) {
			return false
		}
	}
	return n.acceptsSubschemas(func(c *fastNode) bool { return c.acceptsJSON(doc, start, end) })
}
