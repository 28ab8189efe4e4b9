package agent_test

import (
	"context"
	"testing"

	"github.com/toolwire/toolwire/agent"
	"github.com/toolwire/toolwire/model"
	"github.com/toolwire/toolwire/tool"
)

// TestMisspelledArgumentHint: in the agent loop, an argument the tool's
// schema does not name is refused with what the model may have meant, and
// the model's repaired call runs.
func TestMisspelledArgumentHint(t *testing.T) {
	type in struct {
		Path  string `json:"path"`
		Limit int    `json:"limit,omitempty"`
	}
	var got []in
	read := tool.Must(tool.New("read", "Reads a file.", func(_ context.Context, in in) (string, error) {
		got = append(got, in)
		return "read " + in.Path, nil
	}))
	var reg tool.Registry
	if err := reg.Add(read); err != nil {
		t.Fatal(err)
	}
	s := &script{answers: []model.Message{
		calls("read", `{"path":"a.txt","limt":5}`),
		calls("read", `{"path":"a.txt","limit":5}`),
		answer("done"),
	}}
	res, err := (&agent.Agent{Model: s, Tools: &reg}).Run(context.Background(), []model.Message{{Role: model.RoleUser, Text: "go"}})
	if err != nil {
		t.Fatal(err)
	}
	want := `invalid arguments for tool read: unknown argument "limt": did you mean "limit"? (known arguments: limit, path)`
	if r := res.Messages[2].ToolResults[0]; !r.IsError || r.Text != want {
		t.Errorf("first call: %+v, want the error %q", r, want)
	}
	if len(got) != 1 || got[0] != (in{Path: "a.txt", Limit: 5}) {
		t.Errorf("the tool ran with %+v, want once with the repaired arguments", got)
	}
}
