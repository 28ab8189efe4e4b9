package spill

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"

	"github.com/toolwire/toolwire/handle"
	"github.com/toolwire/toolwire/tool"
)

// Middleware returns the registry middleware that keeps a result over
// its call's budget behind handles: when its text (text blocks and
// embedded resources together) exceeds the budget, the largest blocks,
// each behind a handle of its own, until the rest fits; when its
// structured content exceeds the budget, that too. Each block kept is
// replaced by a text block previewing it; structured content kept is
// removed and its preview added at the end, unless it repeats a text
// block kept (as a typed tool's does). A part that cannot be kept
// (larger than the store's whole bound) is replaced by its preview and a
// sentence saying so. Images, audio and resource links are left as they
// are, and so is a result under the budget, which costs a sum of lengths
// to measure.
func (r *Results) Middleware() tool.Middleware {
	return func(next tool.Handler) tool.Handler {
		return func(ctx context.Context, c *tool.Call) (*tool.Result, error) {
			res, err := next(ctx, c)
			if err != nil || res == nil {
				return res, err
			}
			if _, own := c.Tool.(ownTool); own {
				return res, nil
			}
			b := r.budget(c)
			if b < 0 || !over(res, b) {
				return res, nil
			}
			return r.keep(ctx, c.Name, res, b), nil
		}
	}
}

// over reports whether res's text (its text blocks and embedded
// resources together), or its structured content, exceeds b bytes.
func over(res *tool.Result, b int64) bool {
	var n int64
	for i := range res.Content {
		if n += blockSize(&res.Content[i]); n > b {
			return true
		}
	}
	return res.StructuredContent != nil && jsonSize(res.StructuredContent, b) > b
}

// blockSize is what a block costs a model's context, for the budget:
// images and audio are attachments, and cost nothing here.
func blockSize(c *tool.Content) int64 {
	switch c.Type {
	case tool.TypeText:
		return int64(len(c.Text))
	case tool.TypeResource:
		if c.Resource != nil {
			return int64(len(c.Resource.Text) + len(c.Resource.Blob))
		}
	}
	return 0
}

// jsonSize estimates the size of v encoded as JSON, stopping once it
// passes limit: decoded JSON (maps, slices, strings, numbers) is
// measured without encoding it, a json.RawMessage by its length; other
// Go values are encoded.
func jsonSize(v any, limit int64) int64 {
	switch x := v.(type) {
	case json.RawMessage:
		return int64(len(x))
	case nil:
		return 4
	case bool:
		return 5
	case string:
		return int64(len(x)) + 2
	case float64, int, int64:
		return 8
	case json.Number:
		return int64(len(x))
	case []any:
		n := int64(2)
		for _, e := range x {
			if n += jsonSize(e, limit-n) + 1; n > limit {
				return n
			}
		}
		return n
	case map[string]any:
		n := int64(2)
		for k, e := range x {
			if n += int64(len(k)) + 4 + jsonSize(e, limit-n); n > limit {
				return n
			}
		}
		return n
	}
	b, err := json.Marshal(v)
	if err != nil {
		return 0
	}
	return int64(len(b))
}

// part is content block i of a result, of n bytes.
type part struct {
	i int
	n int64
}

// keep returns res with its largest blocks kept behind handles until the
// rest of its text fits b, and its structured content kept when it
// exceeds b. res itself is not changed: a tool may return a result it
// shares.
func (r *Results) keep(ctx context.Context, name string, res *tool.Result, b int64) *tool.Result {
	out := *res
	out.Content = slices.Clone(res.Content)
	var parts []part
	var total int64
	for i := range res.Content {
		if n := blockSize(&res.Content[i]); n > 0 {
			parts = append(parts, part{i, n})
			total += n
		}
	}
	slices.SortStableFunc(parts, func(x, y part) int { return cmp.Compare(y.n, x.n) })
	kept := map[string]bool{} // texts kept, for structured content that repeats one
	for _, p := range parts {
		if total <= b {
			break
		}
		total -= p.n
		c := res.Content[p.i]
		v := &Value{Tool: name}
		if c.Type == tool.TypeText {
			v.Text = c.Text
		} else {
			v.Text, v.Blob, v.URI, v.MimeType = c.Resource.Text, c.Resource.Blob, c.Resource.URI, c.Resource.MimeType
		}
		id, err := r.put(ctx, v)
		if err == nil && v.Text != "" {
			kept[v.Text] = true
		}
		out.Content[p.i] = tool.Content{Type: tool.TypeText, Text: preview(v, id, err), Annotations: c.Annotations}
	}
	if res.StructuredContent == nil || jsonSize(res.StructuredContent, b) <= b {
		return &out
	}
	raw, ok := res.StructuredContent.(json.RawMessage)
	if !ok {
		var err error
		if raw, err = json.Marshal(res.StructuredContent); err != nil {
			return &out // not JSON: the registry's encoder will say so
		}
	}
	out.StructuredContent = nil
	if kept[string(raw)] {
		return &out // the same JSON as a text block kept: one handle says it
	}
	v := &Value{Tool: name, JSON: raw}
	id, err := r.put(ctx, v)
	out.Content = append(out.Content, tool.TextContent(preview(v, id, err)))
	return &out
}

// put keeps v for the caller in ctx.
func (r *Results) put(ctx context.Context, v *Value) (string, error) {
	h, err := handle.Put(ctx, r.store(), v, v.size())
	return h.ID, err
}
