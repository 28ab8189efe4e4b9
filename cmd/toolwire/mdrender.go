package main

import (
	"strconv"
	"strings"

	xansi "github.com/charmbracelet/x/ansi"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// mdRenderer writes CommonMark as terminal text: headings in bold,
// paragraphs word-wrapped, emphasis, strong emphasis and code spans as
// SGR styles (plain text without colour), code blocks verbatim and
// indented, lists with a hanging indent, block quotes behind a bar, links
// as "text (url)" and thematic breaks as a rule. It parses with goldmark's
// CommonMark parser alone: its extensions' package (GFM tables) costs
// every run of the program half a millisecond of init, so a table is
// shown as its source lines.
type mdRenderer struct {
	p     parser.Parser
	color bool
}

// newMDRenderer renders in colour (SGR styles) unless color is false.
func newMDRenderer(color bool) *mdRenderer {
	p := parser.NewParser(
		parser.WithBlockParsers(parser.DefaultBlockParsers()...),
		parser.WithInlineParsers(parser.DefaultInlineParsers()...),
		parser.WithParagraphTransformers(parser.DefaultParagraphTransformers()...),
	)
	return &mdRenderer{p: p, color: color}
}

// SGR parameters of the styles, and the sequence that resets them all.
const (
	sgrBold      = "1"
	sgrItalic    = "3"
	sgrUnderline = "4"
	sgrCode      = "36" // cyan
	sgrReset     = "\x1b[0m"
)

// render returns src rendered for a terminal width columns wide, each
// line ended by "\n"; "" if src shows nothing.
func (r *mdRenderer) render(src string, width int) string {
	source := []byte(stripControls(src))
	doc := r.p.Parse(text.NewReader(source))
	lines := r.blocks(doc, source, width)
	if len(lines) == 0 {
		return ""
	}
	return strings.Join(lines, "\n") + "\n"
}

// stripControls drops the control characters but tab and line feed from
// s (a CR of a CR LF among them): text from a model or a server must not
// move the cursor or restyle the terminal, and the renderer's own SGR
// sequences are then the only escapes in its output.
func stripControls(s string) string {
	return strings.Map(func(c rune) rune {
		if c < ' ' && c != '\t' && c != '\n' || c >= 0x7f && c < 0xa0 {
			return -1
		}
		return c
	}, s)
}

// blocks renders the blocks in container n, width columns wide, a blank
// line between them but between the blocks of an item of a tight list.
func (r *mdRenderer) blocks(n ast.Node, src []byte, width int) []string {
	tight := false
	if l, ok := n.Parent().(*ast.List); ok { // n is a list item
		tight = l.IsTight
	}
	var out []string
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		lines := r.block(c, src, width)
		if len(lines) == 0 {
			continue
		}
		if len(out) > 0 && !tight {
			out = append(out, "")
		}
		out = append(out, lines...)
	}
	return out
}

// block renders block n width columns wide.
func (r *mdRenderer) block(n ast.Node, src []byte, width int) []string {
	switch n := n.(type) {
	case *ast.Heading:
		return r.wrap(r.inline(n, src, sgrBold), width)
	case *ast.Paragraph, *ast.TextBlock:
		if isTable(n, src) {
			return sourceLines(n, src, "")
		}
		return r.wrap(r.inline(n, src), width)
	case *ast.FencedCodeBlock, *ast.CodeBlock:
		return sourceLines(n, src, "    ")
	case *ast.HTMLBlock:
		lines := sourceLines(n, src, "")
		if n.HasClosure() {
			lines = append(lines, strings.TrimRight(string(n.ClosureLine.Value(src)), " \t\n"))
		}
		return lines
	case *ast.LinkReferenceDefinition:
		// Shown as it is: in an answer streamed by blocks, the links
		// that use it are often in an earlier block, which showed them
		// without the url.
		return sourceLines(n, src, "")
	case *ast.ThematicBreak:
		return []string{strings.Repeat("─", max(width, 3))}
	case *ast.List:
		return r.list(n, src, width)
	case *ast.Blockquote:
		return prefixLines(r.blocks(n, src, width-2), "│ ", "│ ")
	}
	return r.blocks(n, src, width) // none but the above in CommonMark
}

// list renders list n's items behind their markers ("•", or the item's
// number), the lines after the first indented as far as the text.
func (r *mdRenderer) list(n *ast.List, src []byte, width int) []string {
	var markers []string
	for c, i := n.FirstChild(), n.Start; c != nil; c, i = c.NextSibling(), i+1 {
		if n.IsOrdered() {
			markers = append(markers, strconv.Itoa(i)+string(n.Marker))
		} else {
			markers = append(markers, "•")
		}
	}
	indent := 0
	for _, m := range markers {
		indent = max(indent, xansi.StringWidth(m)+1)
	}
	var out []string
	i := 0
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		lines := r.blocks(c, src, width-indent)
		if len(lines) == 0 {
			lines = []string{""}
		}
		if i > 0 && !n.IsTight {
			out = append(out, "")
		}
		first := markers[i] + strings.Repeat(" ", indent-xansi.StringWidth(markers[i]))
		out = append(out, prefixLines(lines, first, strings.Repeat(" ", indent))...)
		i++
	}
	return out
}

// prefixLines puts first before lines[0] and rest before the others (but
// the blank ones), and trims the spaces this leaves at the lines' ends.
func prefixLines(lines []string, first, rest string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		p := rest
		if i == 0 {
			p = first
		}
		if l == "" {
			p = strings.TrimRight(p, " ")
		}
		out[i] = p + l
	}
	return out
}

