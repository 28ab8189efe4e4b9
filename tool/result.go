package tool

import (
	"encoding/json"
	"fmt"
)

// Result is what a tool returns to the model: content blocks, optional
// structured content matching the tool's output schema, and whether it is an
// error the model should read and act on.
type Result struct {
	Content           []Content      `json:"content"`
	StructuredContent any            `json:"structuredContent,omitempty"`
	IsError           bool           `json:"isError,omitempty"`
	Meta              map[string]any `json:"_meta,omitempty"`
}

// Text returns a result holding one text block.
func Text(s string) *Result {
	// One allocation for the result and its block: the most common
	// result of all.
	r := &struct {
		Result
		block [1]Content
	}{}
	r.block[0] = TextContent(s)
	r.Content = r.block[:]
	return &r.Result
}

// Errorf returns an error result whose text is the formatted message.
func Errorf(format string, args ...any) *Result {
	return &Result{Content: []Content{TextContent(fmt.Sprintf(format, args...))}, IsError: true}
}

// ErrorResult turns an error into an error result for the model.
func ErrorResult(err error) *Result {
	return &Result{Content: []Content{TextContent(err.Error())}, IsError: true}
}

// The content block types.
const (
	TypeText         = "text"
	TypeImage        = "image"
	TypeAudio        = "audio"
	TypeResourceLink = "resource_link"
	TypeResource     = "resource"
)

// Content is one block of a result or a message: text, image, audio, a link
// to a resource, or an embedded resource. Type says which fields are in use.
type Content struct {
	Type string
	// Text is the text of a text block.
	Text string
	// Data is the base64 data of an image or audio block.
	Data string
	// MimeType of an image, audio or resource link block.
	MimeType string
	// Resource is the embedded resource of a resource block.
	Resource *ResourceContents
	// Link describes the resource of a resource_link block.
	Link *Resource
	// Annotations for the client.
	Annotations *ContentAnnotations
	// Meta is free-form metadata (MCP's _meta).
	Meta map[string]any
}

// TextContent returns a text block.
func TextContent(s string) Content { return Content{Type: TypeText, Text: s} }

// ImageContent returns an image block of base64 data.
func ImageContent(base64Data, mimeType string) Content {
	return Content{Type: TypeImage, Data: base64Data, MimeType: mimeType}
}

// AudioContent returns an audio block of base64 data.
func AudioContent(base64Data, mimeType string) Content {
	return Content{Type: TypeAudio, Data: base64Data, MimeType: mimeType}
}

// EmbeddedResource returns a resource block.
func EmbeddedResource(r ResourceContents) Content { return Content{Type: TypeResource, Resource: &r} }

// ResourceLink returns a resource_link block.
func ResourceLink(r Resource) Content { return Content{Type: TypeResourceLink, Link: &r} }

// ContentAnnotations tell a client how to use or display a block.
type ContentAnnotations struct {
	Audience     []string `json:"audience,omitempty"`
	Priority     *float64 `json:"priority,omitempty"`
	LastModified string   `json:"lastModified,omitempty"`
}

// Resource describes a resource a server can read.
type Resource struct {
	URI         string              `json:"uri"`
	Name        string              `json:"name"`
	Title       string              `json:"title,omitempty"`
	Description string              `json:"description,omitempty"`
	MimeType    string              `json:"mimeType,omitempty"`
	Size        *int64              `json:"size,omitempty"`
	Annotations *ContentAnnotations `json:"annotations,omitempty"`
	Icons       []Icon              `json:"icons,omitempty"`
	Meta        map[string]any      `json:"_meta,omitempty"`
}

// ResourceContents is the content of a resource: text, or a base64 blob.
type ResourceContents struct {
	URI      string `json:"uri"`
	MimeType string `json:"mimeType,omitempty"`
	// Text is the content of a text resource.
	Text string `json:"-"`
	// Blob is the base64 content of a binary resource; when set, Text is not.
	Blob string         `json:"-"`
	Meta map[string]any `json:"_meta,omitempty"`
}

