package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWorkflowCommands: toolwire run --record writes the run's calls as a
// workflow; workflow validate, show and run use it with no model, --set
// giving an input another value.
func TestWorkflowCommands(t *testing.T) {
	m := newScriptedModel(t,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"notes__write_note","arguments":"{\"text\":\"buy milk\"}"}}]}}]}
{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
		`{"choices":[{"index":0,"delta":{"content":"Written."}}]}
{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
	)
	cfg := writeConfig(t, map[string]string{"notes": testServerJSON(t, "notes", nil, `"allow": ["write_note"]`)})
	wfPath := filepath.Join(t.TempDir(), "note.json")
	r := runEnv(t, []string{"OPENAI_API_KEY=test-key", "OPENAI_BASE_URL=" + m.URL + "/v1"}, "",
		"run", "--config", cfg, "--toolsets=", "-m", "openai:test-model", "--record", wfPath, "Write down: buy milk")
	if r.code != 0 || !strings.Contains(r.stderr, "wrote "+wfPath+": 1 node, 0 edges, 1 input") {
		t.Fatalf("run --record: exit %d\n%s", r.code, r.stderr)
	}
	b, err := os.ReadFile(wfPath)
	if err != nil || !strings.Contains(string(b), `"input": "text"`) || !strings.Contains(string(b), `"tool": "notes__write_note"`) {
		t.Fatalf("the workflow file:\n%s", b)
	}

	r = runEnv(t, nil, "", "workflow", "validate", "--config", cfg, "--toolsets=", wfPath)
	if r.code != 0 || !strings.Contains(r.stdout, "fits the tools") {
		t.Errorf("validate: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = runEnv(t, nil, "", "workflow", "show", "--format", "mermaid", wfPath)
	if r.code != 0 || !strings.Contains(r.stdout, "flowchart TD") || !strings.Contains(r.stdout, `in_text -->|"text"| notes__write_note`) {
		t.Errorf("show: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// No model anywhere: no key, no base URL.
	r = runEnv(t, []string{"OPENAI_API_KEY=", "OPENAI_BASE_URL="}, "", "workflow", "run", "--config", cfg, "--toolsets=", wfPath, "--set", "text=eggs")
	if r.code != 0 || strings.TrimSpace(r.stdout) != "saved: eggs" {
		t.Errorf("workflow run --set: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = runEnv(t, nil, "", "workflow", "run", "--config", cfg, "--toolsets=", wfPath, "--set", "nope=1")
	if r.code != 1 || !strings.Contains(r.stderr, `input "nope": the workflow has no such input (inputs: text)`) {
		t.Errorf("an unknown input: exit %d\n%s", r.code, r.stderr)
	}
	r = runEnv(t, nil, "", "workflow", "show", "--format", "png", wfPath)
	if r.code != 2 || !strings.Contains(r.stderr, "use mermaid, dot or text") {
		t.Errorf("a bad format: exit %d\n%s", r.code, r.stderr)
	}
}
