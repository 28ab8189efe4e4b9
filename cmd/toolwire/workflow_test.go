package main

import (
	"fmt"
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
	if err != nil || !strings.Contains(string(b), `"input": "notes__write_note.text"`) || !strings.Contains(string(b), `"tool": "notes__write_note"`) {
		t.Fatalf("the workflow file:\n%s", b)
	}

	r = runEnv(t, nil, "", "workflow", "validate", "--config", cfg, "--toolsets=", wfPath)
	if r.code != 0 || !strings.Contains(r.stdout, "fits the tools") {
		t.Errorf("validate: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = runEnv(t, nil, "", "workflow", "show", "--format", "mermaid", wfPath)
	if r.code != 0 || !strings.Contains(r.stdout, "flowchart TD") || !strings.Contains(r.stdout, `in_notes__write_note_text -->|"text"| notes__write_note`) {
		t.Errorf("show: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// No model anywhere: no key, no base URL.
	r = runEnv(t, []string{"OPENAI_API_KEY=", "OPENAI_BASE_URL="}, "", "workflow", "run", "--config", cfg, "--toolsets=", wfPath, "--set", "notes__write_note.text=eggs")
	if r.code != 0 || strings.TrimSpace(r.stdout) != "saved: eggs" {
		t.Errorf("workflow run --set: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = runEnv(t, nil, "", "workflow", "run", "--config", cfg, "--toolsets=", wfPath, "--set", "nope=1")
	if r.code != 1 || !strings.Contains(r.stderr, `input "nope": the workflow has no such input (inputs: notes__write_note.text)`) {
		t.Errorf("an unknown input: exit %d\n%s", r.code, r.stderr)
	}
	r = runEnv(t, nil, "", "workflow", "show", wfPath)
	if want := "input notes__write_note.text (str) = \"buy milk\": feeds notes__write_note.text\nnotes__write_note: notes__write_note\n  text = input notes__write_note.text\n"; r.code != 0 || !strings.HasSuffix(r.stdout, want) {
		t.Errorf("show: exit %d\n%s\nwant it to end with:\n%s", r.code, r.stdout, want)
	}
	r = runEnv(t, nil, "", "workflow", "show", "--format", "png", wfPath)
	if r.code != 2 || !strings.Contains(r.stderr, "use mermaid, dot or text") {
		t.Errorf("a bad format: exit %d\n%s", r.code, r.stderr)
	}
}

// TestWorkflowAllowDirAndEdges: workflow run and validate reach a CSV
// outside the working directory with --allow-dir only; validate fails on
// an edge that takes a field the producing tool's output lacks.
func TestWorkflowAllowDirAndEdges(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join(dir, "sales.csv")
	if err := os.WriteFile(csv, []byte("region,amount\nnorth,3\nsouth,4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	write := func(name, edgeOutput string) string {
		p := filepath.Join(dir, name)
		wf := fmt.Sprintf(`{"version":"toolwire.workflow/v1",
  "inputs":[{"name":"load_csv.path","type":"str","default":%q}],
  "nodes":[{"id":"load_csv","tool":"load_csv","input_parameters":[{"name":"path","type":"str","value":"","input":"load_csv.path"}]},
           {"id":"describe","tool":"describe","input_parameters":[{"name":"table","type":"str","value":""}]}],
  "edges":[{"from":"load_csv","output":%q,"to":"describe","parameter":"table"}]}`, csv, edgeOutput)
		if err := os.WriteFile(p, []byte(wf), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good, bad := write("good.json", "structured.table"), write("bad.json", "structured.tabel")
	noConfig := []string{"TOOLWIRE_CONFIG=" + filepath.Join(dir, "none.json"), "HOME=" + dir}
	r := runEnv(t, noConfig, "", "workflow", "run", good)
	if r.code != 1 || !strings.Contains(r.stderr, csv+" is outside the directories") {
		t.Errorf("without --allow-dir: exit %d\n%s", r.code, r.stderr)
	}
	r = runEnv(t, noConfig, "", "workflow", "run", "--allow-dir", dir, good)
	if r.code != 0 || !strings.Contains(r.stdout, "region") {
		t.Errorf("with --allow-dir: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = runEnv(t, noConfig, "", "workflow", "validate", "--allow-dir", dir, good)
	if r.code != 0 || !strings.Contains(r.stdout, "fits the tools") {
		t.Errorf("validate: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = runEnv(t, noConfig, "", "workflow", "validate", "--allow-dir", dir, bad)
	if r.code != 1 || !strings.Contains(r.stderr, `edge load_csv → describe.table: tool load_csv's output schema has no "structured.tabel" (its fields there: table,`) {
		t.Errorf("validate of an edge from a missing field: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