type resourceContentsWire struct {
	URI      string         `json:"uri"`
	MimeType string         `json:"mimeType,omitempty"`
	Text     *string        `json:"text,omitempty"`
	Blob     *string        `json:"blob,omitempty"`
	Meta     map[string]any `json:"_meta,omitempty"`
}

// MarshalJSON writes text or blob, whichever the contents hold.
func (r ResourceContents) MarshalJSON() ([]byte, error) {
	w := resourceContentsWire{URI: r.URI, MimeType: r.MimeType, Meta: r.Meta}
	if r.Blob != "" {
		w.Blob = &r.Blob
	} else {
		w.Text = &r.Text
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads text or blob contents.
func (r *ResourceContents) UnmarshalJSON(b []byte) error {
	var w resourceContentsWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*r = ResourceContents{URI: w.URI, MimeType: w.MimeType, Meta: w.Meta}
	if w.Text != nil {
		r.Text = *w.Text
	}
	if w.Blob != nil {
		r.Blob = *w.Blob
	}
	return nil
}

// contentWire is the union of every block type's members.
type contentWire struct {
	Type        string              `json:"type"`
	Text        *string             `json:"text,omitempty"`
	Data        *string             `json:"data,omitempty"`
	MimeType    string              `json:"mimeType,omitempty"`
	Resource    *ResourceContents   `json:"resource,omitempty"`
	Annotations *ContentAnnotations `json:"annotations,omitempty"`
	Meta        map[string]any      `json:"_meta,omitempty"`
	// resource_link members
	URI         string `json:"uri,omitempty"`
	Name        string `json:"name,omitempty"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Size        *int64 `json:"size,omitempty"`
	Icons       []Icon `json:"icons,omitempty"`
}

// MarshalJSON writes the members of the block's type.
func (c Content) MarshalJSON() ([]byte, error) {
	w := contentWire{Type: c.Type, Annotations: c.Annotations, Meta: c.Meta}
	switch c.Type {
	case TypeText:
		w.Text = &c.Text
	case TypeImage, TypeAudio:
		w.Data, w.MimeType = &c.Data, c.MimeType
	case TypeResource:
		if c.Resource == nil {
			return nil, fmt.Errorf("resource content block has no resource")
		}
		w.Resource = c.Resource
	case TypeResourceLink:
		if c.Link == nil {
			return nil, fmt.Errorf("resource_link content block has no link")
		}
		l := c.Link
		w.URI, w.Name, w.Title, w.Description = l.URI, l.Name, l.Title, l.Description
		w.MimeType, w.Size, w.Icons = l.MimeType, l.Size, l.Icons
		if w.Annotations == nil {
			w.Annotations = l.Annotations
		}
		if w.Meta == nil {
			w.Meta = l.Meta
		}
	default:
		return nil, fmt.Errorf("unknown content block type %q", c.Type)
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads any block type; unknown types keep only their type.
func (c *Content) UnmarshalJSON(b []byte) error {
	var w contentWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*c = Content{Type: w.Type, MimeType: w.MimeType, Resource: w.Resource, Annotations: w.Annotations, Meta: w.Meta}
	if w.Text != nil {
		c.Text = *w.Text
	}
	if w.Data != nil {
		c.Data = *w.Data
	}
	if w.Type == TypeResourceLink {
		c.Link = &Resource{URI: w.URI, Name: w.Name, Title: w.Title, Description: w.Description,
			MimeType: w.MimeType, Size: w.Size, Icons: w.Icons}
	}
	return nil
}

// MarshalJSON always writes a content array, empty rather than null.
func (r Result) MarshalJSON() ([]byte, error) {
	type plain Result
	p := plain(r)
	if p.Content == nil {
		p.Content = []Content{}
	}
	return json.Marshal(p)
}
