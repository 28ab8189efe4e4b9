// Package toolsearch finds tools by what they do: a BM25 index over the
// tools' names, descriptions and parameters, for hosts that offer a model
// (or an MCP client) more tools than it should be shown at once. The
// model gets a search tool instead of every schema, and the host loads
// the tools a search finds.
//
// Names are split into words at '_', '-', '.', '/', camelCase and digits,
// so "filesystem__read_text_file" is found by "read file" and by its
// server's name; words are lower-cased and lightly stemmed ("files",
// "listing" and "listed" find "file" and "list"). Fields weigh
// differently (BM25F): a word of the name counts three times, of a
// parameter's name twice, of the description or a parameter's description
// once, each relative to the field's usual length.
//
// An Index is immutable and safe for concurrent use; build a new one when
// the tools change (New over 500 tools takes a few milliseconds, a search
// over them some 50 µs).
package toolsearch

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/toolwire/toolwire/tool"
)

// Bounds of a search.
const (
	// DefaultResults is how many tools a search returns when k is 0 or
	// less; MaxResults is the most it returns whatever k says.
	DefaultResults = 5
	MaxResults     = 50
	// MaxQueryBytes and MaxQueryWords bound a query: the rest of a longer
	// one is ignored (Answer says so).
	MaxQueryBytes = 1024
	MaxQueryWords = 32
)

// The fields of a tool, and how much a word in each weighs (BM25F: each
// field's term frequencies are normalized by the field's own length, then
// weighted and summed).
const (
	fieldName = iota // the name and the title
	fieldDesc
	fieldParam     // the parameters' names
	fieldParamDesc // the parameters' descriptions
	fields
)

var fieldWeight = [fields]float64{fieldName: 3, fieldDesc: 1, fieldParam: 2, fieldParamDesc: 1}

// fieldB is BM25's b for each field: how much a field's length (against
// the average) discounts its words. Names are short and each word of one
// counts, so a longer name is discounted less.
var fieldB = [fields]float64{fieldName: 0.3, fieldDesc: 0.75, fieldParam: 0.75, fieldParamDesc: 0.75}

// bm25K1 is BM25's k1, the usual one: how soon a term's frequency
// saturates.
const bm25K1 = 1.2

// Index is a BM25 index over tools. Make it with New.
type Index struct {
	infos  []tool.Info
	byName map[string]int
	// tf holds each tool's terms with their weighted, length-normalized
	// frequency: what a query's term adds to the score does not depend on
	// the query, so it is computed once.
	tf []map[string]float64
	df map[string]int // tools holding each term
}

// Hit is a tool a search found, with its score (higher is better; only
// comparable within one search).
type Hit struct {
	Name  string  `json:"name"`
	Score float64 `json:"score"`
}

// New indexes tools by their Info. Tools with the same name as an
// earlier one are left out.
func New(infos []tool.Info) *Index {
	ix := &Index{byName: make(map[string]int, len(infos)), df: map[string]int{}}
	// A tool's terms, each with its count in each field, and the fields'
	// lengths.
	type doc struct {
		index map[string]int
		freq  [][fields]float64
		len   [fields]float64
	}
	var docs []doc
	var total [fields]float64
	for _, info := range infos {
		if _, dup := ix.byName[info.Name]; dup {
			continue
		}
		d := doc{index: map[string]int{}}
		add := func(f int, s string) {
			for _, t := range terms(s) {
				i, ok := d.index[t]
				if !ok {
					i = len(d.freq)
					d.index[t] = i
					d.freq = append(d.freq, [fields]float64{})
				}
				d.freq[i][f]++
				d.len[f]++
			}
		}
		add(fieldName, info.Name)
		add(fieldName, info.Title)
		add(fieldDesc, info.Description)
		for _, p := range params(info.InputSchema) {
			add(fieldParam, p.name)
			add(fieldParamDesc, p.desc)
		}
		for f := range fields {
			total[f] += d.len[f]
		}
		ix.byName[info.Name] = len(ix.infos)
		ix.infos = append(ix.infos, info)
		docs = append(docs, d)
	}
	ix.tf = make([]map[string]float64, len(docs))
	for i, d := range docs {
		tf := make(map[string]float64, len(d.index))
		for t, j := range d.index {
			for f := range fields {
				if n := d.freq[j][f]; n > 0 {
					avg := total[f] / float64(len(docs))
					tf[t] += fieldWeight[f] * n / (1 - fieldB[f] + fieldB[f]*d.len[f]/avg)
				}
			}
			ix.df[t]++
		}
		ix.tf[i] = tf
	}
	return ix
}

