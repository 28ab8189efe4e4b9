package tool_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/tool"
)

// askingClient is a tool.Client whose Elicit answers with answer and
// records the forms it was asked to fill.
type askingClient struct {
	answer func(e *tool.Elicitation) (*tool.ElicitResult, error)
	forms  []string
}

func (c *askingClient) Progress(context.Context, float64, float64, string) error { return nil }
func (c *askingClient) Log(context.Context, tool.LogLevel, string, any) error    { return nil }
func (c *askingClient) Sample(context.Context, *tool.Sampling) (*tool.SamplingResult, error) {
	return nil, errors.ErrUnsupported
}
func (c *askingClient) Elicit(_ context.Context, e *tool.Elicitation) (*tool.ElicitResult, error) {
	c.forms = append(c.forms, string(e.Schema))
	if len(c.forms) > 3 {
		return nil, errors.New("asked again and again")
	}
	return c.answer(e)
}

func accept(content map[string]any) func(*tool.Elicitation) (*tool.ElicitResult, error) {
	return func(*tool.Elicitation) (*tool.ElicitResult, error) {
		return &tool.ElicitResult{Action: tool.ActionAccept, Content: content}, nil
	}
}

// TestAskMissing: a registry that asks for missing arguments asks the
// call's client once, with a form of the missing plain values, and makes
// the call with the answers; otherwise the call keeps its arguments error.
func TestAskMissing(t *testing.T) {
	divide := tool.NewFunc(tool.Info{Name: "divide", InputSchema: json.RawMessage(`{"type":"object","properties":{` +
		`"a":{"type":"number","description":"Dividend"},"b":{"type":"number","description":"Divisor"},"opts":{"type":"object"}},"required":["a","b"]}`)},
		func(_ context.Context, args json.RawMessage) (*tool.Result, error) {
			var in struct{ A, B float64 }
			if err := json.Unmarshal(args, &in); err != nil {
				return nil, err
			}
			return tool.Text(fmt.Sprint(in.A / in.B)), nil
		})
	nested := tool.NewFunc(tool.Info{Name: "nested", InputSchema: json.RawMessage(`{"type":"object","properties":{"opts":{"type":"object"}},"required":["opts"]}`)},
		func(context.Context, json.RawMessage) (*tool.Result, error) { return tool.Text("ran"), nil })
	failed := errors.New("the user's terminal is gone")
	for _, tt := range []struct {
		name      string
		off       bool
		noClient  bool
		tool      string
		args      string
		answer    func(*tool.Elicitation) (*tool.ElicitResult, error)
		want      string // the result's text, or the error's
		notWant   string
		wantErr   error
		wantForms int
	}{
		{name: "accepted", tool: "divide", args: `{"a":9}`, answer: accept(map[string]any{"b": 3}), want: "3", wantForms: 1},
		{name: "not asking", off: true, tool: "divide", args: `{"a":9}`, answer: accept(map[string]any{"b": 3}), want: `missing required argument "b"`},
		{name: "no client", noClient: true, tool: "divide", args: `{"a":9}`, want: `missing required argument "b"`},
		{name: "declined", tool: "divide", args: `{"a":9}`, answer: func(*tool.Elicitation) (*tool.ElicitResult, error) {
			return &tool.ElicitResult{Action: tool.ActionDecline}, nil
		}, want: "the user did not give b for tool divide (decline)", wantForms: 1},
		{name: "client cannot ask", tool: "divide", args: `{"a":9}`, answer: func(*tool.Elicitation) (*tool.ElicitResult, error) {
			return nil, fmt.Errorf("no form here: %w", errors.ErrUnsupported)
		}, want: `missing required argument "b"`, notWant: "asking", wantForms: 1},
		{name: "asking failed", tool: "divide", args: `{"a":9}`, answer: func(*tool.Elicitation) (*tool.ElicitResult, error) {
			return nil, failed
		}, want: "the user's terminal is gone", wantErr: failed, wantForms: 1},
		{name: "answer still missing: asked once", tool: "divide", args: `{"a":9}`, answer: accept(nil), want: `missing required argument "b"`, wantForms: 1},
		{name: "other problems", tool: "divide", args: `{"a":"nine"}`, answer: accept(map[string]any{"a": 9, "b": 3}), want: `"a"`},
		{name: "not a plain value", tool: "nested", args: `{}`, answer: accept(map[string]any{"opts": map[string]any{}}), want: `missing required argument "opts"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var reg tool.Registry
			if err := reg.Add(divide, nested); err != nil {
				t.Fatal(err)
			}
			reg.AskMissing(!tt.off)
			c := &askingClient{answer: tt.answer}
			ctx := context.Background()
			if !tt.noClient {
				ctx = tool.WithClient(ctx, c)
			}
			res, err := reg.Call(ctx, tt.tool, json.RawMessage(tt.args))
			got := ""
			if err != nil {
				got = err.Error()
			} else {
				got = res.Content[0].Text
			}
			if !strings.Contains(got, tt.want) || tt.notWant != "" && strings.Contains(got, tt.notWant) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("error %v does not wrap %v", err, tt.wantErr)
			}
			if len(c.forms) != tt.wantForms {
				t.Errorf("asked %d times (%q), want %d", len(c.forms), c.forms, tt.wantForms)
			}
			if tt.wantForms > 0 && (!strings.Contains(c.forms[0], `"required":["b"]`) || !strings.Contains(c.forms[0], `"Divisor"`)) {
				t.Errorf("form %s, want one asking for b as the schema describes it", c.forms[0])
			}
		})
	}
}

// TestClientFunctions: without a client, progress and log messages go
// nowhere and questions fail with errors.ErrUnsupported; with one, they
// reach it.
func TestClientFunctions(t *testing.T) {
	ctx := context.Background()
	if err := tool.Progress(ctx, 1, 2, "x"); err != nil {
		t.Errorf("Progress without a client: %v", err)
	}
	if err := tool.Log(ctx, tool.LevelInfo, "l", "x"); err != nil {
		t.Errorf("Log without a client: %v", err)
	}
	if _, err := tool.Elicit(ctx, &tool.Elicitation{}); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Elicit without a client: %v, want errors.ErrUnsupported", err)
	}
	if _, err := tool.Sample(ctx, &tool.Sampling{}); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Sample without a client: %v, want errors.ErrUnsupported", err)
	}
	c := &askingClient{answer: accept(map[string]any{"x": 1})}
	res, err := tool.Elicit(tool.WithClient(ctx, c), &tool.Elicitation{Schema: json.RawMessage(`{}`)})
	if err != nil || res.Content["x"] != 1 || len(c.forms) != 1 {
		t.Errorf("Elicit with a client: %+v, %v after %d forms", res, err, len(c.forms))
	}
}
