package toolsets_test

import (
	"context"
	"fmt"
	"log"

	"github.com/toolwire/toolwire/tool"
	"github.com/toolwire/toolwire/toolsets"
	_ "github.com/toolwire/toolwire/toolsets/calc" // registers "calc"
)

// A program opens a built-in toolset by name, adds its tools to a
// registry, and closes it when done.
func Example() {
	ctx := context.Background()
	ts, err := toolsets.Open(ctx, "calc", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer ts.Close()
	var reg tool.Registry
	if err := reg.Add(ts.Tools()...); err != nil {
		log.Fatal(err)
	}
	res, err := reg.Call(ctx, "calculate", []byte(`{"expression": "2 / 3 + 1 / 3"}`))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].Text)

	_, err = toolsets.Open(ctx, "calc", 42)
	fmt.Println(err)
	// Output:
	// 1
	// toolset calc: options of type int: pass a struct {}, or nil for the defaults
}
