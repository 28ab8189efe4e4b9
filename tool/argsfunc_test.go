package tool_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/toolwire/toolwire/tool"
)

// TestUseArgs: what an ArgsFunc puts in the arguments goes through the
// pipeline (validated, defaults filled) and reaches the tool; its error
// stops the call before the pipeline and the middleware.
func TestUseArgs(t *testing.T) {
	var got string
	var reg tool.Registry
	if err := reg.Add(tool.NewFunc(tool.Info{Name: "t", InputSchema: json.RawMessage(
		`{"type":"object","properties":{"n":{"type":"integer"},"s":{"type":"string","default":"d"}},"required":["n"]}`)},
		func(_ context.Context, args json.RawMessage) (*tool.Result, error) {
			got = string(args)
			return tool.Text("ok"), nil
		})); err != nil {
		t.Fatal(err)
	}
	refused := errors.New("refused")
	reg.UseArgs(func(_ context.Context, tl tool.Tool, args json.RawMessage) (json.RawMessage, error) {
		switch string(args) {
		case `{"n":"two"}`:
			return json.RawMessage(`{"n":2}`), nil
		case `{"n":"bad"}`:
			return json.RawMessage(`{"n":"still a string"}`), nil
		case `{"n":"refuse"}`:
			return nil, refused
		}
		return args, nil
	})
	var saw int
	reg.Use(func(next tool.Handler) tool.Handler {
		return func(ctx context.Context, c *tool.Call) (*tool.Result, error) { saw++; return next(ctx, c) }
	})
	if _, err := reg.Call(context.Background(), "t", json.RawMessage(`{"n":"two"}`)); err != nil || got != `{"n":2,"s":"d"}` {
		t.Errorf("rewritten call: %v, the tool got %s", err, got)
	}
	got = ""
	var ae *tool.ArgumentsError
	if _, err := reg.Call(context.Background(), "t", json.RawMessage(`{"n":"bad"}`)); !errors.As(err, &ae) || got != "" {
		t.Errorf("rewritten to bad arguments: %v, want an ArgumentsError and no call (got %q)", err, got)
	}
	if _, err := reg.Call(context.Background(), "t", json.RawMessage(`{"n":"refuse"}`)); !errors.Is(err, refused) || got != "" || saw != 1 {
		t.Errorf("refused: %v, tool got %q, middleware ran %d times; want the error, no call, 1 middleware run", err, got, saw)
	}
}
