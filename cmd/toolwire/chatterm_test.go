package main

import (
	"context"
	"errors"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/term"
)

// TestKeyboard: keys typed reach the line editor; Ctrl-C ends the line
// read as interrupted (the lines before it not); during a turn it cancels
// the turn and drops what was typed meanwhile, unless a line is being
// read (a question during the turn), which it ends.
func TestKeyboard(t *testing.T) {
	type line struct {
		text string
		err  error
	}
	tests := []struct {
		name       string
		turn       bool // a turn runs while the keys are typed
		readFirst  bool // a line is being read when they are typed
		keys       string
		want       []line
		wantCancel bool
	}{
		{name: "a line", readFirst: true, keys: "hello\r", want: []line{{"hello", nil}}},
		{name: "CR LF is one line end", readFirst: true, keys: "a\r\nb\x03", want: []line{{"a", nil}, {"b", errInterrupted}}},
		{name: "Ctrl-C ends the line as interrupted", readFirst: true, keys: "half\x03", want: []line{{"half", errInterrupted}}},
		{name: "a line, then Ctrl-C", readFirst: true, keys: "abc\r\x03", want: []line{{"abc", nil}, {"", errInterrupted}}},
		{name: "Ctrl-D on an empty line", readFirst: true, keys: "\x04", want: []line{{"", io.EOF}}},
		{name: "Ctrl-C during a turn drops the keys typed", turn: true, keys: "typed ahead\rmore\x03next\r", want: []line{{"next", nil}}, wantCancel: true},
		{name: "Ctrl-C during a turn's question ends it", turn: true, readFirst: true, keys: "y\x03", want: []line{{"y", errInterrupted}}, wantCancel: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pr, pw := io.Pipe()
			defer pw.Close()
			k := newKeyboard(pr)
			editor := term.NewTerminal(struct {
				io.Reader
				io.Writer
			}{k, io.Discard}, "> ")
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			if tt.turn {
				k.setTurn(cancel)
			}
			got := make(chan line, len(tt.want))
			read := func() {
				for range tt.want {
					text, err := k.readLine(editor)
					got <- line{text, err}
				}
			}
			if tt.readFirst {
				go read()
				for reading := false; !reading; time.Sleep(time.Millisecond) {
					k.mu.Lock()
					reading = k.reading
					k.mu.Unlock()
				}
			}
			if _, err := io.WriteString(pw, tt.keys); err != nil {
				t.Fatal(err)
			}
			if tt.wantCancel {
				select {
				case <-ctx.Done():
				case <-time.After(5 * time.Second):
					t.Fatal("the turn was not cancelled")
				}
				if !errors.Is(context.Cause(ctx), errInterrupted) {
					t.Errorf("the turn's cause is %v, want errInterrupted", context.Cause(ctx))
				}
				k.setTurn(nil)
			}
			if !tt.readFirst {
				go read()
			}
			for i, w := range tt.want {
				select {
				case l := <-got:
					if l.text != w.text || !errors.Is(l.err, w.err) && l.err != w.err {
						t.Errorf("line %d: %q, %v; want %q, %v", i, l.text, l.err, w.text, w.err)
					}
				case <-time.After(5 * time.Second):
					t.Fatalf("line %d was never read", i)
				}
			}
			if !tt.wantCancel && ctx.Err() != nil {
				t.Error("the turn was cancelled")
			}
		})
	}
}

// TestMarkdown: the answer is rendered a block at a time, once the block
// is complete (a blank line inside a code fence does not end it), without
// the markup, within the width and without padding at the lines' ends.
func TestMarkdown(t *testing.T) {
	m := newMarkdown(40, true)
	if out := m.write("Some **bo"); out != "" {
		t.Errorf("an unfinished block was shown: %q", out)
	}
	out := m.write("ld** text.\n\n```\ncode\n\nmore")
	if plain := ansi.ReplaceAllString(out, ""); !strings.Contains(plain, "Some bold text.") || strings.Contains(plain, "code") {
		t.Errorf("the first block should be shown rendered, alone: %q", plain)
	}
	if out := m.write("\n"); out != "" {
		t.Errorf("a blank line in a code fence ended the block: %q", out)
	}
	out += m.write("```\n\n")
	if plain := ansi.ReplaceAllString(out, ""); !strings.Contains(plain, "code") || !strings.Contains(plain, "more") || strings.Contains(plain, "```") {
		t.Errorf("the code block should be shown rendered: %q", plain)
	}
	out += m.write("A sentence long enough to be wrapped at forty columns, between words.")
	out += m.flush()
	for _, l := range strings.Split(ansi.ReplaceAllString(out, ""), "\n") {
		if len(l) > 40 || strings.HasSuffix(l, " ") {
			t.Errorf("line %q: wider than 40 columns, or padded", l)
		}
	}
	if !regexp.MustCompile(`A sentence long enough to be wrapped\s+at\s+forty\s+columns,\s+between\s+words\.`).MatchString(ansi.ReplaceAllString(out, "")) {
		t.Errorf("the last block lost words: %q", out)
	}
	if m.flush() != "" {
		t.Error("flush showed a block twice")
	}
}
