package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolwire/toolwire/agent"
	"github.com/toolwire/toolwire/model"
	"github.com/toolwire/toolwire/tool"
)

// script is a model that answers with the next scripted message and
// keeps the requests it got (a hosted model cannot run here; the adapters
// are tested against their wire formats on their own).
type script struct {
	mu       sync.Mutex
	answers  []model.Message
	requests []*model.Request
	streamed []bool // whether each request was streamed (had an onDelta)
}

func (s *script) Generate(_ context.Context, req *model.Request, onDelta func(model.Delta)) (*model.Response, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, &model.Request{Messages: append([]model.Message(nil), req.Messages...), Tools: req.Tools})
	s.streamed = append(s.streamed, onDelta != nil)
	if len(s.answers) == 0 {
		return nil, errors.New("the script has no more answers")
	}
	m := s.answers[0]
	s.answers = s.answers[1:]
	if onDelta != nil && m.Text != "" {
		onDelta(model.Delta{Kind: model.DeltaText, Text: m.Text})
	}
	stop := model.StopEnd
	if len(m.ToolCalls) > 0 {
		stop = model.StopToolCalls
	}
	return &model.Response{Message: m, StopReason: stop, Usage: model.Usage{InputTokens: 10, OutputTokens: 2}}, nil
}

func calls(cs ...string) model.Message {
	m := model.Message{Role: model.RoleAssistant}
	for i := 0; i+1 < len(cs); i += 2 {
		m.ToolCalls = append(m.ToolCalls, model.ToolCall{ID: fmt.Sprintf("c%d", i/2+1), Name: cs[i], Arguments: json.RawMessage(cs[i+1])})
	}
	return m
}

func answer(text string) model.Message { return model.Message{Role: model.RoleAssistant, Text: text} }

func readOnly(t tool.Tool, exclusive bool) tool.Tool {
	yes := true
	return tool.NewFunc(func() tool.Info {
		i := t.Info()
		i.Annotations = &tool.Annotations{ReadOnlyHint: &yes}
		if exclusive {
			i.Meta = map[string]any{agent.Exclusive: true}
		}
		return i
	}(), t.Call)

}

type sleepIn struct {
	Ms int `json:"ms"`
}

// sleeper sleeps, counting how many of its calls run at once.
func sleeper(name string, running, most *atomic.Int32) tool.Tool {
	return tool.Must(tool.New(name, "Sleeps.", func(_ context.Context, in sleepIn) (string, error) {
		n := running.Add(1)
		defer running.Add(-1)
		for {
			m := most.Load()
			if n <= m || most.CompareAndSwap(m, n) {
				break
			}
		}
		time.Sleep(time.Duration(in.Ms) * time.Millisecond)
		return "slept", nil
	}))
}

// TestParallelCalls: read-only calls of one turn run at once; an
// exclusive one runs alone; results keep the model's order.
func TestParallelCalls(t *testing.T) {
	for _, tt := range []struct {
		name      string
		exclusive bool
		most      int32
	}{{"read-only", false, 3}, {"exclusive", true, 1}} {
		t.Run(tt.name, func(t *testing.T) {
			var running, most atomic.Int32
			var reg tool.Registry
			if err := reg.Add(readOnly(sleeper("nap", &running, &most), tt.exclusive)); err != nil {
				t.Fatal(err)
			}
			s := &script{answers: []model.Message{calls("nap", `{"ms":50}`, "nap", `{"ms":50}`, "nap", `{"ms":50}`), answer("rested")}}
			res, err := (&agent.Agent{Model: s, Tools: &reg}).Run(context.Background(), []model.Message{{Role: model.RoleUser, Text: "rest"}})
			if err != nil {
				t.Fatal(err)
			}
			if most.Load() != tt.most {
				t.Errorf("at most %d calls ran at once, want %d", most.Load(), tt.most)
			}
			results := res.Messages[2].ToolResults
			if len(results) != 3 || results[0].CallID != "c1" || results[1].CallID != "c2" || results[2].CallID != "c3" || res.Answer != "rested" || res.ToolCalls != 3 {
				t.Errorf("results %+v, answer %q", results, res.Answer)
			}
		})
	}
}

