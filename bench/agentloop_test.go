package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolwire/toolwire/agent"
	"github.com/toolwire/toolwire/model"
	"github.com/toolwire/toolwire/model/openai"
	"github.com/toolwire/toolwire/tool"

	"github.com/toolwire/toolwire/bench/floorloop"
	"github.com/toolwire/toolwire/bench/internal/openaiscript"
)

// loopCalls is the number of tool calls in one conversation of the
// agent-loop benchmark (servers/openaiscript's -calls default).
const loopCalls = 50

// loopSlice is how many conversations one side of BenchmarkAgentLoop
// holds before the other side takes its turn.
const loopSlice = 4

// loopPrompt is the user's message of the conversation numbered n: every
// conversation is new, so that nothing a client kept of the last one can
// serve it.
func loopPrompt(n int) string {
	return fmt.Sprintf("Add 3 to each number from 0 to 49, one call at a time. (Conversation %d.)", n)
}

var (
	scriptOnce sync.Once
	scriptBin  string
	scriptErr  error
)

// scriptServer starts servers/openaiscript (built once) and returns its
// base URL (ending in /v1).
func scriptServer(tb testing.TB) (*httpServer, string) {
	tb.Helper()
	scriptOnce.Do(func() {
		if buildDir == "" {
			if buildDir, scriptErr = os.MkdirTemp("", "mcpbench-"); scriptErr != nil {
				return
			}
		}
		scriptBin = filepath.Join(buildDir, "openaiscript")
		cmd := exec.Command("go", "build", "-o", scriptBin, "./servers/openaiscript")
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		scriptErr = cmd.Run()
	})
	if scriptErr != nil {
		tb.Fatalf("building servers/openaiscript: %v", scriptErr)
	}
	h := startHTTPServer(tb, serverSpec{Name: "openaiscript", Cmd: []string{scriptBin}})
	return h, strings.TrimSuffix(h.URL, "/mcp") + "/v1"
}

type loopArgs struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}

func loopAdd(a loopArgs) string { return strconv.FormatFloat(a.A+a.B, 'f', -1, 64) }

const addDescription = "Adds two numbers."

// loopClient is one side of the benchmark: run holds one conversation
// and returns the number of tool calls it made.
type loopClient struct {
	name string
	run  func(ctx context.Context) (int, error)
}

func floorLoop(base string, stream bool, rt http.RoundTripper) loopClient {
	client := &http.Client{Transport: rt}
	tools := []floorloop.Tool{{
		Name: "add", Description: addDescription,
		Parameters: json.RawMessage(`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}`),
		Run: func(args string) (string, error) {
			var in loopArgs
			if err := json.Unmarshal([]byte(args), &in); err != nil {
				return "", err
			}
			return loopAdd(in), nil
		},
	}}
	n := 0
	return loopClient{name: "floor", run: func(ctx context.Context) (int, error) {
		n++
		res, err := floorloop.Run(ctx, client, base+"/chat/completions", "gpt-4.1", tools, loopPrompt(n), stream, loopCalls+5)
		if err != nil {
			return 0, err
		}
		if res.Answer != openaiscript.FinalText || res.Usage.PromptTokens == 0 {
			return 0, fmt.Errorf("floor: answer %q, usage %+v", res.Answer, res.Usage)
		}
		return res.ToolCalls, nil
	}}
}

func newTransport() http.RoundTripper { return http.DefaultTransport.(*http.Transport).Clone() }

