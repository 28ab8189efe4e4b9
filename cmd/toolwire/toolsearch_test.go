package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/toolwire/toolwire/agent"
	"github.com/toolwire/toolwire/internal/testpeers"
	"github.com/toolwire/toolwire/tool"
)

// seen is one request a scripted model got: the bytes of its "tools"
// array as sent, the tools' names (and which were deferred), and the
// texts of the tool results in it.
type seen struct {
	toolsBytes int
	tools      []string
	deferred   map[string]bool
	results    []string
}

// searcher is a scripted model behind a provider's API (OpenAI chat
// completions, streamed, or Anthropic messages, streamed) that follows
// a plan: at request i it calls the tool plan[i] names with its
// arguments, then answers "done". It keeps what each request held.
type searcher struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []seen
}

func newSearcher(t *testing.T, anthropic bool, plan [][2]string) *searcher {
	t.Helper()
	s := &searcher{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var body struct {
			Tools    json.RawMessage `json:"tools"`
			Messages []struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(b, &body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var tools []struct {
			Name     string `json:"name"`
			Defer    bool   `json:"defer_loading"`
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		}
		_ = json.Unmarshal(body.Tools, &tools)
		rq := seen{toolsBytes: len(body.Tools), deferred: map[string]bool{}}
		for _, tl := range tools {
			rq.tools = append(rq.tools, tl.Name+tl.Function.Name)
			rq.deferred[tl.Name] = tl.Defer
		}
		for _, m := range body.Messages {
			var text string
			if m.Role == "tool" && json.Unmarshal(m.Content, &text) == nil { // OpenAI
				rq.results = append(rq.results, text)
			}
			var blocks []struct {
				Type    string          `json:"type"`
				Content json.RawMessage `json:"content"`
			}
			if json.Unmarshal(m.Content, &blocks) == nil { // Anthropic
				for _, bl := range blocks {
					if bl.Type == "tool_result" {
						rq.results = append(rq.results, string(bl.Content))
					}
				}
			}
		}
		if anthropic {
			// As the API does: a reference to a tool that is not among the
			// deferred tools fails the request.
			for _, res := range rq.results {
				var refs []struct {
					Type     string `json:"type"`
					ToolName string `json:"tool_name"`
				}
				_ = json.Unmarshal([]byte(res), &refs)
				for _, ref := range refs {
					if ref.Type == "tool_reference" && !rq.deferred[ref.ToolName] {
						w.WriteHeader(http.StatusBadRequest)
						fmt.Fprintf(w, `{"type":"error","error":{"type":"invalid_request_error","message":"tool_reference %s: no deferred tool of that name"}}`, ref.ToolName)
						return
					}
				}
			}
		}
		s.mu.Lock()
		n := len(s.reqs)
		s.reqs = append(s.reqs, rq)
		s.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		switch {
		case anthropic && n < len(plan):
			start, _ := json.Marshal(map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_%d", n), "name": plan[n][0], "input": map[string]any{}}})
			delta, _ := json.Marshal(map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "input_json_delta", "partial_json": plan[n][1]}})
			fmt.Fprintf(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_%d\",\"usage\":{\"input_tokens\":10,\"output_tokens\":1}}}\n\n", n)
			fmt.Fprintf(w, "event: content_block_start\ndata: %s\n\nevent: content_block_delta\ndata: %s\n\n", start, delta)
			fmt.Fprint(w, "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\nevent: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":20}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
		case anthropic:
			fmt.Fprint(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_end\",\"usage\":{\"input_tokens\":10,\"output_tokens\":1}}}\n\nevent: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\nevent: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"done\"}}\n\nevent: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\nevent: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":2}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
		case n < len(plan):
			chunk, _ := json.Marshal(map[string]any{"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"tool_calls": []any{
				map[string]any{"index": 0, "id": fmt.Sprintf("call_%d", n), "type": "function", "function": map[string]any{"name": plan[n][0], "arguments": plan[n][1]}}}}}}})
			fmt.Fprintf(w, "data: %s\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n", chunk)
		default:
			fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"done\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
		}
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *searcher) requests() []seen {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reqs)
}