type divIn struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}

func divide() tool.Tool {
	return tool.Must(tool.New("divide", "Divides a by b.", func(_ context.Context, in divIn) (string, error) {
		if in.B == 0 {
			return "", errors.New("division by zero: use a non-zero b")
		}
		return fmt.Sprint(in.A / in.B), nil
	}))
}

// TestErrorsAreData: bad arguments, an unknown tool, a tool's error, a
// panic and a call whose arguments could not be read each reach the model
// as an error result that says what was wrong, and the run goes on.
func TestErrorsAreData(t *testing.T) {
	var reg tool.Registry
	boom := tool.Must(tool.New("boom", "Panics.", func(context.Context, struct{}) (string, error) { panic("kaboom") }))
	if err := reg.Add(divide(), boom); err != nil {
		t.Fatal(err)
	}
	bad := calls("divide", `{"a":1,"b":"x"}`, "divid", `{}`, "divide", `{"a":1,"b":0}`, "boom", `{}`, "divide", `{a:1}`)
	bad.ToolCalls[4].Invalid = "the arguments are not valid JSON"
	s := &script{answers: []model.Message{bad, answer("ok")}}
	res, err := (&agent.Agent{Model: s, Tools: &reg}).Run(context.Background(), []model.Message{{Role: model.RoleUser, Text: "go"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`invalid arguments for tool divide: argument "b": expected number, got string "x"`,
		`unknown tool "divid": did you mean divide?`,
		`division by zero: use a non-zero b`,
		`tool boom failed: it panicked: kaboom`,
		`the call of divide was not run: the arguments are not valid JSON`,
	}
	for i, r := range res.Messages[2].ToolResults {
		if !r.IsError || !strings.Contains(r.Text, want[i]) {
			t.Errorf("result %d: %+v, want an error saying %q", i, r, want[i])
		}
	}
}

// TestFailureBound: a tool that fails more than MaxFailures times in a
// row ends the run, saying so.
func TestFailureBound(t *testing.T) {
	var reg tool.Registry
	if err := reg.Add(divide()); err != nil {
		t.Fatal(err)
	}
	var answers []model.Message
	for range 5 {
		answers = append(answers, calls("divide", `{"a":1,"b":0}`))
	}
	s := &script{answers: answers}
	_, err := (&agent.Agent{Model: s, Tools: &reg, MaxFailures: 2}).Run(context.Background(), []model.Message{{Role: model.RoleUser, Text: "go"}})
	if err == nil || !strings.Contains(err.Error(), "tool divide failed 3 times in a row") || len(s.requests) != 3 {
		t.Errorf("err %v after %d requests; want the run to stop at the third failure", err, len(s.requests))
	}
}

// TestFatalEndsRun: a fatal error (here, the host has no value for an
// injected parameter) ends the run instead of going to the model.
func TestFatalEndsRun(t *testing.T) {
	type in struct {
		Key string `json:"key" tool:"inject"`
	}
	var reg tool.Registry
	if err := reg.Add(tool.Must(tool.New("secret", "Needs a key.", func(context.Context, in) (string, error) { return "", nil }))); err != nil {
		t.Fatal(err)
	}
	s := &script{answers: []model.Message{calls("secret", `{}`), answer("never")}}
	res, err := (&agent.Agent{Model: s, Tools: &reg}).Run(context.Background(), []model.Message{{Role: model.RoleUser, Text: "go"}})
	if !errors.Is(err, tool.ErrFatal) || !strings.Contains(err.Error(), "injected parameter key") || len(s.requests) != 1 {
		t.Errorf("err %v after %d requests; want a fatal error and no second request", err, len(s.requests))
	}
	if res == nil || len(res.Messages) != 3 {
		t.Errorf("the result should keep the conversation so far: %+v", res)
	}
}

// TestAskForMissing: with the registry's AskMissing and the agent's
// Elicit, required arguments the model left out are asked of the user,
// and the call runs with them; without Elicit, the model reads the
// arguments error.
func TestAskForMissing(t *testing.T) {
	for _, tt := range []struct {
		name      string
		elicit    bool
		want      string
		wantAsked string
	}{
		{"asked", true, "3", "divide:b"},
		{"nobody to ask", false, `missing required argument "b"`, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var reg tool.Registry
			if err := reg.Add(divide()); err != nil {
				t.Fatal(err)
			}
			reg.AskMissing(true)
			var asked []string
			a := &agent.Agent{Model: &script{answers: []model.Message{calls("divide", `{"a":9}`), answer("done")}}, Tools: &reg,
				OnEvent: func(agent.Event) {}} // a listener, and nobody to ask unless Elicit
			if tt.elicit {
				a.Elicit = func(_ context.Context, c model.ToolCall, e *tool.Elicitation) (*tool.ElicitResult, error) {
					if strings.Contains(string(e.Schema), `"required":["b"]`) {
						asked = append(asked, c.Name+":b")
					}
					return &tool.ElicitResult{Action: tool.ActionAccept, Content: map[string]any{"b": 3}}, nil
				}
			}
			res, err := a.Run(context.Background(), []model.Message{{Role: model.RoleUser, Text: "go"}})
			if err != nil {
				t.Fatal(err)
			}
			if r := res.Messages[2].ToolResults[0]; !strings.Contains(r.Text, tt.want) || strings.Join(asked, ";") != tt.wantAsked {
				t.Errorf("result %+v after asking %v; want %q after asking %q", r, asked, tt.want, tt.wantAsked)
			}
		})
	}
}

// TestApproval: a destructive tool runs only when approved; read-only
// tools never ask.
func TestApproval(t *testing.T) {
	no := false
	rm := tool.NewFunc(tool.Info{Name: "rm", Annotations: &tool.Annotations{ReadOnlyHint: &no}},
		func(context.Context, json.RawMessage) (*tool.Result, error) { return tool.Text("removed"), nil })

	ls := readOnly(tool.NewFunc(tool.Info{Name: "ls"}, func(context.Context, json.RawMessage) (*tool.Result, error) { return tool.Text("a b"), nil }), false)
	for _, tt := range []struct {
		name           string
		allow, confirm []string
		approve        func(context.Context, *tool.Call) (bool, error)
		want, wantLs   string
	}{
		{"nobody to ask", nil, nil, nil, "rm may change things and was not approved: the user must allow it (toolwire run: --allow rm,", "a b"},
		{"allowed", []string{"rm"}, nil, nil, "removed", "a b"},
		{"declined", nil, nil, func(context.Context, *tool.Call) (bool, error) { return false, nil }, "the user declined", "a b"},
		{"approved", nil, nil, func(context.Context, *tool.Call) (bool, error) { return true, nil }, "removed", "a b"},
		{"read-only, but confirm says ask", []string{"rm"}, []string{"ls"}, nil, "removed", "ls may change things and was not approved"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var reg tool.Registry
			if err := reg.Add(rm, ls); err != nil {
				t.Fatal(err)
			}
			reg.Use(agent.Approval(agent.Policy{Allow: tt.allow, Confirm: tt.confirm, Approve: tt.approve}))
			s := &script{answers: []model.Message{calls("ls", `{}`, "rm", `{}`), answer("done")}}
			res, err := (&agent.Agent{Model: s, Tools: &reg}).Run(context.Background(), []model.Message{{Role: model.RoleUser, Text: "go"}})
			if err != nil {
				t.Fatal(err)
			}
			rs := res.Messages[2].ToolResults
			if !strings.Contains(rs[0].Text, tt.wantLs) || !strings.Contains(rs[1].Text, tt.want) {
				t.Errorf("results %+v, want ls to say %q and rm %q", rs, tt.wantLs, tt.want)
			}
		})
	}
}