func toolwireLoop(tb testing.TB, base string, stream bool, rt http.RoundTripper) loopClient {
	var reg tool.Registry
	t, err := tool.New("add", addDescription, func(_ context.Context, in loopArgs) (string, error) { return loopAdd(in), nil })
	if err != nil {
		tb.Fatal(err)
	}
	if err := reg.Add(t); err != nil {
		tb.Fatal(err)
	}
	m := &openai.Model{Name: "gpt-4.1", BaseURL: base, APIKey: "k", Client: &http.Client{Transport: rt}}
	a := &agent.Agent{Model: m, Tools: &reg, MaxTurns: loopCalls + 5, NoStream: !stream}
	n := 0
	return loopClient{name: "toolwire", run: func(ctx context.Context) (int, error) {
		n++
		res, err := a.Run(ctx, []model.Message{{Role: model.RoleUser, Text: loopPrompt(n)}})
		if err != nil {
			return 0, err
		}
		if res.Answer != openaiscript.FinalText || res.Usage.InputTokens == 0 {
			return 0, fmt.Errorf("toolwire: answer %q, usage %+v", res.Answer, res.Usage)
		}
		return res.ToolCalls, nil
	}}
}

// TestAgentLoop holds one conversation with each client, streaming and
// not: the scripted server checks every request, so a client that gets
// the loop wrong fails here.
func TestAgentLoop(t *testing.T) {
	srv, base := scriptServer(t)
	defer srv.stop()
	for _, stream := range []bool{false, true} {
		for _, c := range []loopClient{floorLoop(base, stream, newTransport()), toolwireLoop(t, base, stream, newTransport())} {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			n, err := c.run(ctx)
			cancel()
			if err != nil || n != loopCalls {
				t.Errorf("%s, stream=%v: %d calls, %v\nserver stderr:\n%s", c.name, stream, n, err, srv.stderr)
			}
		}
	}
}

// loopSide is what one client was measured at so far.
type loopSide struct {
	loopClient
	calls         int
	cpu, wall     time.Duration
	bytes, allocs uint64
	gcs           uint32
}

// measure holds n conversations and adds what they cost. The slice ends
// with a garbage collection, inside the measurement, so that each side
// pays for collecting its own garbage and none of it is left for the
// other side.
func (s *loopSide) measure(ctx context.Context, n int) error {
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	c0, t0 := selfCPU(), time.Now()
	for range n {
		calls, err := s.run(ctx)
		if err != nil {
			return err
		}
		s.calls += calls
	}
	runtime.GC()
	s.wall += time.Since(t0)
	s.cpu += selfCPU() - c0
	runtime.ReadMemStats(&m1)
	s.bytes += m1.TotalAlloc - m0.TotalAlloc
	s.allocs += m1.Mallocs - m0.Mallocs
	s.gcs += m1.NumGC - m0.NumGC
	return nil
}

func (s *loopSide) perCall(d time.Duration) float64 {
	return float64(d.Nanoseconds()) / 1e3 / float64(s.calls)
}

// BenchmarkAgentLoop measures the agent loop against the hand-written
// floor (package floorloop) in the same run: 50-call conversations with
// servers/openaiscript, a scripted OpenAI-compatible server in a process
// of its own, so that the CPU figures (this process's, from getrusage)
// are the client's alone. Each b.N is one slice of loopSlice
// conversations on each side, in the order floor, toolwire, then
// toolwire, floor, and so on (A B B A), so that a machine getting faster
// or slower weighs on both alike. toolwire is agent.Agent over the
// openai adapter, with the add tool in a tool.Registry; the floor runs
// the same tool by hand. Metrics per tool call: client CPU (cpu-µs),
// wall time (wall-µs), bytes and allocations (from runtime.MemStats),
// garbage collections (gc), for each side, and toolwire's ratios to the
// floor. Run it with a fixed count:
//
//	go test -run '^$' -bench AgentLoop -benchtime 10x -count 10
func BenchmarkAgentLoop(b *testing.B) {
	srv, base := scriptServer(b)
	defer srv.stop()
	for _, stream := range []bool{false, true} {
		b.Run("stream="+strconv.FormatBool(stream), func(b *testing.B) {
			sides := [2]*loopSide{{loopClient: floorLoop(base, stream, newTransport())}, {loopClient: toolwireLoop(b, base, stream, newTransport())}}
			ctx := context.Background()
			for _, s := range sides { // warm up: connections, caches
				if _, err := s.run(ctx); err != nil {
					b.Fatalf("%s: %v\nserver stderr:\n%s", s.name, err, srv.stderr)
				}
			}
			for i := 0; b.Loop(); i++ {
				order := sides
				if i%2 == 1 {
					order[0], order[1] = order[1], order[0]
				}
				for _, s := range order {
					if err := s.measure(ctx, loopSlice); err != nil {
						b.Fatalf("%s: %v\nserver stderr:\n%s", s.name, err, srv.stderr)
					}
				}
			}
			for _, s := range sides {
				b.ReportMetric(s.perCall(s.cpu), s.name+"-cpu-µs/call")
				b.ReportMetric(s.perCall(s.wall), s.name+"-wall-µs/call")
				b.ReportMetric(float64(s.bytes)/float64(s.calls), s.name+"-B/call")
				b.ReportMetric(float64(s.allocs)/float64(s.calls), s.name+"-allocs/call")
				b.ReportMetric(float64(s.gcs)/float64(s.calls), s.name+"-gc/call")
			}
			f, t := sides[0], sides[1]
			b.ReportMetric(t.perCall(t.cpu)/f.perCall(f.cpu), "cpu-ratio")
			b.ReportMetric(t.perCall(t.wall)/f.perCall(f.wall), "wall-ratio")
			b.ReportMetric(float64(t.bytes)/float64(f.bytes), "bytes-ratio")
		})
	}
}

