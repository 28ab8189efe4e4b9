package tool

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxExcerpt bounds the text of an embedded resource a model is shown, in
// bytes; the rest is left out and its size said.
const MaxExcerpt = 8 << 10

// ModelView is a tool result as a model is shown it.
type ModelView struct {
	// Text is what the model reads: the text blocks in order; the
	// structured content as JSON when there is no text; a line naming
	// each image and audio attachment; an embedded resource by its URI
	// with an excerpt of its text; a resource link by its URI.
	Text string
	// Attachments are the result's images and audio, for providers that
	// take them; Text names each one where it stood.
	Attachments []Attachment
	// IsError is true when the result reports a failure.
	IsError bool
}

// Attachment is an image or audio block of a result.
type Attachment struct {
	// Type is TypeImage or TypeAudio.
	Type     string
	MimeType string
	// Data is the base64 data, as the result carried it.
	Data string
}

// noOutput is what a model reads of a result with nothing in it: some
// providers refuse an empty tool result.
const noOutput = "(the tool returned no output)"

// ForModel renders the result as a model is shown it. A nil result is
// shown as one with no output.
func (r *Result) ForModel() ModelView {
	if r == nil {
		return ModelView{Text: noOutput}
	}
	v := ModelView{IsError: r.IsError}
	var b strings.Builder
	line := func(s string) {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(s)
	}
	hasText := false
	for _, c := range r.Content {
		switch c.Type {
		case TypeText:
			hasText = true
			line(c.Text)
		case TypeImage, TypeAudio:
			v.Attachments = append(v.Attachments, Attachment{Type: c.Type, MimeType: c.MimeType, Data: c.Data})
			line(fmt.Sprintf("[%s %d: %s, %d bytes, attached]", c.Type, len(v.Attachments), orUnknown(c.MimeType), decodedSize(c.Data)))
		case TypeResource:
			if c.Resource != nil {
				line(resourceExcerpt(c.Resource))
			}
		case TypeResourceLink:
			if c.Link != nil {
				line(linkLine(c.Link))
			}
		default:
			line(fmt.Sprintf("[content of type %q left out]", c.Type))
		}
	}
	if !hasText && r.StructuredContent != nil {
		if s, err := json.Marshal(r.StructuredContent); err == nil {
			line(string(s))
		}
	}
	v.Text = b.String()
	if v.Text == "" {
		v.Text = noOutput
	}
	return v
}

// decodedSize is the size of the data base64 text encodes.
func decodedSize(b64 string) int {
	return base64.StdEncoding.DecodedLen(len(b64)) - (len(b64) - len(strings.TrimRight(b64, "=")))
}

func orUnknown(mime string) string {
	if mime == "" {
		return "unknown type"
	}
	return mime
}

// resourceExcerpt names an embedded resource and shows the start of its
// text.
func resourceExcerpt(rc *ResourceContents) string {
	if rc.Blob != "" {
		return fmt.Sprintf("[resource %s: %s, %d bytes of binary data]", rc.URI, orUnknown(rc.MimeType), decodedSize(rc.Blob))
	}
	head := fmt.Sprintf("[resource %s", rc.URI)
	if rc.MimeType != "" {
		head += ": " + rc.MimeType
	}
	text := rc.Text
	if len(text) <= MaxExcerpt {
		return head + "]\n" + text
	}
	cut := MaxExcerpt
	for cut > 0 && !utf8.RuneStart(text[cut]) {
		cut--
	}
	return fmt.Sprintf("%s, first %d of %d bytes]\n%s\n[… %d more bytes left out]", head, cut, len(text), text[:cut], len(text)-cut)
}

// linkLine names a linked resource.
func linkLine(l *Resource) string {
	s := "[resource link " + l.URI
	var about []string
	if l.Name != "" {
		about = append(about, l.Name)
	}
	if l.MimeType != "" {
		about = append(about, l.MimeType)
	}
	if len(about) > 0 {
		s += " (" + strings.Join(about, ", ") + ")"
	}
	if l.Description != "" {
		s += ": " + l.Description
	}
	return s + "]"
}