// FromTools indexes tools (see New).
func FromTools(tools []tool.Tool) *Index {
	infos := make([]tool.Info, len(tools))
	for i, t := range tools {
		infos[i] = t.Info()
	}
	return New(infos)
}

// Len returns the number of tools indexed.
func (ix *Index) Len() int { return len(ix.infos) }

// Info returns the Info of the named tool.
func (ix *Index) Info(name string) (tool.Info, bool) {
	i, ok := ix.byName[name]
	if !ok {
		return tool.Info{}, false
	}
	return ix.infos[i], true
}

// Search returns the k tools that best match query, best first (k of 0
// or less means DefaultResults, and at most MaxResults are returned).
// Only tools that share a word with the query are returned; a tool whose
// name is the query (or its last part after "__", the server's prefix)
// comes first. The query is bounded by MaxQueryBytes and MaxQueryWords.
func (ix *Index) Search(query string, k int) []Hit {
	hits, _ := ix.search(query, k)
	return hits
}

// search is Search, also reporting whether the query was cut.
func (ix *Index) search(query string, k int) ([]Hit, bool) {
	if k <= 0 {
		k = DefaultResults
	}
	k = min(k, MaxResults)
	q, cut := bound(query)
	words := terms(q)
	var uniq []string
	for _, w := range words {
		if !slices.Contains(uniq, w) {
			uniq = append(uniq, w)
		}
	}
	if len(uniq) > MaxQueryWords {
		uniq, cut = uniq[:MaxQueryWords], true
	}
	exact := strings.TrimSpace(q)
	var hits []Hit
	n := float64(len(ix.tf))
	idf := make([]float64, len(uniq))
	for j, t := range uniq {
		df := float64(ix.df[t])
		idf[j] = math.Log(1 + (n-df+0.5)/(df+0.5))
	}
	for i, tf := range ix.tf {
		score := 0.0
		for j, t := range uniq {
			if f := tf[t]; f > 0 {
				score += idf[j] * f * (bm25K1 + 1) / (f + bm25K1)
			}
		}
		name := ix.infos[i].Name
		if exact != "" && (strings.EqualFold(name, exact) || strings.EqualFold(shortName(name), exact)) {
			score += 1000 // the name itself: first, whatever the words say
		}
		if score > 0 {
			hits = append(hits, Hit{Name: name, Score: score})
		}
	}
	slices.SortStableFunc(hits, func(a, b Hit) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
	if len(hits) > k {
		hits = hits[:k]
	}
	return hits, cut
}

// bound cuts a query to MaxQueryBytes, at a character's start.
func bound(q string) (string, bool) {
	if len(q) <= MaxQueryBytes {
		return q, false
	}
	cut := MaxQueryBytes
	for cut > 0 && !utf8.RuneStart(q[cut]) {
		cut--
	}
	return q[:cut], true
}

// shortName is a tool's name without its server's prefix ("server__").
func shortName(name string) string {
	if i := strings.LastIndex(name, "__"); i >= 0 {
		return name[i+2:]
	}
	return name
}

// Servers returns the server prefixes of the indexed tools' names (the
// part before "__"), sorted, each once.
func (ix *Index) Servers() []string {
	var out []string
	for _, info := range ix.infos {
		if i := strings.Index(info.Name, "__"); i > 0 && !slices.Contains(out, info.Name[:i]) {
			out = append(out, info.Name[:i])
		}
	}
	slices.Sort(out)
	return out
}

// Answer is a search's result as a model is shown it.
type Answer struct {
	// Hits are the tools found, best first.
	Hits []Hit
	// Text describes them: each tool's name, the first sentence of its
	// description and its parameters; or, when nothing matched, says so
	// and names servers and tools to search for instead.
	Text string
}

// Answer searches (see Search) and writes the result for a model.
func (ix *Index) Answer(query string, k int) Answer {
	hits, cut := ix.search(query, k)
	var b strings.Builder
	if cut {
		fmt.Fprintf(&b, "(The query was cut to its first %d bytes and %d words.)\n", MaxQueryBytes, MaxQueryWords)
	}
	if len(hits) == 0 {
		b.WriteString(ix.noMatch(query))
		return Answer{Text: b.String()}
	}
	fmt.Fprintf(&b, "%d of %d tools match; they can be called now:\n", len(hits), ix.Len())
	for _, h := range hits {
		info, _ := ix.Info(h.Name)
		fmt.Fprintf(&b, "- %s", h.Name)
		if s := firstSentence(info.Description); s != "" {
			fmt.Fprintf(&b, ": %s", s)
		}
		if ps := params(info.InputSchema); len(ps) > 0 {
			names := make([]string, len(ps))
			for i, p := range ps {
				names[i] = p.name
			}
			fmt.Fprintf(&b, " (parameters: %s)", strings.Join(names, ", "))
		}
		b.WriteByte('\n')
	}
	return Answer{Hits: hits, Text: b.String()}
}

// noMatch says that nothing matched and what to try instead.
func (ix *Index) noMatch(query string) string {
	if ix.Len() == 0 {
		return "No tools are available."
	}
	what := fmt.Sprintf("No tool matches %q", shorten(query, 80))
	if len(terms(query)) == 0 {
		what = "The query has no words to search for"
	}
	var some []string
	for _, info := range ix.infos[:min(8, len(ix.infos))] {
		some = append(some, info.Name)
	}
	msg := fmt.Sprintf("%s. Try other words for what the tool does (e.g. \"read file\", \"add numbers\")", what)
	if s := ix.Servers(); len(s) > 0 {
		msg += ", or a server's name: " + strings.Join(s, ", ")
	}
	return msg + fmt.Sprintf(". Some of the %d tools: %s.", ix.Len(), strings.Join(some, ", "))
}

func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// firstSentence is the description's first sentence, at most 200 bytes.
func firstSentence(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i+1]
	}
	return shorten(s, 200)
}

