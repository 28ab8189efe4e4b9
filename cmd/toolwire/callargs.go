package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/toolwire/toolwire/schema"
)

// isKeyValue reports whether a command-line argument of call is a
// key=value (or key:=json) argument rather than JSON: its key is a
// parameter's name, without spaces, quotes or brackets.
func isKeyValue(arg string) bool {
	key, _, ok := strings.Cut(arg, "=")
	key = strings.TrimSuffix(key, ":")
	return ok && key != "" && !strings.ContainsAny(key, " \t\n\"'{}[]:=")
}

// keyValueArgs turns call's key=value arguments into a JSON object: each
// value is read as the tool's input schema types its parameter (a number,
// a boolean, JSON for an object or an array, a string otherwise), and
// key:=json takes the value as JSON whatever the type.
func keyValueArgs(args []string, inputSchema json.RawMessage) (json.RawMessage, error) {
	props, _ := schema.Properties(inputSchema) // no schema: every value a string
	types := map[string][]string{}
	for _, p := range props {
		types[p.Name] = p.Type
	}
	obj := map[string]json.RawMessage{}
	for _, arg := range args {
		if !isKeyValue(arg) {
			return nil, fmt.Errorf("argument %q is not key=value: give the arguments either as one JSON object or as key=value pairs (key:=JSON for a JSON value)", arg)
		}
		key, val, _ := strings.Cut(arg, "=")
		if k, ok := strings.CutSuffix(key, ":"); ok {
			raw := json.RawMessage(val)
			if !json.Valid(raw) {
				return nil, fmt.Errorf("argument %s:=%s: the value is not valid JSON (use %s=%s for a string)", k, val, k, val)
			}
			obj[k] = raw
			continue
		}
		v, err := typedValue(val, types[key])
		if err != nil {
			return nil, fmt.Errorf("argument %s=%s: %w", key, val, err)
		}
		obj[key] = v
	}
	return json.Marshal(obj)
}

// typedValue reads a key=value argument's value as the schema's types
// say: a string when they allow one (or say nothing).
func typedValue(val string, types []string) (json.RawMessage, error) {
	if len(types) == 0 || slices.Contains(types, "string") {
		return json.Marshal(val)
	}
	switch t := types[0]; {
	case slices.Contains(types, "number") || slices.Contains(types, "integer"):
		var f float64
		if json.Unmarshal([]byte(val), &f) != nil {
			return nil, fmt.Errorf("the tool takes a number here (use key:=JSON for another type)")
		}
		return json.RawMessage(val), nil
	case slices.Contains(types, "boolean"):
		b, err := strconv.ParseBool(val)
		if err != nil {
			return nil, fmt.Errorf("the tool takes true or false here")
		}
		return json.Marshal(b)
	default: // object, array, null: JSON
		if !json.Valid([]byte(val)) {
			return nil, fmt.Errorf("the tool takes JSON here (%s), and this is not valid JSON", t)
		}
		return json.RawMessage(val), nil
	}
}

// callArgs checks call's arguments: the tool's name, then nothing, one
// JSON object ("-" for stdin), or key=value pairs.
func callArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 2 && isKeyValue(args[1]) {
		return nil
	}
	return nameAndJSON("tool")(cmd, args)
}
