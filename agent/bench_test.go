package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolwire/toolwire/agent"
	"github.com/toolwire/toolwire/model"
	"github.com/toolwire/toolwire/model/openai"
	"github.com/toolwire/toolwire/tool"
)

// callsPerRun is the length of the conversations the loop benchmarks
// hold: every request re-sends the history, so long runs cost more per
// call than short ones.
const callsPerRun = 50

// loopModel asks for one tool call per request until callsPerRun, then
// answers; it costs next to nothing, so the benchmark measures the loop.
type loopModel struct{}

func (loopModel) Generate(_ context.Context, req *model.Request, _ func(model.Delta)) (*model.Response, error) {
	n := len(req.Messages) / 2
	if n >= callsPerRun {
		return &model.Response{Message: model.Message{Role: model.RoleAssistant, Text: "done"}, StopReason: model.StopEnd}, nil
	}
	return &model.Response{Message: model.Message{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{
		{ID: fmt.Sprintf("call_%d", n), Name: "add", Arguments: json.RawMessage(`{"a":2,"b":3}`)}}}, StopReason: model.StopToolCalls}, nil
}

type addIn struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}

func addRegistry(b *testing.B) *tool.Registry {
	var reg tool.Registry
	if err := reg.Add(tool.Must(tool.New("add", "Adds two numbers.", func(_ context.Context, in addIn) (string, error) { return "5", nil }))); err != nil {
		b.Fatal(err)
	}
	return &reg
}

// BenchmarkLoopOverhead is the agent loop's own work per tool call, with
// the model and the tool costing next to nothing: building each request,
// running the call through the registry, rendering its result, events.
func BenchmarkLoopOverhead(b *testing.B) {
	a := &agent.Agent{Model: loopModel{}, Tools: addRegistry(b), MaxTurns: callsPerRun + 1, OnEvent: func(agent.Event) {}}
	user := []model.Message{{Role: model.RoleUser, Text: "add, 50 times"}}
	b.ReportAllocs()
	for b.Loop() {
		res, err := a.Run(context.Background(), user)
		if err != nil || res.ToolCalls != callsPerRun {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*callsPerRun), "ns/call")
}

// scriptedServer is an OpenAI-compatible server that answers like
// loopModel, streaming, in this process.
func scriptedServer(b *testing.B) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []json.RawMessage `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		n := (len(req.Messages) - 1) / 2
		if n >= callsPerRun {
			fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"done\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
			return
		}
		fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_%d\",\"type\":\"function\",\"function\":{\"name\":\"add\",\"arguments\":\"{\\\"a\\\":2,\\\"b\\\":3}\"}}]}}]}\n\n", n)
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n")
	}))
}

// BenchmarkOpenAILoop is a 50-call conversation through the OpenAI
// adapter against a scripted server in the same process: the client's
// whole cost per call (encoding the growing history, HTTP, parsing the
// stream, the loop), plus the scripted server's.
func BenchmarkOpenAILoop(b *testing.B) {
	srv := scriptedServer(b)
	defer srv.Close()
	m := &openai.Model{Name: "m", BaseURL: srv.URL + "/v1", APIKey: "k"}
	a := &agent.Agent{Model: m, Tools: addRegistry(b), MaxTurns: callsPerRun + 1, OnEvent: func(agent.Event) {}}
	user := []model.Message{{Role: model.RoleUser, Text: "add, 50 times"}}
	b.ReportAllocs()
	for b.Loop() {
		res, err := a.Run(context.Background(), user)
		if err != nil || res.ToolCalls != callsPerRun {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*callsPerRun), "ns/call")
}

// BenchmarkChunkToEvent is the time from a streamed chunk leaving the
// server to its text event reaching the program: p50 and p99 over the
// chunks of a stream, each written when the one before has arrived.
func BenchmarkChunkToEvent(b *testing.B) {
	const chunks = 200
	arrived := make(chan struct{}, 1)
	var sent atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range chunks {
			sent.Store(time.Now().UnixNano())
			fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"word%d \"}}]}\n\n", i)
			w.(http.Flusher).Flush()
			select {
			case <-arrived:
			case <-r.Context().Done():
				return
			}
		}
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	m := &openai.Model{Name: "m", BaseURL: srv.URL + "/v1", APIKey: "k"}
	var lat []time.Duration
	a := &agent.Agent{Model: m, OnEvent: func(e agent.Event) {
		if e.Type == agent.EventText {
			lat = append(lat, time.Duration(time.Now().UnixNano()-sent.Load()))
			arrived <- struct{}{}
		}
	}}
	user := []model.Message{{Role: model.RoleUser, Text: "talk"}}
	for b.Loop() {
		if _, err := a.Run(context.Background(), user); err != nil {
			b.Fatal(err)
		}
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}