// referenceServers configures the three npm reference servers.
func referenceServers(t *testing.T, root string) string {
	t.Helper()
	node := testpeers.Node(t)
	server := func(pkg string, args []string, env map[string]string) string {
		b, _ := json.Marshal(map[string]any{"command": node, "args": append([]string{filepath.Join(testpeers.Package(t, pkg), "dist", "index.js")}, args...), "env": env})
		return string(b)
	}
	return writeConfig(t, map[string]string{
		"everything": server("@modelcontextprotocol/server-everything", nil, nil),
		"filesystem": server("@modelcontextprotocol/server-filesystem", []string{root}, nil),
		"memory":     server("@modelcontextprotocol/server-memory", nil, map[string]string{"MEMORY_FILE_PATH": filepath.Join(root, "memory.jsonl")}),
	})
}

// searchScenario runs toolwire run twice with the same tools: with tool
// search off (every tool's schema sent: the bytes of all schemas), then
// in its default mode, where the scripted model searches with query and
// calls the tool want it finds, which was not in the first request. It
// returns the two first requests' bytes of tools and the run's requests.
func searchScenario(t *testing.T, args []string, query, want, wantArgs string) (all, first int, reqs []seen) {
	t.Helper()
	env := func(m *searcher) []string { return []string{"OPENAI_API_KEY=k", "OPENAI_BASE_URL=" + m.URL + "/v1"} }
	off := newSearcher(t, false, nil)
	r := runEnv(t, env(off), "", append(args, "--tool-search=off", "-m", "openai:test", "list the tools")...)
	if r.code != 0 || len(off.requests()) != 1 {
		t.Fatalf("--tool-search=off: exit %d\n%s", r.code, r.stderr)
	}
	all = off.requests()[0].toolsBytes
	total := len(off.requests()[0].tools)

	m := newSearcher(t, false, [][2]string{{agent.SearchToolName, fmt.Sprintf(`{"query":%q}`, query)}, {want, wantArgs}})
	r = runEnv(t, env(m), "", append(args, "-m", "openai:test", query)...)
	if r.code != 0 || !strings.Contains(r.stdout, "done") {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	reqs = m.requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3 (search, call, answer)", len(reqs))
	}
	first = reqs[0].toolsBytes
	if slices.Contains(reqs[0].tools, want) || !slices.Contains(reqs[0].tools, agent.SearchToolName) {
		t.Errorf("first request's tools: %v", reqs[0].tools)
	}
	if !slices.Contains(reqs[1].tools, want) || !strings.Contains(reqs[1].results[0], want) {
		t.Errorf("the search did not load %s: tools %v; result %s", want, reqs[1].tools, reqs[1].results[0])
	}
	t.Logf("%d tools; their schemas: %d bytes; first request with tool search: %d tools, %d bytes (%.1f%%); second: %d tools, %d bytes",
		total, all, len(reqs[0].tools), first, 100*float64(first)/float64(all), len(reqs[1].tools), reqs[1].toolsBytes)
	if float64(first) > 0.15*float64(all) {
		t.Errorf("the first request's tools take %d bytes, more than 15%% of all schemas' %d", first, all)
	}
	return all, first, reqs
}

// TestToolSearchReferenceServers is issue 22's acceptance 2 with real
// servers: server-everything, server-filesystem and server-memory beside
// the calc and data toolsets. The first request's tools take at most 15%
// of the bytes of all schemas, and the scripted model finds
// memory__create_entities by searching and calls it: the entity lands
// in the memory server's file.
func TestToolSearchReferenceServers(t *testing.T) {
	root, _ := filepath.EvalSymlinks(t.TempDir())
	cfg := referenceServers(t, root)
	_, _, reqs := searchScenario(t, []string{"run", "--config", cfg, "--toolsets", "calc,data", "--yes"},
		"create entities in the knowledge graph", "memory__create_entities",
		`{"entities":[{"name":"Ada Lovelace","entityType":"person","observations":["wrote the first program"]}]}`)
	if res := reqs[2].results[1]; !strings.Contains(res, "Ada Lovelace") {
		t.Errorf("memory__create_entities's result: %s", res)
	}
	b, err := os.ReadFile(filepath.Join(root, "memory.jsonl"))
	if err != nil || !strings.Contains(string(b), "wrote the first program") {
		t.Errorf("the memory server's file: %s %v", b, err)
	}
}

// TestToolSearchGenerated is the same with 500 generated tools on an MCP
// server (the test binary) beside calc.
func TestToolSearchGenerated(t *testing.T) {
	cfg := writeConfig(t, map[string]string{"gen": testServerJSON(t, "many", nil, "")})
	_, _, reqs := searchScenario(t, []string{"run", "--config", cfg, "--yes"},
		"comment on a github issue", "gen__github__comment_on_issue", `{"issue_id":"42","note":"LGTM"}`)
	if res := reqs[2].results[1]; !strings.Contains(res, `ran github__comment_on_issue {"issue_id":"42","note":"LGTM"}`) {
		t.Errorf("the tool's result: %s", res)
	}
}

