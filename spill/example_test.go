package spill_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/toolwire/toolwire/spill"
	"github.com/toolwire/toolwire/tool"
)

// A tool returns 100 KB of text: the model reads a preview with a handle,
// and a tool it passes the handle to receives the whole text.
func Example() {
	var reg tool.Registry
	_ = reg.Add(
		tool.NewFunc(tool.Info{Name: "fetch_log"}, func(context.Context, json.RawMessage) (*tool.Result, error) {
			return tool.Text(strings.Repeat("GET /index.html 200\n", 5000)), nil
		}),
		tool.Must(tool.New("count_lines", "Counts the lines of a text.", func(_ context.Context, in struct {
			Text string `json:"text"`
		}) (int, error) {
			return strings.Count(in.Text, "\n"), nil
		})),
	)
	if err := (&spill.Results{}).Install(&reg); err != nil {
		panic(err)
	}
	ctx := context.Background()
	res, _ := reg.Call(ctx, "fetch_log", nil)
	preview := res.ForModel().Text
	fmt.Println(strings.SplitN(preview, "\n", 2)[0][:60])
	h := regexp.MustCompile(`res_[A-Za-z0-9_-]{22}`).FindString(preview)
	res, _ = reg.Call(ctx, "count_lines", json.RawMessage(`{"text":"`+h+`"}`))
	fmt.Println(res.ForModel().Text)
	// Output:
	// [fetch_log returned 100000 bytes of text in 5000 lines, kept
	// 5000
}
