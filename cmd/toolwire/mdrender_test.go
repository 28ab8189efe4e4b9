package main

import (
	"regexp"
	"strings"
	"testing"

	xansi "github.com/charmbracelet/x/ansi"
)

// TestMDRender: each markdown element as the renderer shows it, without
// colour (exactly) and in colour (exactly: the SGR styles, reset at each
// line's end and set again after a list's indent).
func TestMDRender(t *testing.T) {
	for _, tt := range []struct {
		name, src string
		width     int
		color     bool
		want      string
	}{
		{name: "heading", src: "## A *title*", width: 40, want: "A title\n"},
		{name: "heading in colour", src: "# A *title*", width: 40, color: true,
			want: "\x1b[0;1mA \x1b[0;1;3mtitle\x1b[0;1m\x1b[0m\n"},
		{name: "paragraph wrapped", src: "one two three\nfour five six seven", width: 14,
			want: "one two three\nfour five six\nseven\n"},
		{name: "hard line break", src: "one\\\ntwo  \nthree", width: 40, want: "one\ntwo\nthree\n"},
		{name: "emphasis, strong, code", src: "*a* **b** `c  d`", width: 40, want: "a b c d\n"},
		{name: "emphasis, strong, code in colour", src: "*a* **b** `c`", width: 40, color: true,
			want: "\x1b[0;3ma\x1b[0m \x1b[0;1mb\x1b[0m \x1b[0;36mc\x1b[0m\n"},
		{name: "escapes and references", src: `\*not em\* &amp; &#65;`, width: 40, want: "*not em* & A\n"},
		{name: "link", src: "[the docs](https://example.com/a-b)", width: 40, want: "the docs (https://example.com/a-b)\n"},
		{name: "link whose text is its url", src: "[https://a.example](https://a.example) <https://b.example> <me@x.example>", width: 80,
			want: "https://a.example https://b.example me@x.example\n"},
		{name: "link in colour", src: "[docs](https://x.example)", width: 40, color: true,
			want: "\x1b[0;4mdocs\x1b[0m (https://x.example)\n"},
		{name: "image", src: "![a cat](cat.png) ![](dog.png)", width: 40, want: "a cat (cat.png) dog.png\n"},
		{name: "bullet list", src: "- one\n- two\n", width: 40, want: "• one\n• two\n"},
		{name: "loose list", src: "- one\n\n- two\n", width: 40, want: "• one\n\n• two\n"},
		{name: "ordered list, hanging indent", src: "9. nine\n10. ten is longer than the width\n", width: 16,
			want: "9.  nine\n10. ten is\n    longer than\n    the width\n"},
		{name: "nested list", src: "- a\n  - b\n    - c words to wrap\n- d\n", width: 14,
			want: "• a\n  • b\n    • c words\n      to wrap\n• d\n"},
		{name: "list item of two paragraphs", src: "1. first\n\n   second\n", width: 40, want: "1. first\n\n   second\n"},
		{name: "list in colour: the indent is not styled", src: "- **bold words to wrap**", width: 10, color: true,
			want: "• \x1b[0;1mbold\x1b[0m\n  \x1b[0;1mwords to\x1b[0m\n  \x1b[0;1mwrap\x1b[0m\n"},
		{name: "block quote", src: "> quoted words\n>\n> > inner", width: 10,
			want: "│ quoted\n│ words\n│\n│ │ inner\n"},
		{name: "link reference definition", src: "[a][r]\n\n[r]: https://r.example", width: 40,
			want: "a (https://r.example)\n\n[r]: https://r.example\n"},
		{name: "thematic break", src: "a\n\n***\n\nb", width: 5, want: "a\n\n─────\n\nb\n"},
		{name: "fenced code", src: "```go\nfunc  f() {\n\n\treturn   \n}\n```", width: 10,
			want: "    func  f() {\n\n    \treturn\n    }\n"},
		{name: "indented code with tabs", src: "\tx\n\t\ty", width: 40, want: "    x\n    \ty\n"},
		{name: "code span over two lines", src: "`a\nb`", width: 40, want: "a b\n"},
		{name: "indented code", src: "    x  :=  1\n    y", width: 5, want: "    x  :=  1\n    y\n"},
		{name: "table as its source", src: "| a | b |\n|---|---|\n| 1 | 2 |", width: 5,
			want: "| a | b |\n|---|---|\n| 1 | 2 |\n"},
		{name: "raw html", src: "<div>\nhi\n</div>\n\na <b>c</b>", width: 40, want: "<div>\nhi\n</div>\n\na <b>c</b>\n"},
		{name: "control characters dropped", src: "a\x1b[2Jb\r\nc\x07 \u009bd", width: 40, color: true, want: "a[2Jb c d\n"},
		{name: "blank", src: "\n  \n", width: 40, want: ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := newMDRenderer(tt.color).render(tt.src, tt.width); got != tt.want {
				t.Errorf("render(%q, %d):\n got %q\nwant %q", tt.src, tt.width, got, tt.want)
			}
		})
	}
}

