package gemini_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"

	"github.com/toolwire/toolwire/model"
	"github.com/toolwire/toolwire/model/gemini"
)

// A tool call's result goes back as a functionResponse, paired with the
// call by its place; the call's thoughtSignature goes back with it.
func ExampleModel_Generate() {
	// A stand-in for generativelanguage.googleapis.com that shows what it
	// was sent.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Println(r.URL.Path)
		var body struct {
			Contents []json.RawMessage `json:"contents"`
		}
		json.NewDecoder(r.Body).Decode(&body)
		for _, c := range body.Contents[1:] {
			fmt.Println(string(c))
		}
		b, _ := os.ReadFile("testdata/text.json")
		w.Write(b)
	}))
	defer srv.Close()

	m := &gemini.Model{Name: "gemini-2.5-pro", BaseURL: srv.URL, APIKey: os.Getenv("GEMINI_API_KEY")}
	req := &model.Request{Messages: []model.Message{
		{Role: model.RoleUser, Text: "Weather in Paris?"},
		{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "Ab3dE6gH9", Name: "get_weather", Arguments: []byte(`{"city":"Paris"}`), Signature: "CiQB0e2K"}}},
		{Role: model.RoleTool, ToolResults: []model.ToolResult{{CallID: "Ab3dE6gH9", Text: "21°C"}}},
	}}
	res, err := m.Generate(context.Background(), req, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Message.Text)
	fmt.Printf("%+v\n", res.Usage)
	// Output:
	// /v1beta/models/gemini-2.5-pro:generateContent
	// {"role":"model","parts":[{"thoughtSignature":"CiQB0e2K","functionCall":{"id":"Ab3dE6gH9","name":"get_weather","args":{"city":"Paris"}}}]}
	// {"role":"user","parts":[{"functionResponse":{"id":"Ab3dE6gH9","name":"get_weather","response":{"output":"21°C"}}}]}
	// Paris is the capital of France.
	// {InputTokens:1210 OutputTokens:72 CachedTokens:1024 ReasoningTokens:64}
}
