package tool

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
)

// HideParameters returns an object schema without the named properties,
// in "properties" and "required": the schema a model sees of a tool whose
// host fills those parameters. Other keys keep their order.
func HideParameters(inputSchema json.RawMessage, names []string) (json.RawMessage, error) {
	if len(names) == 0 {
		return inputSchema, nil
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(inputSchema, &top); err != nil {
		return nil, fmt.Errorf("input schema is not a JSON object: %w", err)
	}
	props, err := dropKeys(top["properties"], names)
	if err != nil {
		return nil, fmt.Errorf("input schema properties: %w", err)
	}
	var required []string
	if r, ok := top["required"]; ok {
		if err := json.Unmarshal(r, &required); err != nil {
			return nil, fmt.Errorf("input schema required: %w", err)
		}
		required = slices.DeleteFunc(required, func(n string) bool { return slices.Contains(names, n) })
	}
	return rewriteObject(inputSchema, func(key string, val json.RawMessage) (json.RawMessage, bool) {
		switch key {
		case "properties":
			return props, true
		case "required":
			b, _ := json.Marshal(required)
			return b, len(required) > 0
		}
		return val, true
	})
}

// dropKeys removes keys from a JSON object, keeping the others in order.
func dropKeys(obj json.RawMessage, names []string) (json.RawMessage, error) {
	if len(obj) == 0 {
		return obj, nil
	}
	return rewriteObject(obj, func(key string, val json.RawMessage) (json.RawMessage, bool) {
		return val, !slices.Contains(names, key)
	})
}

// rewriteObject rebuilds a JSON object member by member, in order; edit
// returns each member's new value and whether to keep it.
func rewriteObject(obj json.RawMessage, edit func(key string, val json.RawMessage) (json.RawMessage, bool)) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("not a JSON object")
	}
	var out bytes.Buffer
	out.WriteByte('{')
	first := true
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key := tok.(string)
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil, err
		}
		nv, keep := edit(key, val)
		if !keep {
			continue
		}
		if !first {
			out.WriteByte(',')
		}
		first = false
		k, _ := json.Marshal(key)
		out.Write(k)
		out.WriteByte(':')
		out.Write(nv)
	}
	out.WriteByte('}')
	return out.Bytes(), nil
}