// sourceLines returns block n's lines as they are in src, behind indent
// (but the blank ones), without their line ends and trailing spaces.
func sourceLines(n ast.Node, src []byte, indent string) []string {
	segs := n.Lines()
	lines := make([]string, 0, segs.Len())
	for i := range segs.Len() {
		seg := segs.At(i)
		l := strings.TrimRight(string(seg.Value(src)), " \t\n")
		if l != "" {
			l = indent + l
		}
		lines = append(lines, l)
	}
	return lines
}

// isTable reports whether paragraph n looks like a GFM table: two lines
// or more, each starting with "|". Its lines are shown as they are.
func isTable(n ast.Node, src []byte) bool {
	segs := n.Lines()
	if segs.Len() < 2 {
		return false
	}
	for i := range segs.Len() {
		seg := segs.At(i)
		if !strings.HasPrefix(strings.TrimSpace(string(seg.Value(src))), "|") {
			return false
		}
	}
	return true
}

// inlines writes inline content: text with the SGR styles in force (when
// the renderer is in colour), a hard line break as "\n".
type inlines struct {
	b      strings.Builder
	color  bool
	styles []string // SGR parameters in force
}

// inline renders the inline content of block n, in the styles given.
func (r *mdRenderer) inline(n ast.Node, src []byte, styles ...string) string {
	w := &inlines{color: r.color}
	for _, s := range styles {
		w.push(s)
	}
	w.children(n, src)
	for range styles {
		w.pop()
	}
	return w.b.String()
}

func (w *inlines) push(sgr string) {
	w.styles = append(w.styles, sgr)
	w.sgr()
}

func (w *inlines) pop() {
	w.styles = w.styles[:len(w.styles)-1]
	w.sgr()
}

// sgr writes the sequence that sets the styles in force (after a reset).
func (w *inlines) sgr() {
	if !w.color {
		return
	}
	w.b.WriteString("\x1b[0")
	for _, s := range w.styles {
		w.b.WriteString(";" + s)
	}
	w.b.WriteString("m")
}

func (w *inlines) children(n ast.Node, src []byte) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		w.node(c, src)
	}
}

func (w *inlines) node(n ast.Node, src []byte) {
	switch n := n.(type) {
	case *ast.Text:
		v := n.Value(src)
		if !n.IsRaw() {
			v = unescape(v)
		}
		w.b.Write(v)
		switch {
		case n.HardLineBreak():
			w.b.WriteString("\n")
		case n.SoftLineBreak():
			w.b.WriteString(" ")
		}
	case *ast.String:
		w.b.Write(n.Value)
	case *ast.CodeSpan:
		w.push(sgrCode)
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			if t, ok := c.(*ast.Text); ok {
				w.b.WriteString(strings.ReplaceAll(string(t.Value(src)), "\n", " "))
			} else {
				w.node(c, src)
			}
		}
		w.pop()
	case *ast.Emphasis:
		style := sgrItalic
		if n.Level >= 2 {
			style = sgrBold
		}
		w.push(style)
		w.children(n, src)
		w.pop()
	case *ast.Link:
		w.link(n, n.Destination, src)
	case *ast.Image:
		w.link(n, n.Destination, src)
	case *ast.AutoLink:
		w.push(sgrUnderline)
		w.b.Write(n.Label(src))
		w.pop()
	case *ast.RawHTML:
		for i := range n.Segments.Len() {
			seg := n.Segments.At(i)
			w.b.Write(seg.Value(src))
		}
	default:
		w.children(n, src)
	}
}

// link writes link (or image) n's text underlined, then its destination
// in parentheses unless it is the text.
func (w *inlines) link(n ast.Node, dest, src []byte) {
	dest = unescape(dest)
	label := plainText(n, src)
	if label == "" {
		w.b.Write(dest)
		return
	}
	w.push(sgrUnderline)
	w.children(n, src)
	w.pop()
	if label != string(dest) && "mailto:"+label != string(dest) {
		w.b.WriteString(" (" + string(dest) + ")")
	}
}

// plainText is the text of inline node n's descendants, unstyled.
func plainText(n ast.Node, src []byte) string {
	w := &inlines{}
	w.children(n, src)
	return w.b.String()
}

// unescape resolves the backslash escapes and character references of
// markdown text.
func unescape(v []byte) []byte {
	return util.ResolveEntityNames(util.ResolveNumericReferences(util.UnescapePunctuations(v)))
}

// wrap breaks s into lines of at most width columns at spaces, a word
// wider than the width alone on its line; each "\n" in s ends a line.
// Words are never broken: xansi.Wordwrap also breaks after hyphens, which
// would cut URLs. Each line ends with the styles reset and the next
// starts with them set again, so that a line's prefix (a list's indent,
// a quote's bar) is never styled.
func (r *mdRenderer) wrap(s string, width int) []string {
	var lines []string
	for _, para := range strings.Split(s, "\n") {
		line, w := "", 0
		for _, word := range strings.FieldsFunc(para, func(c rune) bool { return c == ' ' || c == '\t' }) {
			ww := xansi.StringWidth(word)
			switch {
			case w == 0: // nothing shown on the line yet
				line += word
				w = ww
			case ww == 0: // styles only
				line += word
			case w+1+ww <= width:
				line += " " + word
				w += 1 + ww
			default:
				lines = append(lines, line)
				line, w = word, ww
			}
		}
		lines = append(lines, line)
	}
	if r.color {
		carried := ""
		for i, l := range lines {
			state := carried
			if j := strings.LastIndex(l, "\x1b["); j >= 0 {
				state = l[j : j+strings.IndexByte(l[j:], 'm')+1]
			}
			if state == sgrReset {
				state = ""
			}
			l = carried + l
			if state != "" {
				l += sgrReset
			}
			lines[i], carried = l, state
		}
	}
	return lines
}
