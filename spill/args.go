package spill

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/toolwire/toolwire/handle"
	"github.com/toolwire/toolwire/tool"
)

// handleLen is the length of a result handle: "res_" and 22 characters.
const handleLen = len("res_") + 22

// marker is what every quoted result handle starts with.
var marker = []byte(`"res_`)

// maxDepth bounds how deep in the arguments ResolveArgs looks for
// handles.
const maxDepth = 16

// ResolveArgs replaces each value in the arguments that is a result
// handle — a top-level argument's, or a field's or an array element's
// inside one — with the value behind it, for the caller in ctx,
// following the rules in the package documentation; it is a
// tool.ArgsFunc. Arguments without a quoted "res_ cost one byte search.
// A handle that does not resolve, and one in a place whose schema type
// cannot take its value, are errors the model can repair.
func (r *Results) ResolveArgs(ctx context.Context, t tool.Tool, args json.RawMessage) (json.RawMessage, error) {
	if !bytes.Contains(args, marker) {
		return args, nil
	}
	if _, own := t.(ownTool); own {
		return args, nil
	}
	out, _, err := r.resolve(ctx, args, t.Info().InputSchema, "", 0)
	return out, err
}

// resolve returns raw, a value of schema sch (nil: any) at path in the
// arguments, with the handles in it replaced; changed says whether any
// was.
func (r *Results) resolve(ctx context.Context, raw, sch json.RawMessage, path string, depth int) (out json.RawMessage, changed bool, err error) {
	if id, ok := asHandle(raw); ok && depth > 0 {
		v, err := handle.Resolve[*Value](ctx, r.store(), id)
		if err != nil {
			return nil, false, fmt.Errorf("argument %q: %w", path, err)
		}
		val, err := v.asArgument(schemaType(sch))
		if err != nil {
			return nil, false, fmt.Errorf("argument %q is the handle %s, but %w", path, id, err)
		}
		return val, true, nil
	}
	if depth >= maxDepth || !bytes.Contains(raw, marker) {
		return raw, false, nil
	}
	var sub struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Items      json.RawMessage            `json:"items"`
	}
	_ = json.Unmarshal(sch, &sub) // a registered tool's schema compiled; nil or odd: no subschemas
	switch raw = bytes.TrimSpace(raw); raw[0] {
	case '{':
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) != nil {
			return raw, false, nil // the pipeline says what is wrong with it
		}
		for k, v := range m {
			nv, ch, err := r.resolve(ctx, v, sub.Properties[k], join(path, k), depth+1)
			if err != nil {
				return nil, false, err
			}
			if ch {
				m[k], changed = nv, true
			}
		}
		if changed {
			out, err = json.Marshal(m)
		}
	case '[':
		var a []json.RawMessage
		if json.Unmarshal(raw, &a) != nil {
			return raw, false, nil
		}
		for i, v := range a {
			nv, ch, err := r.resolve(ctx, v, sub.Items, join(path, fmt.Sprint(i)), depth+1)
			if err != nil {
				return nil, false, err
			}
			if ch {
				a[i], changed = nv, true
			}
		}
		if changed {
			out, err = json.Marshal(a)
		}
	}
	if err != nil {
		return nil, false, fmt.Errorf("encoding the arguments with the values of their handles: %w", err)
	}
	if !changed {
		return raw, false, nil
	}
	return out, true, nil
}

// join writes the path of an argument as an ArgumentsError does:
// "edits/0/newText".
func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "/" + key
}

// asHandle returns the handle raw is, when it is a JSON string holding
// exactly a well-formed result handle.
func asHandle(raw json.RawMessage) (string, bool) {
	if len(raw) != handleLen+2 || !bytes.HasPrefix(raw, marker) || raw[len(raw)-1] != '"' {
		return "", false
	}
	id := string(raw[1 : len(raw)-1])
	_, err := handle.Parse(id)
	return id, err == nil
}

// schemaType is the main type sch gives ("" for none): its "type", or
// the first of its types that is not "null".
func schemaType(sch json.RawMessage) string {
	var s struct {
		Type json.RawMessage `json:"type"`
	}
	if json.Unmarshal(sch, &s) != nil || len(s.Type) == 0 {
		return ""
	}
	var one string
	if json.Unmarshal(s.Type, &one) == nil {
		return one
	}
	var many []string
	_ = json.Unmarshal(s.Type, &many)
	for _, t := range many {
		if t != "null" {
			return t
		}
	}
	return ""
}

// asArgument is v as the value of a parameter of schema type typ.
func (v *Value) asArgument(typ string) (json.RawMessage, error) {
	switch typ {
	case "string":
		return json.Marshal(v.text())
	case "object", "array":
		doc := v.JSON
		if doc == nil && v.Blob == "" && json.Valid([]byte(v.Text)) {
			doc = json.RawMessage(v.Text)
		}
		if doc == nil {
			return nil, fmt.Errorf("it holds text that is not JSON and the parameter takes an %s: pass the text to a string parameter, or build the %s yourself (read_result reads the text)", typ, typ)
		}
		return doc, nil
	case "":
		if v.JSON != nil {
			return v.JSON, nil
		}
		return json.Marshal(v.text())
	}
	return nil, fmt.Errorf("the parameter takes a %s, not a handle: read the value you need with read_result or query_result and pass it", typ)
}
