package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/spill"
	"github.com/toolwire/toolwire/tool"
	"github.com/toolwire/toolwire/toolsearch"
)

// serveSession runs `toolwire args...` (a stdio serve) with an initialized
// legacy session and the requests given, each {"method", "params"} with
// ids from 2 on, and returns the responses by id (1 is initialize's).
func serveSession(t *testing.T, args []string, requests ...map[string]any) map[int]json.RawMessage {
	t.Helper()
	lines := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	}
	for i, r := range requests {
		b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": i + 2, "method": r["method"], "params": r["params"]})
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(b))
	}
	r := runEnv(t, nil, strings.Join(lines, "\n")+"\n", args...)
	if r.code != 0 {
		t.Fatalf("toolwire %s: exit %d\n%s", strings.Join(args, " "), r.code, r.stderr)
	}
	out := map[int]json.RawMessage{}
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var msg struct {
			ID     *int            `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal([]byte(line), &msg); err != nil {
			t.Fatalf("not JSON: %q", line)
		}
		if msg.ID == nil {
			continue // a notification
		}
		if msg.Error != nil {
			t.Fatalf("request %d failed: %s", *msg.ID, msg.Error)
		}
		out[*msg.ID] = msg.Result
	}
	if len(out) != len(requests)+1 {
		t.Fatalf("%d responses to %d requests:\n%s\n%s", len(out), len(requests)+1, r.stdout, r.stderr)
	}
	return out
}

// builtinTools returns the tools `toolwire serve data calc` lists (every
// built-in toolset) and those toolwire adds itself (the kept results'
// tools and tool search, served by a gateway and given to run and chat).
func builtinTools(t *testing.T) []tool.Info {
	t.Helper()
	res := serveSession(t, []string{"serve", "data", "calc"}, map[string]any{"method": "tools/list"})
	var list mcp.ListToolsResult
	if err := json.Unmarshal(res[2], &list); err != nil {
		t.Fatal(err)
	}
	infos := list.Tools
	kept, err := (&spill.Results{Dirs: []string{t.TempDir()}}).Tools()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range kept {
		infos = append(infos, k.Info())
	}
	return append(infos, toolsearch.ToolInfo(toolsearch.New(nil), 0))
}

// annotationHints are the four annotations of a tool, as "readOnly destructive
// idempotent openWorld" with each t, f or - (left out).
func annotationHints(an *tool.Annotations) string {
	if an == nil {
		return "no annotations"
	}
	f := func(b *bool) string {
		switch {
		case b == nil:
			return "-"
		case *b:
			return "t"
		}
		return "f"
	}
	return strings.Join([]string{f(an.ReadOnlyHint), f(an.DestructiveHint), f(an.IdempotentHint), f(an.OpenWorldHint)}, " ")
}

// TestBuiltinToolAnnotations checks every built-in tool's annotations
// against what the tool does, so that hosts (Codex CLI: a tool runs
// unasked when read-only, or neither destructive nor open-world; toolwire's
// own approval, the same) ask before what deserves it and only then. A
// tool without an entry here fails: say what a new tool does.
func TestBuiltinToolAnnotations(t *testing.T) {
	const (
		reads      = "t f t f" // changes nothing
		readsClock = "t f f f" // changes nothing; answers differ with time
		makesTable = "f f f f" // a new server-side table, changing none there was
		writesFile = "f t t f" // replaces a file
		dropsTable = "f t t f" // a table's handle stops working
	)
	does := map[string]string{
		// calc
		"calculate": reads, "convert_time": reads, "time_between": reads, "now": readsClock,
		// data
		"head": reads, "describe": reads,
		"load_csv": makesTable, "drop_missing": makesTable, "filter": makesTable, "select": makesTable,
		"sort": makesTable, "group_by": makesTable, "query": makesTable,
		"save_csv": writesFile, "save_parquet": writesFile, "release": dropsTable,
		// kept results (spill) and tool search
		"read_result": reads, "query_result": reads, "save_result": writesFile,
		toolsearch.ToolName: reads,
	}
	unasked := map[string]bool{reads: true, readsClock: true, makesTable: true}
	seen := map[string]bool{}
	for _, info := range builtinTools(t) {
		seen[info.Name] = true
		want, ok := does[info.Name]
		if !ok {
			t.Errorf("tool %s: not in the table; say what it does", info.Name)
			continue
		}
		if got := annotationHints(info.Annotations); got != want {
			t.Errorf("tool %s: annotations %q (readOnly destructive idempotent openWorld), want %q", info.Name, got, want)
		}
		if codex := runsUnasked(info.Annotations); codex != unasked[want] {
			t.Errorf("tool %s: Codex CLI would run it unasked: %v, want %v", info.Name, codex, unasked[want])
		}
	}
	for name := range does {
		if !seen[name] {
			t.Errorf("tool %s is in the table but not built in: remove it", name)
		}
	}
}

// runsUnasked is Codex CLI's rule: a tool runs without approval when it
// is read-only, or neither destructive nor open-world (hints left out are
// MCP's defaults: not read-only, destructive, open-world).
func runsUnasked(an *tool.Annotations) bool {
	if an == nil {
		return false
	}
	is := func(b *bool, unsaid bool) bool {
		if b == nil {
			return unsaid
		}
		return *b
	}
	return is(an.ReadOnlyHint, false) || !is(an.DestructiveHint, true) && !is(an.OpenWorldHint, true)
}

// TestBuiltinToolSchemasTyped: every property of every built-in tool's
// input schema, at any depth, has a type (the MCP Inspector's strict
// check warns of one that has none).
func TestBuiltinToolSchemasTyped(t *testing.T) {
	for _, info := range builtinTools(t) {
		var s map[string]any
		if err := json.Unmarshal(info.InputSchema, &s); err != nil {
			t.Fatalf("tool %s: %v", info.Name, err)
		}
		for _, path := range untyped(s, "") {
			t.Errorf("tool %s: property %s has no type", info.Name, path)
		}
	}
}

// untyped returns the paths of the properties of schema s, and of the
// schemas inside them, that have no type.
func untyped(s map[string]any, at string) []string {
	var out []string
	props, _ := s["properties"].(map[string]any)
	names := make([]string, 0, len(props))
	for name := range props {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		p, _ := props[name].(map[string]any)
		if p["type"] == nil {
			out = append(out, at+name)
		}
		out = append(out, untyped(p, at+name+".")...)
	}
	for _, key := range []string{"items", "additionalProperties"} {
		if sub, ok := s[key].(map[string]any); ok {
			out = append(out, untyped(sub, at+key+".")...)
		}
	}
	return out
}

// TestServeIgnoresHostArguments: a host that adds an argument of its own
// to every tool, as Gemini CLI adds wait_for_previous, gets the normal
// result from toolwire serve (calc) and toolwire serve data.
func TestServeIgnoresHostArguments(t *testing.T) {
	t.Run("calc", func(t *testing.T) {
		res := serveSession(t, []string{"serve"}, map[string]any{"method": "tools/call",
			"params": map[string]any{"name": "calculate", "arguments": map[string]any{"expression": "6*7", "wait_for_previous": true}}})
		if text, isErr := callText(t, res[2]); isErr || text != "42" {
			t.Errorf("calculate: %q (error %v), want 42", text, isErr)
		}
	})
	t.Run("data", func(t *testing.T) {
		dir := t.TempDir()
		csv := filepath.Join(dir, "sales.csv")
		if err := os.WriteFile(csv, []byte("region,amount\nnorth,10\nsouth,20\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		res := serveSession(t, []string{"serve", "data", "--allow-dir", dir}, map[string]any{"method": "tools/call",
			"params": map[string]any{"name": "load_csv", "arguments": map[string]any{"path": csv, "wait_for_previous": true}}})
		text, isErr := callText(t, res[2])
		if isErr || !strings.Contains(text, `"rows":2`) || !strings.Contains(text, `"table":"tbl_`) {
			t.Errorf("load_csv: %s (error %v), want a table of 2 rows", text, isErr)
		}
	})
}

