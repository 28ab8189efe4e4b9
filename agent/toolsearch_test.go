package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/agent"
	"github.com/toolwire/toolwire/model"
	"github.com/toolwire/toolwire/tool"
)

// catalog is a registry of n tools named svcK__verb_object, each
// answering with its own name; calls counts the calls that ran.
func catalog(t *testing.T, n int, calls map[string]int) *tool.Registry {
	t.Helper()
	verbs := []string{"create", "read", "update", "delete", "list", "archive", "export", "search"}
	objects := []string{"invoice", "ticket", "calendar_event", "message", "repository", "customer", "shipment"}
	reg := &tool.Registry{}
	for i := range n {
		name := fmt.Sprintf("svc%d__%s_%s", i%5, verbs[i%len(verbs)], objects[i/len(verbs)%len(objects)])
		if i >= len(verbs)*len(objects) {
			name += fmt.Sprint(i)
		}
		info := tool.Info{Name: name, Description: fmt.Sprintf("Does %s on a %s.", verbs[i%len(verbs)], strings.ReplaceAll(objects[i/len(verbs)%len(objects)], "_", " ")),
			InputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string","description":"The object's id."}},"required":["id"]}`)}
		if err := reg.Add(tool.NewFunc(info, func(_ context.Context, args json.RawMessage) (*tool.Result, error) {
			calls[info.Name]++
			return tool.Text("ran " + info.Name + " " + string(args)), nil
		})); err != nil {
			t.Fatal(err)
		}
	}
	return reg
}

func names(specs []model.ToolSpec) []string {
	var out []string
	for _, s := range specs {
		out = append(out, s.Name)
	}
	return out
}

// TestToolSearchFindsAndLoads: with 50 tools (over the default 40), the
// first request has the search tool and the always-loaded tool only; the
// model searches, the tool found is sent and callable on the next
// request, in the same run.
func TestToolSearchFindsAndLoads(t *testing.T) {
	ran := map[string]int{}
	reg := catalog(t, 50, ran)
	const target = "svc3__archive_ticket"
	m := &script{answers: []model.Message{
		calls(agent.SearchToolName, `{"query":"archive a ticket"}`),
		calls(target, `{"id":"T-1"}`),
		answer("archived"),
	}}
	a := &agent.Agent{Model: m, Tools: reg, ToolSearch: agent.ToolSearch{Loaded: []string{"svc0__create_invoice"}}}
	res, err := a.Run(context.Background(), []model.Message{{Role: model.RoleUser, Text: "archive ticket T-1"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(m.requests[0].Tools); !slices.Equal(got, []string{agent.SearchToolName, "svc0__create_invoice"}) {
		t.Errorf("first request's tools: %v", got)
	}
	desc := m.requests[0].Tools[0].Description
	if !strings.Contains(desc, "among 50 tools") || !strings.Contains(desc, "servers svc0, svc1, svc2, svc3, svc4") {
		t.Errorf("search tool's description: %s", desc)
	}
	found := m.requests[1].Messages[2].ToolResults[0]
	if found.IsError || !strings.Contains(found.Text, "- "+target+": Does archive on a ticket. (parameters: id)") {
		t.Errorf("search result: %+v", found)
	}
	if got := names(m.requests[1].Tools); !slices.Contains(got, target) || len(got) > 2+5 {
		t.Errorf("second request's tools: %v", got)
	}
	if ran[target] != 1 || res.Answer != "archived" || res.ToolCalls != 2 {
		t.Errorf("ran %v, answer %q, %d calls", ran, res.Answer, res.ToolCalls)
	}
	if len(found.ToolRefs) != 0 {
		t.Errorf("references sent to a model that does not defer tools: %v", found.ToolRefs)
	}
}

// TestToolSearchNotLoaded: a call of a tool that exists but was not sent
// does not run; the tool is sent from the next request on, and the call
// made again runs. A misspelled name gets the registry's suggestion.
func TestToolSearchNotLoaded(t *testing.T) {
	ran := map[string]int{}
	reg := catalog(t, 60, ran)
	m := &script{answers: []model.Message{
		calls("svc4__read_ticket", `{"id":"1"}`),
		calls("svc4__read_tickt", `{"id":"1"}`),
		calls("svc4__read_ticket", `{"id":"1"}`),
		answer("done"),
	}}
	a := &agent.Agent{Model: m, Tools: reg}
	if _, err := a.Run(context.Background(), []model.Message{{Role: model.RoleUser, Text: "read ticket 1"}}); err != nil {
		t.Fatal(err)
	}
	first := m.requests[1].Messages[2].ToolResults[0]
	if !first.IsError || !strings.Contains(first.Text, "tool svc4__read_ticket was not loaded, so the call did not run. It is loaded now") {
		t.Errorf("call of a tool not loaded: %+v", first)
	}
	if !slices.Contains(names(m.requests[1].Tools), "svc4__read_ticket") {
		t.Errorf("the tool called is not sent next: %v", names(m.requests[1].Tools))
	}
	typo := m.requests[2].Messages[4].ToolResults[0]
	if !typo.IsError || !strings.Contains(typo.Text, `unknown tool "svc4__read_tickt": did you mean svc4__read_ticket`) {
		t.Errorf("misspelled call: %+v", typo)
	}
	if ran["svc4__read_ticket"] != 1 {
		t.Errorf("runs: %v, want the one call made once the tool was loaded", ran)
	}
}

// TestToolSearchBadQueries: a search matching nothing says so and names
// servers and tools; arguments without a query get an error saying what
// to send; a query matching everything returns the bounded top k.
func TestToolSearchBadQueries(t *testing.T) {
	reg := catalog(t, 50, map[string]int{})
	m := &script{answers: []model.Message{
		calls(agent.SearchToolName, `{"query":"zebra xylophone"}`, agent.SearchToolName, `{}`, agent.SearchToolName, `{"query":""}`),
		calls(agent.SearchToolName, `{"query":"create read update delete list archive export search invoice ticket calendar event message repository customer shipment","limit":3}`),
		answer("ok"),
	}}
	a := &agent.Agent{Model: m, Tools: reg}
	if _, err := a.Run(context.Background(), []model.Message{{Role: model.RoleUser, Text: "x"}}); err != nil {
		t.Fatal(err)
	}
	rs := m.requests[1].Messages[2].ToolResults
	if rs[0].IsError || !strings.Contains(rs[0].Text, `No tool matches "zebra xylophone". Try other words`) || !strings.Contains(rs[0].Text, "a server's name: svc0, svc1") {
		t.Errorf("no match: %+v", rs[0])
	}
	if !rs[1].IsError || !strings.Contains(rs[1].Text, `search_tools takes {"query": "what the tool should do"}; the arguments were {}`) {
		t.Errorf("no query: %+v", rs[1])
	}
	if !strings.Contains(rs[2].Text, "The query has no words to search for") {
		t.Errorf("empty query: %+v", rs[2])
	}
	if got := names(m.requests[1].Tools); !slices.Equal(got, []string{agent.SearchToolName}) {
		t.Errorf("tools after searches that found nothing: %v", got)
	}
	all := m.requests[2].Messages[4].ToolResults[0]
	if !strings.HasPrefix(all.Text, "3 of 50 tools match") || len(m.requests[2].Tools) != 1+3 {
		t.Errorf("a query matching everything: %d tools sent\n%s", len(m.requests[2].Tools), all.Text)
	}
}

// TestToolSearchThresholds: which requests get the search tool.
func TestToolSearchThresholds(t *testing.T) {
	big := tool.NewFunc(tool.Info{Name: "big", InputSchema: json.RawMessage(`{"type":"object","description":"` + strings.Repeat("x", 40<<10) + `"}`)},
		func(context.Context, json.RawMessage) (*tool.Result, error) { return tool.Text("ok"), nil })
	tests := []struct {
		name   string
		tools  int
		big    bool
		search agent.ToolSearch
		want   bool // the search tool is sent
	}{
		{"auto, 40 tools", 40, false, agent.ToolSearch{}, false},
		{"auto, 41 tools", 41, false, agent.ToolSearch{}, true},
		{"auto, 3 tools of 40 KiB", 3, true, agent.ToolSearch{}, true},
		{"auto, MaxTools 10", 11, false, agent.ToolSearch{MaxTools: 10}, true},
		{"auto, MaxSchemaBytes 1 MiB", 3, true, agent.ToolSearch{MaxSchemaBytes: 1 << 20}, false},
		{"off, 100 tools", 100, false, agent.ToolSearch{Mode: agent.SearchOff}, false},
		{"on, 3 tools", 3, false, agent.ToolSearch{Mode: agent.SearchOn}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := catalog(t, tt.tools, map[string]int{})
			if tt.big {
				_ = reg.Add(big)
			}
			m := &script{answers: []model.Message{answer("ok")}}
			a := &agent.Agent{Model: m, Tools: reg, ToolSearch: tt.search}
			if _, err := a.Run(context.Background(), []model.Message{{Role: model.RoleUser, Text: "x"}}); err != nil {
				t.Fatal(err)
			}
			got := names(m.requests[0].Tools)
			if slices.Contains(got, agent.SearchToolName) != tt.want {
				t.Errorf("tools sent: %d (%v…), search tool wanted: %v", len(got), got[:min(3, len(got))], tt.want)
			}
			if !tt.want && len(got) != reg.Len() {
				t.Errorf("%d tools sent, want all %d", len(got), reg.Len())
			}
		})
	}
}

// TestToolSearchHistoryLoads: the tools the history called are loaded
// at the start of the next run (a chat goes on with them).
func TestToolSearchHistoryLoads(t *testing.T) {
	reg := catalog(t, 50, map[string]int{})
	history := []model.Message{
		{Role: model.RoleUser, Text: "x"},
		calls("svc4__list_customer", `{"id":"1"}`, "gone_tool", `{}`),
		{Role: model.RoleTool, ToolResults: []model.ToolResult{{CallID: "c1", Text: "ok"}, {CallID: "c2", Text: "ok"}}},
		answer("ok"),
		{Role: model.RoleUser, Text: "again"},
	}
	m := &script{answers: []model.Message{answer("ok")}}
	a := &agent.Agent{Model: m, Tools: reg}
	if _, err := a.Run(context.Background(), history); err != nil {
		t.Fatal(err)
	}
	if got := names(m.requests[0].Tools); !slices.Equal(got, []string{agent.SearchToolName, "svc4__list_customer"}) {
		t.Errorf("tools sent: %v", got)
	}
}

// TestToolSearchSeesNewTools: a tool added to the registry during the
// run is found by the next search.
func TestToolSearchSeesNewTools(t *testing.T) {
	reg := catalog(t, 50, map[string]int{})
	added := tool.NewFunc(tool.Info{Name: "weather__forecast", Description: "Forecasts the weather."},
		func(context.Context, json.RawMessage) (*tool.Result, error) { return tool.Text("sunny"), nil })
	m := &script{answers: []model.Message{
		calls(agent.SearchToolName, `{"query":"weather forecast"}`),
		calls(agent.SearchToolName, `{"query":"weather forecast"}`),
		answer("ok"),
	}}
	a := &agent.Agent{Model: m, Tools: reg, OnEvent: func(e agent.Event) {
		if e.Type == agent.EventToolEnd && reg.Len() == 50 {
			_ = reg.Add(added)
		}
	}}
	if _, err := a.Run(context.Background(), []model.Message{{Role: model.RoleUser, Text: "weather?"}}); err != nil {
		t.Fatal(err)
	}
	second := m.requests[2].Messages[4].ToolResults[0]
	if !strings.Contains(second.Text, "weather__forecast") || !slices.Contains(names(m.requests[2].Tools), "weather__forecast") {
		t.Errorf("the tool added during the run was not found: %s", second.Text)
	}
}

// deferrer is a script whose API defers tools.
type deferrer struct{ script }

func (*deferrer) DefersTools() bool { return true }

// TestToolSearchNative: with a model that defers tools and Native set,
// every tool is sent, the ones not loaded deferred, and the search's
// result carries references to the tools found; without Native the
// generic search is used.
func TestToolSearchNative(t *testing.T) {
	for _, native := range []bool{true, false} {
		t.Run(fmt.Sprint("native=", native), func(t *testing.T) {
			reg := catalog(t, 50, map[string]int{})
			m := &deferrer{script{answers: []model.Message{
				calls(agent.SearchToolName, `{"query":"export customer","limit":2}`, agent.SearchToolName, `{"query":"svc0__create_invoice","limit":1}`),
				calls("svc1__export_customer", `{"id":"s"}`),
				answer("ok"),
			}}}
			a := &agent.Agent{Model: m, Tools: reg, ToolSearch: agent.ToolSearch{Native: native, Loaded: []string{"svc0__create_invoice"}}}
			if _, err := a.Run(context.Background(), []model.Message{{Role: model.RoleUser, Text: "x"}}); err != nil {
				t.Fatal(err)
			}
			first := m.requests[0].Tools
			r := m.requests[1].Messages[2].ToolResults[0]
			if !native {
				if len(first) != 2 || len(r.ToolRefs) != 0 {
					t.Errorf("generic: %d tools sent, refs %v", len(first), r.ToolRefs)
				}
				return
			}
			if len(first) != 51 || first[0].Name != agent.SearchToolName || first[0].Deferred {
				t.Fatalf("native: %d tools sent, first %+v", len(first), first[0])
			}
			for _, sp := range first[1:] {
				if sp.Deferred != (sp.Name != "svc0__create_invoice") {
					t.Errorf("%s deferred: %v", sp.Name, sp.Deferred)
				}
			}
			if !slices.Contains(r.ToolRefs, "svc1__export_customer") || len(r.ToolRefs) != 2 {
				t.Errorf("references: %v", r.ToolRefs)
			}
			// A tool sent undeferred is not referenced: its result is text.
			if r2 := m.requests[1].Messages[2].ToolResults[1]; len(r2.ToolRefs) != 0 || !strings.Contains(r2.Text, "svc0__create_invoice") {
				t.Errorf("a search finding a tool loaded from the start: refs %v, text %s", r2.ToolRefs, r2.Text)
			}
			if !slices.EqualFunc(first, m.requests[1].Tools, func(a, b model.ToolSpec) bool { return a.Name == b.Name && a.Deferred == b.Deferred }) {
				t.Error("the tools sent changed from one request to the next")
			}
		})
	}
}

// TestToolSearchNativeHistory: a tool the history called stays deferred
// when a result of the history references it (the reference loads it,
// and must name a deferred tool); one called without a reference is sent
// undeferred.
func TestToolSearchNativeHistory(t *testing.T) {
	reg := catalog(t, 50, map[string]int{})
	history := []model.Message{
		{Role: model.RoleUser, Text: "x"},
		calls(agent.SearchToolName, `{"query":"export customer"}`),
		{Role: model.RoleTool, ToolResults: []model.ToolResult{{CallID: "c1", Text: "found", ToolRefs: []string{"svc1__export_customer"}}}},
		calls("svc1__export_customer", `{"id":"1"}`, "svc4__list_customer", `{"id":"2"}`),
		{Role: model.RoleTool, ToolResults: []model.ToolResult{{CallID: "c1", Text: "ok"}, {CallID: "c2", Text: "ok"}}},
		answer("ok"),
		{Role: model.RoleUser, Text: "again"},
	}
	m := &deferrer{script{answers: []model.Message{answer("ok")}}}
	a := &agent.Agent{Model: m, Tools: reg, ToolSearch: agent.ToolSearch{Native: true}}
	if _, err := a.Run(context.Background(), history); err != nil {
		t.Fatal(err)
	}
	deferred := map[string]bool{}
	for _, sp := range m.requests[0].Tools {
		deferred[sp.Name] = sp.Deferred
	}
	if !deferred["svc1__export_customer"] || deferred["svc4__list_customer"] || deferred[agent.SearchToolName] {
		t.Errorf("deferred: referenced %v, called without reference %v, search %v",
			deferred["svc1__export_customer"], deferred["svc4__list_customer"], deferred[agent.SearchToolName])
	}
}