// TestToolSearchNativeAnthropic: --tool-search=native with Anthropic
// sends every tool, all but the search tool with defer_loading, and the
// search's result as tool_reference blocks (the fake fails the request,
// as the API does, for a reference to a tool not deferred); the model
// then calls the tool found. The tools the model's context holds at
// first (those not deferred) are measured against all schemas.
func TestToolSearchNativeAnthropic(t *testing.T) {
	cfg := writeConfig(t, map[string]string{"gen": testServerJSON(t, "many", nil, "")})
	m := newSearcher(t, true, [][2]string{
		{agent.SearchToolName, `{"query":"archive a slack message"}`},
		{"gen__slack__archive_message", `{"message_id":"m1"}`},
	})
	r := runEnv(t, []string{"ANTHROPIC_API_KEY=k", "ANTHROPIC_BASE_URL=" + m.URL}, "",
		"run", "--config", cfg, "--yes", "--tool-search=native", "-m", "anthropic:claude-sonnet-4-5", "archive message m1")
	if r.code != 0 || !strings.Contains(r.stdout, "done") {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	reqs := m.requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	first := reqs[0]
	if len(first.tools) < 500 || first.deferred[agent.SearchToolName] {
		t.Fatalf("first request: %d tools, search deferred: %v", len(first.tools), first.deferred[agent.SearchToolName])
	}
	for _, n := range first.tools[1:] {
		if !first.deferred[n] {
			t.Errorf("%s not deferred", n)
		}
	}
	if !strings.Contains(reqs[1].results[0], `{"type":"tool_reference","tool_name":"gen__slack__archive_message"}`) {
		t.Errorf("the search's result: %s", reqs[1].results[0])
	}
	if !strings.Contains(reqs[2].results[1], "ran slack__archive_message") {
		t.Errorf("the tool's result: %s", reqs[2].results[1])
	}
	if !slices.Equal(first.tools, reqs[2].tools) {
		t.Error("the tools sent changed during the run (the prompt cache would not hold)")
	}
}

// manyTools are the 500 generated tools of testServer's "many" mode:
// services × verbs × objects, each answering with its name and
// arguments.
func manyTools() []tool.Tool {
	services := []string{"github", "slack", "jira", "sentry", "stripe", "notion", "linear", "gmail", "calendar", "drive"}
	verbs := []string{"create", "get", "list", "update", "delete", "search", "archive", "assign", "comment_on", "export"}
	objects := []string{"issue", "message", "ticket", "event", "invoice", "page", "project", "email", "file", "user"}
	var out []tool.Tool
	for i := range 500 {
		s, v, o := services[i%10], verbs[i/10%10], objects[(i/100+i)%10]
		info := tool.Info{
			Name:        fmt.Sprintf("%s__%s_%s", s, v, o),
			Description: fmt.Sprintf("Generated tool: %s a %s in %s. Returns the %s as JSON.", strings.ReplaceAll(v, "_", " "), o, s, o),
			InputSchema: json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{"%s_id":{"type":"string","description":"The %s's id in %s."},"note":{"type":"string","description":"Free text kept with the change."}},"required":["%s_id"]}`, o, o, s, o)),
		}
		out = append(out, tool.NewFunc(info, func(_ context.Context, args json.RawMessage) (*tool.Result, error) {
			return tool.Text("ran " + info.Name + " " + string(args)), nil
		}))
	}
	return out
}

// TestToolSearchFlags: bad values of the flags are usage errors that say
// what is wanted.
func TestToolSearchFlags(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--tool-search=maybe"}, `--tool-search is auto, on, off or native, not "maybe"`},
		{[]string{"--tool-search-max-tools=0"}, "--tool-search-max-tools and --tool-search-max-bytes must be at least 1"},
		{[]string{"--tool-search-max-bytes=-1"}, "--tool-search-max-tools and --tool-search-max-bytes must be at least 1"},
	} {
		r := runEnv(t, []string{"OPENAI_API_KEY=k", "OPENAI_BASE_URL=http://127.0.0.1:1/v1"}, "", append([]string{"run", "-m", "openai:test"}, append(tt.args, "task")...)...)
		if r.code != 2 || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("%v: exit %d, stderr:\n%s", tt.args, r.code, r.stderr)
		}
	}
}