// callText returns the text of a tools/call result and whether it is an
// error.
func callText(t *testing.T, raw json.RawMessage) (string, bool) {
	t.Helper()
	var res mcp.CallToolResult
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatal(err)
	}
	var parts []string
	for _, c := range res.Content {
		parts = append(parts, c.Text)
	}
	return strings.Join(parts, "\n"), res.IsError
}

// TestServeInstructions: each combination of toolsets served gets the
// instructions of those toolsets, and of no other: a host puts them in
// front of the model.
func TestServeInstructions(t *testing.T) {
	calc, data := toolsetInstructions("calc"), toolsetInstructions("data")
	if calc == "" || data == "" {
		t.Fatalf("instructions: calc %q, data %q", calc, data)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"serve"}, calc},
		{[]string{"serve", "calc"}, calc},
		{[]string{"serve", "data"}, data},
		{[]string{"serve", "--toolset", "data"}, data},
		{[]string{"serve", "data", "calc"}, data + " " + calc},
		{[]string{"serve", "calc", "data"}, calc + " " + data},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			res := serveSession(t, tt.args)
			var init mcp.InitializeResult
			if err := json.Unmarshal(res[1], &init); err != nil {
				t.Fatal(err)
			}
			if init.Instructions != tt.want {
				t.Errorf("instructions %q, want %q", init.Instructions, tt.want)
			}
		})
	}
	// Each toolset's instructions speak of its own tools.
	for name, words := range map[string][]string{"calc": {"arithmetic", "time zones"}, "data": {"CSV", "tables", "handle"}} {
		for _, w := range words {
			if !strings.Contains(toolsetInstructions(name), w) {
				t.Errorf("%s's instructions %q do not mention %s", name, toolsetInstructions(name), w)
			}
		}
	}
	if strings.Contains(data, "arithmetic") || strings.Contains(data, "time zone") {
		t.Errorf("data's instructions speak of calc: %q", data)
	}
}