// cannedTransport answers in this process what servers/openaiscript
// would, without HTTP and without checking the request: the script's
// answers, made beforehand, picked by the number of tool results in the
// request (found by counting) and by whether it streams.
type cannedTransport struct {
	body    bytes.Buffer
	answers [2][]string // [stream][n]
}

func newCannedTransport() *cannedTransport {
	t := &cannedTransport{}
	for s, stream := range []bool{false, true} {
		for n := range loopCalls + 1 {
			t.answers[s] = append(t.answers[s], string(openaiscript.Answer(n, loopCalls, 4000, stream, stream)))
		}
	}
	return t
}

func (t *cannedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	t.body.Reset()
	_, err := t.body.ReadFrom(r.Body)
	r.Body.Close()
	if err != nil {
		return nil, err
	}
	b := t.body.Bytes()
	n := bytes.Count(b, []byte(`"role":"tool"`))
	s, ct := 0, "application/json"
	if bytes.Contains(b, []byte(`"stream":true`)) {
		s, ct = 1, "text/event-stream"
	}
	if n > loopCalls {
		return nil, fmt.Errorf("%d tool results, want at most %d", n, loopCalls)
	}
	resp := &http.Response{StatusCode: http.StatusOK, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": {ct}}, Body: io.NopCloser(strings.NewReader(t.answers[s][n])), ContentLength: -1, Request: r}
	if s == 0 {
		resp.ContentLength = int64(len(t.answers[s][n])) // as net/http sends a short answer
	}
	return resp, nil
}

// BenchmarkAgentLoopInProcess is BenchmarkAgentLoop's clients with the
// server's answers made in this process (cannedTransport): the clients'
// own work, without HTTP, the kernel or a server, as one conversation per
// op (ns/call and B/op divided by the calls are per call). Compare the
// clients with benchstat -col /client.
func BenchmarkAgentLoopInProcess(b *testing.B) {
	for _, stream := range []bool{false, true} {
		for _, name := range []string{"floor", "toolwire"} {
			b.Run("stream="+strconv.FormatBool(stream)+"/client="+name, func(b *testing.B) {
				rt := newCannedTransport()
				c := floorLoop("http://script.invalid/v1", stream, rt)
				if name == "toolwire" {
					c = toolwireLoop(b, "http://script.invalid/v1", stream, rt)
				}
				ctx := context.Background()
				b.ReportAllocs()
				for b.Loop() {
					if n, err := c.run(ctx); err != nil || n != loopCalls {
						b.Fatalf("%d calls, %v", n, err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*loopCalls), "ns/call")
			})
		}
	}
}
