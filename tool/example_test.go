package tool_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/toolwire/toolwire/tool"
)

type weatherIn struct {
	City  string `json:"city" description:"City name"`
	Units string `json:"units" jsonschema:"enum=metric|imperial,default=metric"`
	// APIKey is filled by the host and never shown to the model.
	APIKey string `json:"api_key" tool:"inject"`
}

func weather(_ context.Context, in weatherIn) (string, error) {
	if in.APIKey == "" {
		return "", errors.New("no API key")
	}
	return fmt.Sprintf("%s: 21 degrees (%s)", in.City, in.Units), nil
}

// A tool is a Go function; a registry calls it by name with what a model
// wrote, completing and checking the arguments first.
func ExampleRegistry_Call() {
	var reg tool.Registry
	if err := reg.Add(tool.Must(tool.New("weather", "Current weather in a city", weather))); err != nil {
		log.Fatal(err)
	}
	ctx := tool.WithInjected(context.Background(), map[string]any{"api_key": "secret"})
	for _, args := range []string{`{"city":"Lyon"}`, `{"city":"Lyon","units":"kelvin"}`} {
		res, err := reg.Call(ctx, "weather", json.RawMessage(args))
		if errors.Is(err, tool.ErrFatal) {
			log.Fatal(err) // the run cannot go on
		}
		if err != nil {
			res = tool.ErrorResult(err) // the model reads it and repairs its call
		}
		fmt.Println(res.ForModel().Text)
	}
	// Output:
	// Lyon: 21 degrees (metric)
	// invalid arguments for tool weather: argument "units": expected one of "metric", "imperial", got string "kelvin"
}

// Middleware sees every call a registry makes, in-process or arriving over
// MCP: here it logs each call with its caller and refuses a tool.
func ExampleRegistry_Use() {
	var reg tool.Registry
	if err := reg.Add(tool.Must(tool.New("weather", "Current weather in a city", weather))); err != nil {
		log.Fatal(err)
	}
	reg.Use(func(next tool.Handler) tool.Handler {
		return func(ctx context.Context, c *tool.Call) (*tool.Result, error) {
			caller, _ := tool.CallerFrom(ctx)
			start := time.Now()
			res, err := next(ctx, c)
			_ = time.Since(start) // a tracer would record it
			fmt.Printf("%s called %s with %s\n", caller.ID, c.Name, c.Args())
			return res, err
		}
	})
	ctx := tool.WithCaller(context.Background(), tool.Caller{ID: "user:ann"})
	ctx = tool.WithInjected(ctx, map[string]any{"api_key": "secret"})
	res, err := reg.Call(ctx, "weather", json.RawMessage(`{"city":"Oslo"}`))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.ForModel().Text)
	// Output:
	// user:ann called weather with {"api_key":"secret","city":"Oslo","units":"metric"}
	// Oslo: 21 degrees (metric)
}
