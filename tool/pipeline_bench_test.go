package tool_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/toolwire/toolwire/tool"
)

// benchIn has 10 properties, two defaults (count, mode) and one nested
// object (opts): the shape of schema's own benchmark, as a typed tool's
// input.
type benchIn struct {
	Path    string   `json:"path" jsonschema:"minLength=1"`
	Count   int      `json:"count" jsonschema:"default=10,minimum=0"`
	Mode    string   `json:"mode,omitempty" jsonschema:"enum=fast|slow,default=fast"`
	Name    string   `json:"name,omitempty"`
	Verbose bool     `json:"verbose,omitempty"`
	Limit   int      `json:"limit,omitempty" jsonschema:"maximum=1000"`
	Tags    []string `json:"tags,omitempty"`
	Ratio   float64  `json:"ratio,omitempty"`
	Format  string   `json:"format,omitempty" jsonschema:"pattern=^[a-z]+$"`
	Opts    struct {
		Depth  int  `json:"depth"`
		Follow bool `json:"follow,omitempty"`
	} `json:"opts"`
}

// benchCall leaves out the two properties that have defaults.
const benchCall = `{"path":"/tmp/data.csv","name":"run","verbose":true,"limit":50,"tags":["a","b"],"ratio":0.5,"format":"csv","opts":{"depth":2,"follow":false}}`

// benchFn stands for a tool's work; it is cheap so that the benchmarks
// measure what surrounds it.
func benchFn(_ context.Context, in benchIn) (string, error) {
	if in.Path == "" {
		return "", nil
	}
	return "ok", nil
}

func benchTool(b *testing.B) *tool.Typed[benchIn, string] {
	t, err := tool.New("bench", "A benchmark tool.", benchFn)
	if err != nil {
		b.Fatal(err)
	}
	return t
}

// BenchmarkPipeline is the argument pipeline of one call: parse, drop
// injected, fill defaults, validate.
func BenchmarkPipeline(b *testing.B) {
	p, err := tool.NewPipeline(benchTool(b).Info())
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	raw := json.RawMessage(benchCall)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Prepare(ctx, raw); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDirectCall is the same function called directly with the In a
// typed call builds: the baseline for BenchmarkTypedCall.
func BenchmarkDirectCall(b *testing.B) {
	fn := benchFn
	var in benchIn
	if err := json.Unmarshal([]byte(benchCall), &in); err != nil {
		b.Fatal(err)
	}
	in.Count, in.Mode = 10, "fast"
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := fn(ctx, in); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRegistryCall is a whole call of a typed tool by name through a
// registry, as the agent and the MCP server call it: the pipeline (which
// fills two defaults), the decoding into In, the function and the result.
func BenchmarkRegistryCall(b *testing.B) {
	var r tool.Registry
	if err := r.Add(benchTool(b)); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	raw := json.RawMessage(benchCall)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Call(ctx, "bench", raw); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMiddleware is a call through a registry with 0 to 8 layers of
// pass-through middleware, for a typed tool whose arguments the pipeline
// only checks (add, the call of ServerCall) and for one whose defaults it
// fills (bench): a layer's cost is the growth per layer.
func BenchmarkMiddleware(b *testing.B) {
	add := tool.Must(tool.New("add", "Add two numbers.", func(_ context.Context, in addIn) (string, error) { return "5", nil }))
	calls := []struct {
		tool tool.Tool
		args string
	}{{add, `{"a":2,"b":3}`}, {benchTool(b), benchCall}}
	pass := func(next tool.Handler) tool.Handler {
		return func(ctx context.Context, c *tool.Call) (*tool.Result, error) { return next(ctx, c) }
	}
	for _, c := range calls {
		for _, layers := range []int{0, 1, 2, 4, 8} {
			name := c.tool.Info().Name
			b.Run(fmt.Sprintf("tool=%s/layers=%d", name, layers), func(b *testing.B) {
				var r tool.Registry
				if err := r.Add(c.tool); err != nil {
					b.Fatal(err)
				}
				for range layers {
					r.Use(pass)
				}
				ctx := context.Background()
				raw := json.RawMessage(c.args)
				b.ReportAllocs()
				for b.Loop() {
					if _, err := r.Call(ctx, name, raw); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
