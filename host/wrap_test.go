package host

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/tool"
)

// The tools of this test are mcp/typed_test.go's wind tool with one more
// parameter, station, that the host injects.

type windArgs struct {
	Speed float64 `json:"speed" description:"Wind speed" jsonschema:"minimum=0"`
	Unit  string  `json:"unit" jsonschema:"enum=kmh|mph|knots,default=kmh"`
	Gusts *struct {
		Max float64 `json:"max"`
	} `json:"gusts,omitempty"`
	Station string `json:"station" tool:"inject"`
}

// remoteWindArgs is windArgs as a remote server declares it: station is
// an ordinary parameter there, which the host's configuration injects.
type remoteWindArgs struct {
	Speed float64 `json:"speed" description:"Wind speed" jsonschema:"minimum=0"`
	Unit  string  `json:"unit" jsonschema:"enum=kmh|mph|knots,default=kmh"`
	Gusts *struct {
		Max float64 `json:"max"`
	} `json:"gusts,omitempty"`
	Station string `json:"station"`
}

type windOut struct {
	Beaufort int    `json:"beaufort"`
	Label    string `json:"label"`
	Station  string `json:"station"`
}

func beaufort(_ context.Context, in windArgs) (windOut, error) {
	kmh := in.Speed
	switch in.Unit {
	case "mph":
		kmh *= 1.609
	case "knots":
		kmh *= 1.852
	}
	limits := []float64{1, 6, 12, 20, 29, 39, 50, 62, 75, 89, 103, 118}
	labels := []string{"calm", "light air", "light breeze", "gentle breeze", "moderate breeze", "fresh breeze",
		"strong breeze", "near gale", "gale", "strong gale", "storm", "violent storm", "hurricane"}
	b := 0
	for b < len(limits) && kmh >= limits[b] {
		b++
	}
	if in.Gusts != nil && in.Gusts.Max < in.Speed {
		return windOut{}, fmt.Errorf("gusts (%g) cannot be below the mean speed (%g)", in.Gusts.Max, in.Speed)
	}
	if in.Station == "" {
		return windOut{}, fmt.Errorf("no station")
	}
	return windOut{Beaufort: b, Label: labels[b], Station: in.Station}, nil
}

// remoteWindTool is what the "wind" fake server serves.
func remoteWindTool() tool.Tool {
	return tool.Must(tool.New("beaufort", "Converts a wind speed to the Beaufort scale",
		func(ctx context.Context, in remoteWindArgs) (windOut, error) { return beaufort(ctx, windArgs(in)) }))
}

// funcWindTool is the wind tool as a raw-JSON function that decodes its
// completed arguments itself.
func funcWindTool() tool.Tool {
	typed := tool.Must(tool.New("beaufort", "Converts a wind speed to the Beaufort scale", beaufort))
	return tool.NewFunc(typed.Info(), func(ctx context.Context, args json.RawMessage) (*tool.Result, error) {
		var in windArgs
		if err := json.Unmarshal(args, &in); err != nil {
			return nil, err
		}
		out, err := beaufort(ctx, in)
		if err != nil {
			return nil, err
		}
		b, _ := json.Marshal(out)
		return &tool.Result{Content: []tool.Content{tool.TextContent(string(b))}, StructuredContent: json.RawMessage(b)}, nil
	})

}

// wrapper is a plain Tool around another, as an approval or recording
// layer written without the registry's middleware would be.
type wrapper struct{ inner tool.Tool }

func (w wrapper) Info() tool.Info { return w.inner.Info() }
func (w wrapper) Call(ctx context.Context, args json.RawMessage) (*tool.Result, error) {
	return w.inner.Call(ctx, args)
}

// passThrough is a middleware that only passes calls on.
func passThrough(next tool.Handler) tool.Handler {
	return func(ctx context.Context, c *tool.Call) (*tool.Result, error) { return next(ctx, c) }
}

// outcome is what a model is shown of a call.
type outcome struct {
	text    string
	isError bool
}

func callOutcome(ctx context.Context, reg *tool.Registry, args string) outcome {
	res, err := reg.Call(ctx, "beaufort", json.RawMessage(args))
	if err != nil {
		res = tool.ErrorResult(err)
	}
	v := res.ForModel()
	return outcome{v.Text, v.IsError}
}

// TestWrappingChangesNothing: each kind of tool (typed, Func, a remote MCP
// tool with injected parameters) gives the same results and error texts
// bare, behind a pass-through middleware, and inside a plain wrapper Tool,
// on the argument sets of mcp/typed_test.go and a model that sends a value
// for the injected parameter.
func TestWrappingChangesNothing(t *testing.T) {
	noPrefix := ""
	h := memHost(t, map[string]*mcp.Server{"w": newFakeServer("wind")}, map[string]*ServerConfig{
		"w": {Prefix: &noPrefix, Inject: map[string]json.RawMessage{"station": json.RawMessage(`"alpha"`)}},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	remote, err := h.Tools(ctx)
	if err != nil || len(remote) != 1 {
		t.Fatalf("remote tools %v, %v", remote, err)
	}

	kinds := map[string]tool.Tool{
		"typed":  tool.Must(tool.New("beaufort", "Converts a wind speed to the Beaufort scale", beaufort)),
		"func":   funcWindTool(),
		"remote": remote[0],
	}
	args := []string{
		`{"speed": 30}`,
		`{"speed": 50, "unit": "knots"}`,
		`{"speed": "fast"}`,
		`{}`,
		`{"speed": 3, "unit": "m/s", "dir": "N"}`,
		`{"speed": -1}`,
		`"{speed"`,
		`{"speed": 40, "gusts": {"max": 10}}`,
		`{"speed": 30, "station": "evil"}`, // dropped: the host's value is used
	}
	ctx = tool.WithInjected(ctx, map[string]any{"station": "alpha"})
	var reference tool.Registry // the typed tool, bare: every kind must match it
	if err := reference.Add(kinds["typed"]); err != nil {
		t.Fatal(err)
	}
	for name, tl := range kinds {
		t.Run(name, func(t *testing.T) {
			var bare, mw, wrapped tool.Registry
			mw.Use(passThrough)
			for _, r := range []struct {
				reg *tool.Registry
				t   tool.Tool
			}{{&bare, tl}, {&mw, tl}, {&wrapped, wrapper{tl}}} {
				if err := r.reg.Add(r.t); err != nil {
					t.Fatal(err)
				}
			}
			for _, a := range args {
				want := callOutcome(ctx, &bare, a)
				if got := callOutcome(ctx, &mw, a); got != want {
					t.Errorf("%s behind middleware: %+v\nbare: %+v", a, got, want)
				}
				if got := callOutcome(ctx, &wrapped, a); got != want {
					t.Errorf("%s wrapped: %+v\nbare: %+v", a, got, want)
				}
				if ref := callOutcome(ctx, &reference, a); want != ref {
					t.Errorf("%s: %+v, the typed tool %+v", a, want, ref)
				}
				t.Logf("%s → %+v", a, want)
			}
			if got := callOutcome(ctx, &wrapped, `{"speed": 30, "station": "evil"}`); got.isError || got.text != `{"beaufort":5,"label":"fresh breeze","station":"alpha"}` {
				t.Errorf("the model's station was not replaced by the host's: %+v", got)
			}
		})
	}
}
