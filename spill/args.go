package spill

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/toolwire/toolwire/handle"
	"github.com/toolwire/toolwire/schema"
	"github.com/toolwire/toolwire/tool"
)

// handleLen is the length of a result handle: "res_" and 22 characters.
const handleLen = len("res_") + 22

// marker is what every quoted result handle starts with.
var marker = []byte(`"res_`)

// ResolveArgs replaces each top-level argument whose value is a result
// handle with the value behind it, for the caller in ctx, following the
// rules in the package documentation; it is a tool.ArgsFunc. Arguments
// without a quoted "res_ cost one byte search. A handle that does not
// resolve, and one in an argument whose type cannot take its value, are
// errors the model can repair.
func (r *Results) ResolveArgs(ctx context.Context, t tool.Tool, args json.RawMessage) (json.RawMessage, error) {
	if !bytes.Contains(args, marker) {
		return args, nil
	}
	if _, own := t.(ownTool); own {
		return args, nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(args, &m) != nil {
		return args, nil // the pipeline says what is wrong with them
	}
	var types map[string]string
	changed := false
	for name, raw := range m {
		id, ok := asHandle(raw)
		if !ok {
			continue
		}
		v, err := handle.Resolve[*Value](ctx, r.store(), id)
		if err != nil {
			return nil, fmt.Errorf("argument %q: %w", name, err)
		}
		if types == nil {
			types = argTypes(t.Info().InputSchema)
		}
		val, err := v.asArgument(types[name])
		if err != nil {
			return nil, fmt.Errorf("argument %q is the handle %s, but %w", name, id, err)
		}
		m[name], changed = val, true
	}
	if !changed {
		return args, nil
	}
	out, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encoding the arguments with the values of their handles: %w", err)
	}
	return out, nil
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

// argTypes maps the tool's top-level parameters to their main schema
// type ("" when the schema gives none).
func argTypes(inputSchema json.RawMessage) map[string]string {
	types := map[string]string{}
	if len(inputSchema) == 0 {
		return types
	}
	props, _ := schema.Properties(inputSchema) // a registered tool's schema compiled
	for _, p := range props {
		types[p.Name] = p.MainType()
	}
	return types
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
