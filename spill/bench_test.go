package spill

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/tool"
)

// BenchmarkCall is a registry call of a tool returning 1 KiB of text,
// with arguments and no handle in them: bare; with a middleware that does
// nothing (the registry's cost of having middleware at all, which run and
// chat pay for approval anyway); and with Results installed (argument
// scan, result measure, nothing kept). Run them in turn, -count 1, ten
// times, and compare with benchstat: the difference is what spilling
// costs a result under the budget.
func BenchmarkCall(b *testing.B) {
	res := tool.Text(strings.Repeat("x", 1<<10))
	mk := func(withSpill, noop bool) *tool.Registry {
		reg := &tool.Registry{}
		_ = reg.Add(tool.NewFunc(tool.Info{Name: "t", InputSchema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`)},
			func(context.Context, json.RawMessage) (*tool.Result, error) { return res, nil }))
		if noop {
			reg.Use(func(next tool.Handler) tool.Handler { return next })
		}
		if withSpill {
			if err := (&Results{Dirs: []string{b.TempDir()}}).Install(reg); err != nil {
				b.Fatal(err)
			}
		}
		return reg
	}
	args := json.RawMessage(`{"q":"what is the weather in Reykjavík today, in Celsius?"}`)
	for _, bc := range []struct {
		name string
		reg  *tool.Registry
	}{{"mw=none", mk(false, false)}, {"mw=noop", mk(false, true)}, {"mw=spill", mk(true, false)}} {
		b.Run(bc.name, func(b *testing.B) {
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := bc.reg.Call(ctx, "t", args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkUnderBudget is what Results adds to a call whose arguments
// hold no handle and whose result is under the budget, alone: the
// argument scan and the middleware's measure, around a handler that
// returns the result at once.
func BenchmarkUnderBudget(b *testing.B) {
	r := &Results{}
	res := tool.Text(strings.Repeat("x", 1<<10))
	t := tool.NewFunc(tool.Info{Name: "t"}, nil)
	h := r.Middleware()(func(context.Context, *tool.Call) (*tool.Result, error) { return res, nil })
	args := json.RawMessage(`{"q":"what is the weather in Reykjavík today, in Celsius?"}`)
	c := &tool.Call{Name: "t", Tool: t}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.ResolveArgs(ctx, t, args); err != nil {
			b.Fatal(err)
		}
		if got, _ := h(ctx, c); got != res {
			b.Fatal("the result was replaced")
		}
	}
}