// TestRunDataUnasked: run asks nobody, yet the data toolset's tools that
// make a new table run, as they say they are neither destructive nor
// open-world; saving a file is still refused without --yes or --allow.
func TestRunDataUnasked(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "sales.csv"), []byte("region,amount\nnorth,10\nsouth,20\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m := newScriptedModel(t,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"load_csv","arguments":"{\"path\":\"sales.csv\"}"}},{"index":1,"id":"call_2","type":"function","function":{"name":"save_csv","arguments":"{\"table\":\"tbl_AAAAAAAAAAAAAAAAAAAAAA\",\"path\":\"out.csv\"}"}}]}}]}
{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
		`{"choices":[{"index":0,"delta":{"content":"ok"}}]}
{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`)
	cmd := exec.Command(build(t), "run", "--toolsets=data", "-m", "openai:test-model", "load sales.csv")
	cmd.Dir = dir
	home := t.TempDir() // no configuration
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+home, "XDG_CACHE_HOME="+home, "OPENAI_API_KEY=test-key", "OPENAI_BASE_URL="+m.URL+"/v1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	results := map[string]string{}
	for _, msg := range m.messages(1) {
		if id, ok := msg["tool_call_id"].(string); ok {
			results[id], _ = msg["content"].(string)
		}
	}
	if !strings.Contains(results["call_1"], `"rows":2`) {
		t.Errorf("load_csv: %q, want a table of 2 rows", results["call_1"])
	}
	if !strings.Contains(results["call_2"], "save_csv may change things and was not approved") {
		t.Errorf("save_csv: %q, want it refused", results["call_2"])
	}
}