// TestMDRenderWraps: at 40, 80 and 120 columns a paragraph's lines are
// filled as far as the width allows (the next word would not fit), never
// wider but for a word wider than the width, alone on its line, and no
// word is broken; wide characters (CJK, emoji) count two columns.
func TestMDRenderWraps(t *testing.T) {
	long := strings.Repeat("x", 130)
	words := strings.Fields(strings.Repeat("the quick brown fox jumps over a lazy dog, "+
		"https://example.com/a-b-c 日本語の 文章 😀😀 👍🏽 ", 12) + long + " end")
	src := strings.Join(words, " ")
	for _, width := range []int{40, 80, 120} {
		for _, color := range []bool{false, true} {
			out := newMDRenderer(color).render("Some **"+src+"**", width)
			if !color && strings.Contains(out, "\x1b") {
				t.Errorf("width %d: escapes without colour: %q", width, out)
			}
			lines := strings.Split(strings.TrimSuffix(xansi.Strip(out), "\n"), "\n")
			var got []string
			for i, l := range lines {
				f := strings.Fields(l)
				got = append(got, f...)
				w := xansi.StringWidth(l)
				if w > width && len(f) > 1 {
					t.Errorf("width %d: line %q is %d columns", width, l, w)
				}
				if i+1 < len(lines) && w+1+xansi.StringWidth(strings.Fields(lines[i+1])[0]) <= width {
					t.Errorf("width %d: line %q wrapped before the width (next %q)", width, l, lines[i+1])
				}
				if strings.HasSuffix(l, " ") {
					t.Errorf("width %d: line %q ends with a space", width, l)
				}
			}
			if want := append([]string{"Some"}, words...); strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("width %d: the words changed:\n got %q\nwant %q", width, got, want)
			}
			if !strings.Contains(out, long) {
				t.Errorf("width %d: the long word was broken", width)
			}
		}
	}
}

// TestMDRenderCodeUntouched: a code block's lines longer than the width
// are shown whole, at every width.
func TestMDRenderCodeUntouched(t *testing.T) {
	code := []string{"x := []string{" + strings.Repeat(`"a long string", `, 10) + "}", "\ty := 日本語 + 😀"}
	for _, width := range []int{40, 80, 120} {
		out := newMDRenderer(true).render("```\n"+strings.Join(code, "\n")+"\n```\n", width)
		for _, l := range code {
			if !strings.Contains(out, "    "+l+"\n") {
				t.Errorf("width %d: the code line %q is not whole in %q", width, l, out)
			}
		}
	}
}

// TestMDRenderKeepsWords: whatever the markdown, malformed too, every
// word of it is shown (a code fence's info string, the code's language,
// is not: none here).
func TestMDRenderKeepsWords(t *testing.T) {
	word := regexp.MustCompile(`[\p{L}\p{N}]+`)
	for _, src := range []string{
		"an **unclosed strong and *emphasis",
		"```\nan unclosed fence\n\nwith a blank line",
		"~~~\na tilde fence never closed\n\n# still code",
		"a [link without its end(https://x.example and `unclosed code",
		"<div>\nunclosed html block\n\nafter it",
		"- a list\n  ```\n  fenced in the item\n- next item",
		"> quote\n- list\n# heading\ntext\n---\nsetext",
		"[ref]: https://ref.example \"title\"\n\nuses [the ref][ref] and [a missing one][nope]",
		"| a | b |\n| not | a table row\ntext",
		"*a **b* c** _d __e_ f__ \\",
	} {
		for _, width := range []int{40, 80, 120} {
			out := newMDRenderer(false).render(src, width)
			for _, w := range word.FindAllString(src, -1) {
				if !strings.Contains(out, w) {
					t.Errorf("width %d: %q lost the word %q: %q", width, src, w, out)
				}
			}
		}
	}
}

// TestMarkdownBlocks: the blocks of an answer are shown a blank line
// apart; the next answer starts without one.
func TestMarkdownBlocks(t *testing.T) {
	m := newMarkdown(40, false)
	var got []string
	for _, s := range []string{"one\n\n", "two\n\nthree"} {
		got = append(got, m.write(s))
	}
	got = append(got, m.flush(), m.write("four\n\n"), m.flush())
	want := []string{"one\n", "\ntwo\n", "\nthree\n", "four\n", ""}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("shown %q, want %q", got, want)
	}
}
