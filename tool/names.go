package tool

import (
	"fmt"
	"hash/fnv"
	"sort"
	"strings"
	"unicode/utf8"
)

// MaxNameLen is the longest tool name model providers accept.
const MaxNameLen = 64

// CheckName reports whether model providers accept name as a function
// name: OpenAI, Anthropic and Gemini all take 1 to 64 ASCII letters,
// digits, '_' and '-', and reject anything else (MCP itself also allows
// '.' and '/'). Tools a program defines must have such names; tools of
// MCP servers are renamed with SafeName.
func CheckName(name string) error {
	if name == "" {
		return fmt.Errorf("a tool has no name")
	}
	bad := strings.IndexFunc(name, func(r rune) bool { return !nameRune(r) })
	switch {
	case bad >= 0:
		r, _ := utf8.DecodeRuneInString(name[bad:])
		return fmt.Errorf("tool name %q has %q, which model providers reject: use only letters, digits, '_' and '-' (at most %d), e.g. %q",
			name, r, MaxNameLen, SafeName(name))
	case len(name) > MaxNameLen:
		return fmt.Errorf("tool name %q is %d characters long; model providers take at most %d", name, len(name), MaxNameLen)
	}
	return nil
}

// accepted reports whether CheckName accepts name.
func accepted(name string) bool {
	return name != "" && len(name) <= MaxNameLen && strings.IndexFunc(name, func(r rune) bool { return !nameRune(r) }) < 0
}

func nameRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-'
}

// SafeName maps a name model providers may reject (see CheckName) to one
// they accept, and returns an accepted name as it is. Each character
// outside the allowed set becomes '_', and a suffix of 6 hex digits (a
// hash of the original name) keeps names apart that would otherwise
// collide: "files.read/v2" becomes "files_read_v2_" and six hex digits.
// The result is cut to fit MaxNameLen. The mapping is deterministic, so a
// host keeps the original name beside the safe one and maps back by
// lookup.
func SafeName(name string) string {
	if accepted(name) {
		return name
	}
	var b strings.Builder
	for _, r := range name {
		if nameRune(r) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	h := fnv.New32a()
	h.Write([]byte(name))
	suffix := fmt.Sprintf("_%06x", h.Sum32()&0xffffff)
	base := b.String()
	if len(base) > MaxNameLen-len(suffix) {
		base = base[:MaxNameLen-len(suffix)]
	}
	return base + suffix
}

// Suggest returns the names close to name (by edit distance, ignoring
// case, or containing it when it is 4 characters or more), closest first,
// at most three: a did-you-mean for a mistyped tool, server or command.
func Suggest(name string, names []string) []string {
	type cand struct {
		name string
		d    int
	}
	var cs []cand
	limit := max(2, len(name)/4)
	for _, n := range names {
		if n == name {
			continue
		}
		d := editDistance(strings.ToLower(name), strings.ToLower(n))
		if d <= limit || (len(name) >= 4 && strings.Contains(n, name)) {
			cs = append(cs, cand{n, d})
		}
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].d < cs[j].d || cs[i].d == cs[j].d && cs[i].name < cs[j].name })
	var out []string
	for i := 0; i < len(cs) && i < 3; i++ {
		out = append(out, cs[i].name)
	}
	return out
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
