// Package schema derives JSON Schemas (draft 2020-12) for tool arguments
// from Go types, fills in defaults, and validates arguments with error
// messages written for a language model to act on.
//
// The flow for a tool is:
//
//	info, err := schema.For[Args]() // once, at registration
//	v := info.Validator             // or schema.Compile(raw) for a hand-written schema
//	...
//	v.ApplyDefaults(args)   // per call, args decoded from JSON into map[string]any
//	err := v.Validate(args) // nil or a *ValidationError
//
// # Inference rules
//
// For[T] and ForType map Go types to schemas the way encoding/json maps
// Go values to JSON, so that whatever satisfies the schema also decodes
// into T:
//
//   - struct: "type": "object" with one property per field as encoding/json
//     sees it (json tag names, embedded structs flattened with the same
//     precedence rules, json:"-" and unexported fields skipped) and
//     "additionalProperties": false, so a model that invents an argument is
//     told so instead of having it silently ignored.
//   - A field is required unless it is a pointer, has omitempty or omitzero,
//     has a default, or is promoted from an embedded pointer; the
//     jsonschema tag options "required" and "optional" override that.
//   - Pointers have the schema of what they point to (null is not offered).
//   - bool → boolean; int kinds → integer (unsigned kinds add
//     "minimum": 0); float kinds and json.Number → number; string → string.
//   - Slices and arrays → array with "items" (arrays also fix minItems and
//     maxItems); []byte → string with "contentEncoding": "base64".
//   - Maps with string, integer or encoding.TextUnmarshaler keys → object
//     with "additionalProperties" set to the value schema.
//   - time.Time → string with "format": "date-time".
//   - time.Duration → integer nanoseconds, as encoding/json decodes it; use
//     a string field if the model should write "5s".
//   - Interfaces, json.RawMessage and other json.Unmarshaler types → {}
//     (any value), unless the type implements [Provider].
//   - Other encoding.TextUnmarshaler types → string.
//   - A struct type that contains itself is emitted once under "$defs" and
//     referred to with "$ref" (the root type is referred to as "#"), so
//     inference terminates on recursive types.
//   - A json ",string" option on a number or bool field gives a string.
//   - Channels, functions and complex numbers are errors.
//
// Properties are emitted in field order and every object's keys in a fixed
// order, so the same type always gives the same bytes.
//
// # Struct tags
//
// A field's description comes from its own tag, so it can hold any text:
//
//	Path string `json:"path" description:"Path of the file, relative to the workspace"`
//
// Constraints go in a jsonschema tag as comma-separated key=value pairs. A
// value that contains a comma is written in single quotes, and a single
// quote inside such a value is doubled:
//
//	Count int      `json:"count" jsonschema:"default=10,minimum=0,maximum=100"`
//	Mode  string   `json:"mode" jsonschema:"enum=fast|slow,default=fast"`
//	Code  string   `json:"code" jsonschema:"pattern='^[A-Z]{2,3}$',example=ABC"`
//	Tags  []string `json:"tags" jsonschema:"enum=red|green,maxItems=3"`
//
// Keys: default, example (may repeat), enum (values separated by |),
// minimum, maximum, exclusiveMinimum, exclusiveMaximum, minLength,
// maxLength, pattern, format, minItems, maxItems, and the options required
// and optional. Values are read as the field's type: literal text for
// string fields, JSON for everything else (default='["a","b"]' for a
// slice). On a slice or array field, the item constraints (enum, minimum,
// maximum, exclusive*, minLength, maxLength, pattern, format) apply to the
// items; minItems, maxItems, default and example apply to the array.
// Unknown keys and constraints that do not fit the field's type are
// errors.
//
// [Options.Omit] leaves chosen top-level fields out of the schema, for a
// caller that fills them itself (package tool does so for fields tagged
// tool:"inject").
//
// # Validation
//
// [Compile] compiles a schema once with
// github.com/santhosh-tekuri/jsonschema/v6 (see VALIDATOR.md for why). The
// "format" keyword is asserted (a date-time must be a date-time), remote
// references are refused, and every "default" must satisfy its own schema.
// For schemas made only of the common keywords (those inference produces,
// plus allOf and anyOf) the Validator also builds an allocation-free check
// that accepts valid input without calling the library. That check only
// ever accepts what the library accepts (tested against the library and
// the official test suite); anything it does not accept goes to the
// library, which decides and writes the details of every rejection.
package schema
