package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/toolwire/toolwire/jsonrpc"
)

// checkParamHeaders checks the Mcp-Param-* headers that a tool's
// x-mcp-header annotations call for against the arguments in the body.
func checkParamHeaders(r *http.Request, schema json.RawMessage, args json.RawMessage) *jsonrpc.Error {
	params := headerParams(schema)
	if len(params) == 0 {
		return nil
	}
	var argv map[string]any
	if len(args) > 0 {
		_ = json.Unmarshal(args, &argv)
	}
	for _, hp := range params {
		val, present := lookupPath(argv, hp.path)
		raw, has := r.Header[http.CanonicalHeaderKey(HeaderParamPrefix+hp.name)]
		if !present || val == nil {
			continue
		}
		want := headerString(val)
		if !has {
			return jsonrpc.NewError(CodeHeaderMismatch, "Header mismatch: the %s%s header is missing; it must carry argument %q (%s)", HeaderParamPrefix, hp.name, strings.Join(hp.path, "."), want)
		}
		got, err := decodeHeaderValue(raw[0])
		if err != nil {
			return jsonrpc.NewError(CodeHeaderMismatch, "Header mismatch: %s%s header: %v", HeaderParamPrefix, hp.name, err)
		}
		if got != want && !numericEqual(got, val) {
			return jsonrpc.NewError(CodeHeaderMismatch, "Header mismatch: %s%s header %q does not match argument %q value %q", HeaderParamPrefix, hp.name, got, strings.Join(hp.path, "."), want)
		}
	}
	return nil
}

type headerParam struct {
	name string
	path []string
}

// headerParams finds the properties of a schema annotated with
// x-mcp-header, following only "properties" chains.
func headerParams(schema json.RawMessage) []headerParam {
	if !bytes.Contains(schema, []byte("x-mcp-header")) {
		return nil
	}
	var root map[string]any
	if json.Unmarshal(schema, &root) != nil {
		return nil
	}
	var out []headerParam
	var walk func(node map[string]any, path []string)
	walk = func(node map[string]any, path []string) {
		props, _ := node["properties"].(map[string]any)
		for k, v := range props {
			child, _ := v.(map[string]any)
			if child == nil {
				continue
			}
			p := append(append([]string(nil), path...), k)
			if name, ok := child["x-mcp-header"].(string); ok {
				out = append(out, headerParam{name: name, path: p})
			}
			walk(child, p)
		}
	}
	walk(root, nil)
	return out
}

func lookupPath(v map[string]any, path []string) (any, bool) {
	var cur any = v
	for _, k := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		cur, ok = m[k]
		if !ok {
			return nil, false
		}
	}
	return cur, true
}

func headerString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func numericEqual(header string, body any) bool {
	f, ok := body.(float64)
	if !ok {
		return false
	}
	h, err := strconv.ParseFloat(header, 64)
	return err == nil && h == f
}

// paramHeaderValues returns the Mcp-Param-* header values a tool's
// x-mcp-header annotations ask for, from the call's arguments.
func paramHeaderValues(schema, args json.RawMessage) map[string]string {
	hps := headerParams(schema)
	if len(hps) == 0 {
		return nil
	}
	var argv map[string]any
	_ = json.Unmarshal(args, &argv)
	out := map[string]string{}
	for _, hp := range hps {
		if v, ok := lookupPath(argv, hp.path); ok && v != nil {
			out[hp.name] = headerString(v)
		}
	}
	return out
}

// checkHeaderAnnotations reports why a tool's x-mcp-header annotations are
// invalid, or nil: names must be non-empty, case-insensitively unique HTTP
// tokens on string, integer or boolean properties reachable from the root
// through "properties" alone.
func checkHeaderAnnotations(schema json.RawMessage) error {
	if !bytes.Contains(schema, []byte("x-mcp-header")) {
		return nil
	}
	var root any
	if err := json.Unmarshal(schema, &root); err != nil {
		return fmt.Errorf("the input schema is not valid JSON: %w", err)
	}
	seen := map[string]string{}
	var walk func(node any, path string, annotatable, reachable bool) error
	walkAny := func(v any, path string) error {
		switch x := v.(type) {
		case map[string]any:
			return walk(x, path, false, false)
		case []any:
			for i, e := range x {
				if err := walk(e, path+"/"+strconv.Itoa(i), false, false); err != nil {
					return err
				}
			}
		}
		return nil
	}
	walk = func(node any, path string, annotatable, reachable bool) error {
		obj, ok := node.(map[string]any)
		if !ok {
			return walkAny(node, path)
		}
		if v, ok := obj["x-mcp-header"]; ok {
			where := path
			if where == "" {
				where = "the schema root"
			}
			if !annotatable {
				return fmt.Errorf("x-mcp-header at %s: only properties reachable through \"properties\" alone may carry it", where)
			}
			name, ok := v.(string)
			if !ok {
				return fmt.Errorf("x-mcp-header at %s is not a string", where)
			}
			if err := checkHeaderToken(name); err != nil {
				return fmt.Errorf("x-mcp-header %q at %s: %w", name, where, err)
			}
			lower := strings.ToLower(name)
			if other, dup := seen[lower]; dup {
				return fmt.Errorf("x-mcp-header %q at %s duplicates the one at %s (names are case-insensitive)", name, where, other)
			}
			seen[lower] = where
			if err := checkHeaderType(obj["type"]); err != nil {
				return fmt.Errorf("x-mcp-header %q at %s: %w", name, where, err)
			}
		}
		for k, v := range obj {
			switch k {
			case "x-mcp-header", "default", "const", "enum", "examples":
			case "properties":
				props, ok := v.(map[string]any)
				if !ok {
					continue
				}
				for name, ps := range props {
					if err := walk(ps, path+"/properties/"+name, reachable, reachable); err != nil {
						return err
					}
				}
			default:
				if err := walkAny(v, path+"/"+k); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return walk(root, "", false, true)
}

// checkHeaderToken checks an HTTP field-name token (RFC 9110 tchar).
func checkHeaderToken(name string) error {
	if name == "" {
		return errors.New("the name is empty")
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
		if !ok {
			return fmt.Errorf("character %q is not allowed in an HTTP header name", rune(c))
		}
	}
	return nil
}

// checkHeaderType accepts a property type of string, integer or boolean
// (possibly with null); an absent type is taken on trust.
func checkHeaderType(t any) error {
	allowed := func(s string) bool { return s == "string" || s == "integer" || s == "boolean" }
	switch x := t.(type) {
	case nil:
		return nil
	case string:
		if allowed(x) {
			return nil
		}
		return fmt.Errorf("the property has type %q; only string, integer and boolean may be mirrored into a header", x)
	case []any:
		n := 0
		for _, e := range x {
			s, _ := e.(string)
			switch {
			case s == "null":
			case allowed(s):
				n++
			default:
				return fmt.Errorf("the property may have type %v; only string, integer and boolean may be mirrored into a header", e)
			}
		}
		if n > 0 {
			return nil
		}
	}
	return fmt.Errorf("the property type %v is not string, integer or boolean", t)
}