// param is a parameter's name and description.
type param struct{ name, desc string }

// params reads the top-level properties of an input schema, in name
// order.
func params(schema json.RawMessage) []param {
	var s struct {
		Properties map[string]struct {
			Description string `json:"description"`
		} `json:"properties"`
	}
	if len(schema) == 0 || json.Unmarshal(schema, &s) != nil {
		return nil
	}
	out := make([]param, 0, len(s.Properties))
	for n, p := range s.Properties {
		out = append(out, param{n, p.Description})
	}
	slices.SortFunc(out, func(a, b param) int { return strings.Compare(a.name, b.name) })
	return out
}

// stopwords are words too common in tool descriptions to tell tools
// apart.
var stopwords = map[string]bool{
	"a": true, "an": true, "and": true, "are": true, "as": true, "at": true, "be": true, "by": true,
	"can": true, "do": true, "for": true, "from": true, "i": true, "in": true, "into": true, "is": true,
	"it": true, "its": true, "me": true, "my": true, "of": true, "on": true, "or": true, "that": true,
	"the": true, "this": true, "to": true, "tool": true, "use": true, "with": true, "you": true, "your": true,
	"want": true, "need": true, "please": true, "some": true, "which": true, "what": true, "when": true,
}

// terms splits s into index terms: words split at anything not a letter
// or digit, at lower-to-upper case changes and between letters and
// digits; lower-cased, stemmed, stopwords left out.
func terms(s string) []string {
	var out []string
	start := -1 // where the word being read starts, in bytes
	flush := func(end int) {
		if start >= 0 {
			// Substrings of s, lower-cased without a copy when they are
			// already.
			if w := stem(strings.ToLower(s[start:end])); !stopwords[w] {
				out = append(out, w)
			}
			start = -1
		}
	}
	var prev rune
	for i, r := range s {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush(i)
		case start >= 0 && (unicode.IsUpper(r) && unicode.IsLower(prev) || unicode.IsDigit(r) != unicode.IsDigit(prev)):
			flush(i)
			start = i
		case start < 0:
			start = i
		}
		prev = r
	}
	flush(len(s))
	return out
}

// stem strips common English inflections, so that "files", "listing"
// and "listed" index as "file" and "list" do. It is deliberately light:
// both the index and the query go through it, so it only has to be
// consistent. A final "e" goes too ("create", "created" and "creating"
// meet at "creat").
func stem(w string) string {
	n := len(w)
	switch {
	case n > 4 && strings.HasSuffix(w, "ies"):
		return w[:n-3] + "y"
	case n > 6 && strings.HasSuffix(w, "ing"):
		w = undouble(w[:n-3])
	case n > 5 && strings.HasSuffix(w, "ed"):
		w = undouble(w[:n-2])
	case n > 4 && (strings.HasSuffix(w, "ches") || strings.HasSuffix(w, "shes") || strings.HasSuffix(w, "sses") || strings.HasSuffix(w, "xes")):
		w = w[:n-2]
	case n > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		w = w[:n-1]
	}
	if len(w) > 3 && strings.HasSuffix(w, "e") {
		w = w[:len(w)-1]
	}
	return w
}

// undouble drops a doubled final consonant ("stopp" → "stop").
func undouble(w string) string {
	n := len(w)
	if n > 2 && w[n-1] == w[n-2] && !strings.ContainsRune("aeiouls", rune(w[n-1])) {
		return w[:n-1]
	}
	return w
}
