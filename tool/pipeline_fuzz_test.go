package tool_test

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/schema"
	"github.com/toolwire/toolwire/tool"
)

// fuzzSchema uses the keywords tool schemas use: types (one a union with
// null), required, defaults (also inside a nested object and inside the
// items of an array of objects), enum, minimum and maximum, lengths, a
// pattern and a format.
const fuzzSchema = `{
  "type": "object",
  "properties": {
    "query": {"type": "string", "minLength": 1, "maxLength": 200},
    "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 10},
    "mode": {"type": "string", "enum": ["fast", "slow", "auto"], "default": "auto"},
    "ratio": {"type": "number", "exclusiveMinimum": 0, "maximum": 1},
    "verbose": {"type": "boolean"},
    "tags": {"type": "array", "items": {"type": "string", "pattern": "^[a-z]+$"}, "maxItems": 5},
    "filter": {
      "type": "object",
      "properties": {
        "field": {"type": "string"},
        "op": {"type": "string", "enum": ["eq", "lt", "gt"], "default": "eq"},
        "value": {}
      },
      "required": ["field"],
      "additionalProperties": false
    },
    "sort": {
      "type": "array",
      "items": {
        "type": "object",
        "properties": {
          "by": {"type": "string"},
          "desc": {"type": "boolean", "default": false}
        },
        "required": ["by"],
        "additionalProperties": false
      }
    },
    "note": {"type": ["string", "null"]},
    "when": {"type": "string", "format": "date-time"}
  },
  "required": ["query"],
  "additionalProperties": false
}`

// fuzzIn is the same shape as a typed tool's input.
type fuzzIn struct {
	Query   string   `json:"query" jsonschema:"minLength=1,maxLength=200"`
	Limit   int      `json:"limit" jsonschema:"default=10,minimum=1,maximum=100"`
	Mode    string   `json:"mode" jsonschema:"enum=fast|slow|auto,default=auto"`
	Ratio   float64  `json:"ratio,omitempty" jsonschema:"exclusiveMinimum=0,maximum=1"`
	Verbose bool     `json:"verbose,omitempty"`
	Tags    []string `json:"tags,omitempty" jsonschema:"pattern=^[a-z]+$,maxItems=5"`
	Filter  *struct {
		Field string `json:"field"`
		Op    string `json:"op" jsonschema:"enum=eq|lt|gt,default=eq"`
		Value any    `json:"value,omitempty"`
	} `json:"filter,omitempty"`
	Sort []struct {
		By   string `json:"by"`
		Desc bool   `json:"desc" jsonschema:"default=false"`
	} `json:"sort,omitempty"`
	Note     *string `json:"note,omitempty"`
	When     string  `json:"when,omitempty" jsonschema:"format=date-time"`
	Executor string  `json:"executor" tool:"inject"`
}

// fuzzSetup returns a pipeline of fuzzSchema that injects executor, a
// validator of the same schema, and a registry holding a typed tool
// "search" with that schema, called with the context returned.
func fuzzSetup(tb testing.TB) (*tool.Pipeline, *schema.Validator, *tool.Registry, context.Context) {
	tb.Helper()
	p, err := tool.NewPipeline(tool.Info{Name: "search", InputSchema: json.RawMessage(fuzzSchema), Injected: []string{"executor"}, InjectedValues: map[string]any{"executor": "host"}})
	if err != nil {
		tb.Fatal(err)
	}
	v, err := schema.Compile(json.RawMessage(fuzzSchema))
	if err != nil {
		tb.Fatal(err)
	}
	typed, err := tool.New("search", "Search.", func(_ context.Context, in fuzzIn) (string, error) {
		if in.Executor != "host" {
			return "", errors.New("the executor is not the host's")
		}
		return in.Query, nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	var reg tool.Registry
	if err := reg.Add(typed); err != nil {
		tb.Fatal(err)
	}
	return p, v, &reg, tool.WithInjected(context.Background(), map[string]any{"executor": "host"})
}

// TestPipelineSeeds keeps the seed corpus honest: the calls named ok-*
// pass the pipeline and the typed tool, those named bad-* are rejected with
// an *ArgumentsError.
func TestPipelineSeeds(t *testing.T) {
	p, _, reg, ctx := fuzzSetup(t)
	files, err := filepath.Glob(filepath.Join("testdata", "fuzz", "FuzzPipeline", "*"))
	if err != nil || len(files) < 15 {
		t.Fatalf("seed corpus: %d files, %v", len(files), err)
	}
	for _, file := range files {
		name := filepath.Base(file)
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(string(b)), "\n")
			if len(lines) != 2 || lines[0] != "go test fuzz v1" || !strings.HasPrefix(lines[1], "[]byte(") {
				t.Fatalf("not a fuzz corpus file: %q", b)
			}
			data, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(lines[1], "[]byte("), ")"))
			if err != nil {
				t.Fatal(err)
			}
			_, prepErr := p.Prepare(context.Background(), []byte(data))
			_, callErr := reg.Call(ctx, "search", []byte(data))
			switch {
			case strings.HasPrefix(name, "ok-"):
				if prepErr != nil || callErr != nil {
					t.Fatalf("Prepare: %v; Call: %v", prepErr, callErr)
				}
			case strings.HasPrefix(name, "bad-"):
				checkArgumentsError(t, "Prepare", []byte(data), prepErr)
				checkArgumentsError(t, "Call", []byte(data), callErr)
				t.Log(prepErr)
			default:
				t.Fatalf("name a seed ok-* or bad-*")
			}
		})
	}
}

// FuzzPipeline feeds the pipeline random bytes and mutations of
// conforming calls (the seed corpus in testdata/fuzz/FuzzPipeline). For
// any input, Prepare must not panic, and must return either arguments the
// schema accepts, with the host's injected value, or an *ArgumentsError
// for the model; the same holds for a call of a typed tool through a registry.
func FuzzPipeline(f *testing.F) {
	p, v, reg, ctx := fuzzSetup(f)
	f.Add([]byte(`{"query":"x"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := p.Prepare(context.Background(), data)
		if err != nil {
			checkArgumentsError(t, "Prepare", data, err)
		} else {
			if m["executor"] != "host" {
				t.Fatalf("Prepare(%q): executor = %#v, want the host's value", data, m["executor"])
			}
			model := maps.Clone(m)
			delete(model, "executor")
			if err := v.Validate(model); err != nil {
				t.Fatalf("Prepare(%q) = %v, which the schema rejects: %v", data, m, err)
			}
		}

		res, err := reg.Call(ctx, "search", data)
		if err != nil {
			checkArgumentsError(t, "Call", data, err)
		} else if res == nil {
			t.Fatalf("Call(%q): nil result and nil error", data)
		}
	})
}

func checkArgumentsError(t *testing.T, op string, data []byte, err error) {
	t.Helper()
	ae, ok := err.(*tool.ArgumentsError)
	if !ok {
		t.Fatalf("%s(%q): error %T (%v), want *tool.ArgumentsError", op, data, err, err)
	}
	if ae.Syntax == "" && len(ae.Missing) == 0 && len(ae.Problems) == 0 {
		t.Fatalf("%s(%q): an ArgumentsError that says nothing: %v", op, data, err)
	}
}