// TestCancel: cancelling the context stops a running tool and the run.
func TestCancel(t *testing.T) {
	started := make(chan struct{})
	wait := tool.Must(tool.New("wait", "Waits.", func(ctx context.Context, _ struct{}) (string, error) {
		close(started)
		<-ctx.Done()
		return "", ctx.Err()
	}))
	var reg tool.Registry
	if err := reg.Add(wait); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	s := &script{answers: []model.Message{calls("wait", `{}`), answer("never")}}
	_, err := (&agent.Agent{Model: s, Tools: &reg}).Run(ctx, []model.Message{{Role: model.RoleUser, Text: "go"}})
	if !errors.Is(err, context.Canceled) || len(s.requests) != 1 {
		t.Errorf("err %v after %d requests; want the cancellation", err, len(s.requests))
	}
}

// TestEventsAndFinal: events come in order; a Final tool's result is the
// answer without another model request.
func TestEventsAndFinal(t *testing.T) {
	var reg tool.Registry
	if err := reg.Add(divide()); err != nil {
		t.Fatal(err)
	}
	var events []string
	s := &script{answers: []model.Message{calls("divide", `{"a":8,"b":2}`), answer("never asked")}}
	a := &agent.Agent{Model: s, Tools: &reg, Final: []string{"divide"}, OnEvent: func(e agent.Event) {
		events = append(events, string(e.Type)+":"+e.Tool+e.Text)
	}}
	res, err := a.Run(context.Background(), []model.Message{{Role: model.RoleUser, Text: "go"}})
	if err != nil || res.Answer != "4" || len(s.requests) != 1 {
		t.Fatalf("answer %q, %v, %d requests", res.Answer, err, len(s.requests))
	}
	if got := strings.Join(events, " "); got != "usage: tool_start:divide tool_end:divide answer:4" {
		t.Errorf("events %s", got)
	}
}

