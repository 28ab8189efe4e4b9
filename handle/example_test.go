package handle_test

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/toolwire/toolwire/handle"
	"github.com/toolwire/toolwire/tool"
)

// Frame is a value kept behind handles: its kind names them.
type Frame struct{ Rows [][]float64 }

func (*Frame) HandleKind() handle.Kind {
	return handle.Kind{Prefix: "frm", Noun: "frame", Again: "load it again"}
}

// A tool that creates a value returns a handle to it; a tool that takes
// one declares a handle.Of field and gets the value. The model only ever
// sees the handle.
func Example() {
	store := &handle.Memory{TTL: 30 * time.Minute}

	type loaded struct {
		Frame handle.Of[*Frame] `json:"frame"`
		Rows  int               `json:"rows"`
	}
	load := tool.Must(handle.Tool(store, "load", "Loads the numbers.", func(ctx context.Context, _ struct{}) (loaded, error) {
		f := &Frame{Rows: [][]float64{{1, 2}, {3, 4}, {5, 6}}}
		h, err := handle.Put(ctx, store, f, 48)
		return loaded{Frame: h, Rows: len(f.Rows)}, err
	}))
	type sumIn struct {
		Frame handle.Of[*Frame] `json:"frame"`
	}
	sum := tool.Must(handle.Tool(store, "sum", "Adds up a frame.", func(_ context.Context, in sumIn) (string, error) {
		var s float64
		for _, r := range in.Frame.Value().Rows {
			for _, v := range r {
				s += v
			}
		}
		return fmt.Sprint(s), nil
	}))
	var r tool.Registry
	_ = r.Add(load, sum)
	fmt.Println(load.Info().Description)

	ctx := tool.WithCaller(context.Background(), tool.Caller{ID: "session:1"})
	res, _ := r.Call(ctx, "load", nil)
	var out struct{ Frame string }
	_ = json.Unmarshal([]byte(res.ForModel().Text), &out) // what the model read
	res, _ = r.Call(ctx, "sum", []byte(`{"frame":"`+out.Frame+`"}`))
	fmt.Println(res.ForModel().Text)

	// Another caller cannot use the handle: it reads as expired.
	other := tool.WithCaller(context.Background(), tool.Caller{ID: "session:2"})
	_, err := r.Call(other, "sum", []byte(`{"frame":"`+out.Frame+`"}`))
	fmt.Println(err != nil)
	// Output:
	// Loads the numbers. Frames expire after 30 minutes unused.
	// 21
	// true
}
