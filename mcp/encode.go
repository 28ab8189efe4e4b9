package mcp

import (
	"encoding/json"

	"github.com/toolwire/toolwire/internal/jsonvalue"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/tool"
)

// appendResult appends the JSON encoding of a handler's result. The
// tools/call result, the one every agent step sends, is written directly;
// the rest go through encoding/json.
func appendResult(dst []byte, res any) ([]byte, error) {
	if r, ok := res.(*CallToolResult); ok {
		return appendCallToolResult(dst, r)
	}
	b, err := jsonrpc.Marshal(res)
	return append(dst, b...), err
}

// appendCallToolResult writes what encoding/json writes for r, in one pass
// over each text.
func appendCallToolResult(dst []byte, r *CallToolResult) ([]byte, error) {
	if dst == nil {
		n := 64
		for _, c := range r.Content {
			n += 32 + len(c.Text) + len(c.Data)
		}
		dst = make([]byte, 0, n+n/16)
	}
	var err error
	dst = append(dst, '{')
	if r.Meta != nil {
		dst = append(dst, `"_meta":`...)
		if dst, err = jsonvalue.Append(dst, r.Meta); err != nil {
			return dst, err
		}
		dst = append(dst, ',')
	}
	if r.ResultType != "" {
		dst = append(dst, `"resultType":`...)
		dst = jsonvalue.AppendString(dst, r.ResultType)
		dst = append(dst, ',')
	}
	dst = append(dst, `"content":`...)
	if r.Content == nil {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, '[')
		for i, c := range r.Content {
			if i > 0 {
				dst = append(dst, ',')
			}
			if dst, err = appendContent(dst, c); err != nil {
				return dst, err
			}
		}
		dst = append(dst, ']')
	}
	if r.StructuredContent != nil {
		dst = append(dst, `,"structuredContent":`...)
		if dst, err = jsonvalue.Append(dst, r.StructuredContent); err != nil {
			return dst, err
		}
	}
	if r.IsError {
		dst = append(dst, `,"isError":true`...)
	}
	return append(dst, '}'), nil
}

// appendContent writes a plain text block directly and any other block
// with its MarshalJSON.
func appendContent(dst []byte, c tool.Content) ([]byte, error) {
	if c.Type == tool.TypeText && c.Annotations == nil && c.Meta == nil {
		dst = append(dst, `{"type":"text","text":`...)
		dst = jsonvalue.AppendString(dst, c.Text)
		return append(dst, '}'), nil
	}
	b, err := json.Marshal(c)
	return append(dst, b...), err
}