// TestNoStream: with NoStream the model is asked for whole answers, and
// their reasoning and text still reach OnEvent, once each; by default
// every request streams.
func TestNoStream(t *testing.T) {
	for _, noStream := range []bool{false, true} {
		t.Run(fmt.Sprintf("NoStream=%v", noStream), func(t *testing.T) {
			var reg tool.Registry
			if err := reg.Add(tool.Must(tool.New("div", "Divides.", func(_ context.Context, in divIn) (float64, error) { return in.A / in.B, nil }))); err != nil {
				t.Fatal(err)
			}
			thinking := calls("div", `{"a":6,"b":3}`)
			thinking.Text = "Dividing."
			thinking.Reasoning = []model.Reasoning{{Source: "reasoning_content", Text: "a division"}}
			s := &script{answers: []model.Message{thinking, answer("2")}}
			var events []string
			a := &agent.Agent{Model: s, Tools: &reg, NoStream: noStream, OnEvent: func(e agent.Event) {
				if e.Type == agent.EventText || e.Type == agent.EventReasoning || e.Type == agent.EventAnswer {
					events = append(events, string(e.Type)+":"+e.Text)
				}
			}}
			res, err := a.Run(context.Background(), []model.Message{{Role: model.RoleUser, Text: "6/3?"}})
			if err != nil || res.Answer != "2" {
				t.Fatalf("answer %q, %v", res.Answer, err)
			}
			for i, streamed := range s.streamed {
				if streamed == noStream {
					t.Errorf("request %d streamed: %v, want %v", i, streamed, !noStream)
				}
			}
			want := "text:Dividing.|text:2|answer:2" // the script streams text only
			if noStream {
				want = "reasoning:a division|text:Dividing.|text:2|answer:2"
			}
			if got := strings.Join(events, "|"); got != want {
				t.Errorf("events %s, want %s", got, want)
			}
		})
	}
}
