// Command toolwirecalc serves toolwire's calc toolset over stdio, as
// `toolwire serve` does by default, from a program that links only what
// that needs: no command-line framework and no data toolset (DuckDB).
// BenchmarkColdStart compares it with the toolwire binary to show what
// the rest of that binary costs at start-up.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/toolsets/calc"
)

func main() {
	srv := &mcp.Server{
		Info:         mcp.Implementation{Name: "toolwire", Version: "(devel)"},
		Instructions: "Tools for exact arithmetic and for dates and times across time zones.",
	}
	srv.Registry().AskMissing(true)
	if err := srv.AddTools(calc.Tools()...); err != nil {
		fmt.Fprintln(os.Stderr, "toolwirecalc:", err)
		os.Exit(1)
	}
	if err := srv.ServeStream(context.Background(), os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "toolwirecalc:", err)
		os.Exit(1)
	}
}
