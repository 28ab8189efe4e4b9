package schema_test

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/toolwire/toolwire/schema"
)

// SearchArgs are the arguments of a search tool.
type SearchArgs struct {
	Query string   `json:"query" description:"What to look for, in plain words."`
	Limit int      `json:"limit" jsonschema:"default=10,minimum=1,maximum=50"`
	Sort  string   `json:"sort,omitempty" jsonschema:"enum=relevance|date,default=relevance"`
	Sites []string `json:"sites,omitempty" jsonschema:"format=hostname"`
}

func Example() {
	info, err := schema.For[SearchArgs]()
	if err != nil {
		panic(err)
	}
	fmt.Println(string(info.Schema))

	// A call from the model: decode, fill defaults, validate.
	var args map[string]any
	_ = json.Unmarshal([]byte(`{"query": "go generics"}`), &args)
	info.Validator.ApplyDefaults(args)
	fmt.Println(args, info.Validator.Validate(args))

	// A bad call: the error says what to fix.
	var bad map[string]any
	_ = json.Unmarshal([]byte(`{"limit": "ten", "order": "date"}`), &bad)
	info.Validator.ApplyDefaults(bad)
	err = info.Validator.Validate(bad)
	fmt.Println(err)
	var verr *schema.ValidationError
	if errors.As(err, &verr) {
		fmt.Println("missing:", verr.Missing)
	}
	// Output:
	// {"type":"object","properties":{"query":{"type":"string","description":"What to look for, in plain words."},"limit":{"type":"integer","default":10,"minimum":1,"maximum":50},"sort":{"type":"string","enum":["relevance","date"],"default":"relevance"},"sites":{"type":"array","items":{"type":"string","format":"hostname"}}},"required":["query"],"additionalProperties":false}
	// map[limit:10 query:go generics sort:relevance] <nil>
	// missing required argument "query"; argument "limit": expected integer, got string "ten"; unknown argument "order" (known arguments: limit, query, sites, sort)
	// missing: [query]
}

func ExampleCompile() {
	v, err := schema.Compile(json.RawMessage(`{
		"type": "object",
		"properties": {"path": {"type": "string"}, "depth": {"type": "integer", "default": 1}},
		"required": ["path"]
	}`))
	if err != nil {
		panic(err)
	}
	args := map[string]any{}
	v.ApplyDefaults(args)
	fmt.Println(args)
	fmt.Println(v.Validate(args))
	// Output:
	// map[depth:1]
	// missing required argument "path"
}

func ExampleValidationError() {
	v, err := schema.Compile(json.RawMessage(`{
		"type": "object",
		"properties": {"opts": {"type": "object", "properties": {"depth": {"type": "integer"}}, "required": ["depth"]}},
		"required": ["model_path"]
	}`))
	if err != nil {
		panic(err)
	}
	var args any
	_ = json.Unmarshal([]byte(`{"opts": {}}`), &args)
	var verr *schema.ValidationError
	if errors.As(v.Validate(args), &verr) {
		fmt.Println(verr.Missing)
	}
	// Output:
	// [model_path opts/depth]
}
