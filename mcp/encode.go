package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/toolwire/toolwire/internal/jsonvalue"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/tool"
)

// appendResult appends the JSON encoding of a handler's result. The
// tools/call result, the one every agent step sends, is written directly;
// the rest go through encoding/json. meta, when set, is the _meta of a
// tool result that has none (see decorate).
func appendResult(dst []byte, res any, meta []byte) ([]byte, error) {
	if r, ok := res.(*CallToolResult); ok {
		return appendCallToolResult(dst, r, meta)
	}
	b, err := jsonrpc.Marshal(res)
	return append(dst, b...), err
}

// appendCallToolResult writes what encoding/json writes for r, in one pass
// over each text; meta, when set, is the encoded _meta of an r without
// one.
func appendCallToolResult(dst []byte, r *CallToolResult, meta []byte) ([]byte, error) {
	if dst == nil {
		n := 64
		for _, c := range r.Content {
			n += 32 + len(c.Text) + len(c.Data)
		}
		dst = make([]byte, 0, n+n/16)
	}
	var err error
	dst = append(dst, '{')
	switch {
	case meta != nil && r.Meta == nil:
		dst = append(dst, `"_meta":`...)
		dst = append(dst, meta...)
		dst = append(dst, ',')
	case r.Meta != nil:
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

// marshalParams encodes a request's params: tools/call params directly,
// the rest with encoding/json. A _meta that is meta is written as
// metaJSON, its encoding.
func marshalParams(params any, meta *RequestMeta, metaJSON []byte) (json.RawMessage, error) {
	if p, ok := params.(*CallToolParams); ok && p.InputResponses == nil && p.RequestState == "" {
		switch {
		case p.Meta == nil:
			return appendCallToolParams(nil, p)
		case p.Meta == meta && metaJSON != nil:
			dst := make([]byte, 0, 32+len(metaJSON)+len(p.Name)+len(p.Arguments))
			dst = append(append(append(dst, `{"_meta":`...), metaJSON...), ',')
			return appendCallToolParams(dst, p)
		case p.Meta.traceOf != nil && p.Meta.traceOf == meta && metaJSON != nil && p.Meta.sameBut(meta):
			// meta and the trace context (see Telemetry).
			dst := make([]byte, 0, 128+len(metaJSON)+len(p.Name)+len(p.Arguments))
			dst = append(append(dst, `{"_meta":`...), metaJSON[:len(metaJSON)-1]...)
			dst = append(appendTraceMembers(append(dst, ','), p.Meta), '}', ',')
			return appendCallToolParams(dst, p)
		case p.Meta.traceOnly():
			// The trace context alone (legacy).
			dst := make([]byte, 0, 128+len(p.Name)+len(p.Arguments))
			dst = append(appendTraceMembers(append(dst, `{"_meta":{`...), p.Meta), '}', ',')
			return appendCallToolParams(dst, p)
		}
	}
	if params == nil {
		return nil, nil
	}
	return jsonrpc.Marshal(params)
}

// appendTraceMembers writes the trace context members of m, as
// encoding/json writes them, without braces; m has at least one.
func appendTraceMembers(dst []byte, m *RequestMeta) []byte {
	sep := ""
	for _, kv := range [...][2]string{{"traceparent", m.Traceparent}, {"tracestate", m.Tracestate}, {"baggage", m.Baggage}} {
		if kv[1] != "" {
			dst = append(append(append(append(dst, sep...), '"'), kv[0]...), `":`...)
			dst = jsonvalue.AppendString(dst, kv[1])
			sep = ","
		}
	}
	return dst
}

// appendCallToolParams writes what encoding/json writes for p (without
// _meta and the input members), checking the arguments as it would.
// Arguments spread over several lines are compacted, so that the request
// stays one line on stdio.
func appendCallToolParams(dst []byte, p *CallToolParams) ([]byte, error) {
	if len(dst) == 0 {
		dst = append(dst, '{')
	}
	dst = append(dst, `"name":`...)
	dst = jsonvalue.AppendString(dst, p.Name)
	if len(p.Arguments) == 0 {
		return append(dst, '}'), nil
	}
	start := jsonvalue.SkipSpace(p.Arguments, 0)
	end, err := jsonvalue.Skip(p.Arguments, start)
	if err == nil {
		err = jsonvalue.End(p.Arguments, end)
	}
	if err != nil {
		return nil, fmt.Errorf("tools/call arguments are not valid JSON: %w", err)
	}
	dst = append(dst, `,"arguments":`...)
	args := p.Arguments[start:end]
	if bytes.ContainsAny(args, "\n\r") {
		var b bytes.Buffer
		_ = json.Compact(&b, args) // valid, checked above
		args = b.Bytes()
	}
	dst = append(dst, args...)
	return append(dst, '}'), nil
}

// readCallToolResult decodes a tools/call result as json.Unmarshal does,
// in one pass for the usual shape (text blocks, structured content); it
// hands anything unusual to encoding/json.
func readCallToolResult(raw []byte, r *CallToolResult) error {
	if !fastCallToolResult(raw, r) {
		*r = CallToolResult{}
		return json.Unmarshal(raw, r)
	}
	return nil
}

// callToolResultKeys are the members of a tools/call result.
var callToolResultKeys = [...]string{"_meta", "resultType", "content", "structuredContent", "isError"}

// fastCallToolResult decodes raw into r, or reports false when raw needs
// encoding/json: wrong types, a member that matches a field only without
// regard to case, blocks other than plain text.
func fastCallToolResult(raw []byte, r *CallToolResult) bool {
	i := jsonvalue.SkipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return false
	}
	ok := true
	_, err := jsonvalue.Object(raw, i, func(key string, start, end int) {
		if !ok {
			return
		}
		v := raw[start:end]
		null := string(v) == "null"
		switch key {
		case "_meta":
			if r.Meta != nil {
				ok = false // encoding/json merges a repeated object into the map
				return
			}
			m, err := jsonvalue.Decode(v)
			meta, isMap := m.(map[string]any)
			ok = err == nil && (isMap || null)
			r.Meta = meta
		case "resultType":
			if !null {
				var err error
				r.ResultType, err = jsonvalue.String(v)
				ok = err == nil
			}
		case "content":
			if null {
				r.Content = nil
				return
			}
			ok = v[0] == '['
			if ok {
				r.Content = r.Content[:0]
				_, err := jsonvalue.Array(v, 0, func(start, end int) {
					if ok {
						var c tool.Content
						c, ok = readTextContent(v[start:end])
						r.Content = append(r.Content, c)
					}
				})
				ok = ok && err == nil
				if r.Content == nil {
					r.Content = []tool.Content{}
				}
			}
		case "structuredContent":
			var err error
			r.StructuredContent, err = jsonvalue.Decode(v)
			ok = err == nil
		case "isError":
			switch string(v) {
			case "true":
				r.IsError = true
			case "false":
				r.IsError = false
			default:
				ok = null
			}
		default:
			for _, k := range callToolResultKeys {
				if strings.EqualFold(key, k) {
					ok = false
				}
			}
		}
	})
	return ok && err == nil
}

// readTextContent decodes a block of exactly the members type "text" and
// text, or reports false.
func readTextContent(v []byte) (tool.Content, bool) {
	if v[0] != '{' {
		return tool.Content{}, false
	}
	var typ, text []byte
	n := 0
	_, err := jsonvalue.Object(v, 0, func(key string, start, end int) {
		n++
		switch key {
		case "type":
			typ = v[start:end]
		case "text":
			text = v[start:end]
		}
	})
	if err != nil || n != 2 || string(typ) != `"text"` || len(text) == 0 || text[0] != '"' {
		return tool.Content{}, false
	}
	s, err := jsonvalue.String(text)
	return tool.TextContent(s), err == nil
}
