package ollama_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"

	"github.com/toolwire/toolwire/model"
	"github.com/toolwire/toolwire/model/ollama"
)

// A streamed answer from a local Ollama: thinking and text arrive as
// deltas, the token counts with the last line.
func ExampleModel_Generate() {
	// A stand-in for Ollama on 127.0.0.1:11434.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-ndjson")
		b, _ := os.ReadFile("testdata/stream_text.ndjson")
		w.Write(b)
	}))
	defer srv.Close()

	m := &ollama.Model{Name: "qwen3:8b", Host: ollama.HostURL(srv.URL)}
	req := &model.Request{Messages: []model.Message{{Role: model.RoleUser, Text: "Say hello."}}}
	res, err := m.Generate(context.Background(), req, func(d model.Delta) {
		if d.Kind == model.DeltaReasoning {
			fmt.Printf("(thinking: %s)\n", d.Text)
		} else {
			fmt.Printf("%s\n", d.Text)
		}
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.StopReason, res.Usage.InputTokens, res.Usage.OutputTokens)
	// Output:
	// (thinking: The user)
	// (thinking:  wants a greeting.)
	// Hello
	// , world!
	// end 11 9
}
