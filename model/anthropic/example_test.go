package anthropic_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"

	"github.com/toolwire/toolwire/model"
	"github.com/toolwire/toolwire/model/anthropic"
)

// A streamed request with one tool: text arrives through onDelta, the
// tool call in the Response.
func ExampleModel_Generate() {
	// A stand-in for api.anthropic.com.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		b, _ := os.ReadFile("testdata/stream_tool_use.sse")
		w.Write(b)
	}))
	defer srv.Close()

	m := &anthropic.Model{Name: "claude-sonnet-4-5", BaseURL: srv.URL, APIKey: os.Getenv("ANTHROPIC_API_KEY")}
	req := &model.Request{
		System:   "You are terse.",
		Messages: []model.Message{{Role: model.RoleUser, Text: "Weather in San Francisco?"}},
		Tools: []model.ToolSpec{{Name: "get_weather", Description: "Current weather in a city.",
			Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)}},
	}
	res, err := m.Generate(context.Background(), req, func(d model.Delta) {
		if d.Kind == model.DeltaText {
			fmt.Printf("text: %s\n", d.Text)
		}
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range res.Message.ToolCalls {
		fmt.Printf("call %s %s %s\n", c.ID, c.Name, c.Arguments)
	}
	fmt.Println(res.StopReason, res.Usage.InputTokens, res.Usage.OutputTokens)
	// Output:
	// text: Let me look.
	// call toolu_01T1x1fJ34qAmk2tNTrN7Up6 get_weather {"city": "San Francisco, \u00e9té", "unit": "fahrenheit"}
	// call toolu_01B19r01rx01mr028946mr0 get_time {}
	// tool_calls 472 89
}
