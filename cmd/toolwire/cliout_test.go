package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolwire/toolwire/tool"
)

// recordIn has parameters of every type, and nested objects.
type recordIn struct {
	Count    int            `json:"count" description:"how many"`
	Ratio    float64        `json:"ratio,omitempty"`
	Dry      bool           `json:"dry,omitempty"`
	Label    string         `json:"label,omitempty"`
	Options  map[string]any `json:"options,omitempty"`
	Tags     []string       `json:"tags,omitempty"`
	Entities []entity       `json:"entities,omitempty" description:"the things found"`
}

type entity struct {
	Name  string `json:"name" description:"the entity's name"`
	Where *place `json:"where,omitempty"`
}

type place struct {
	City string `json:"city" description:"where it is"`
}

// shapeTools are the tools of the test server's mode "shapes": record,
// which returns its arguments as structured content only, read-only and
// closed-world.
func shapeTools() []tool.Tool {
	yes, no := true, false
	record := tool.Must(tool.New("record", "Returns its arguments.", func(_ context.Context, in recordIn) (*tool.Result, error) {
		return &tool.Result{StructuredContent: in}, nil
	})).WithInfo(func(i *tool.Info) {
		i.Annotations = &tool.Annotations{ReadOnlyHint: &yes, OpenWorldHint: &no}
	})
	return []tool.Tool{record}
}

// TestCallOutput: call prints a tool's text as text even with structured
// content, structured-only content as indented JSON, the whole result
// with --json; key=value arguments are typed by the tool's schema; a bare
// or misspelled name gets a suggestion.
func TestCallOutput(t *testing.T) {
	bin := build(t)
	cfg := writeConfig(t, map[string]string{"shapes": testServerJSON(t, "shapes", nil, "")})
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string // exact, when not empty
		stderr string
	}{
		{"text and structured", []string{"shapes__calculate", `{"expression": "6*7"}`}, 0, "42\n", ""},
		{"key=value", []string{"shapes__calculate", "expression=2+3"}, 0, "5\n", ""},
		{"structured only", []string{"shapes__record", "count=3", "ratio=0.5", "dry=true", "label=42", `tags=["a"]`, `options:={"k":1}`}, 0,
			"{\n  \"count\": 3,\n  \"dry\": true,\n  \"label\": \"42\",\n  \"options\": {\n    \"k\": 1\n  },\n  \"ratio\": 0.5,\n  \"tags\": [\n    \"a\"\n  ]\n}\n", ""},
		{"not a number", []string{"shapes__record", "count=three"}, 2, "", "argument count=three: the tool takes a number here"},
		{"not a boolean", []string{"shapes__record", "count=1", "dry=maybe"}, 2, "", "the tool takes true or false here"},
		{"not JSON", []string{"shapes__record", "count=1", "tags=[a"}, 2, "", "the tool takes JSON here (array)"},
		{"bad :=", []string{"shapes__record", "count:=x"}, 2, "", "count:=x: the value is not valid JSON"},
		{"JSON then key=value", []string{"shapes__record", `{"count":1}`, "dry=true"}, 2, "", "the JSON arguments are one"},
		{"JSON with =", []string{"shapes__record", `{"count": 1, "label": "a=b"}`}, 0, "{\n  \"count\": 1,\n  \"label\": \"a=b\"\n}\n", ""},
		{"not an object", []string{"shapes__record", `["a=b"]`}, 1, "", ""},
		{"key=value then not", []string{"shapes__record", "count=1", "dry"}, 2, "", `argument "dry" is not key=value`},
		{"a power as in Python", []string{"shapes__calculate", "expression=2**3"}, 1, "", "operator ** is not supported (at character 2): for a power, use pow(2, 3)"},
		{"bare name", []string{"calculate", "expression=1"}, 1, "", `no tool "calculate"`},
		{"misspelled bare name", []string{"calcluate"}, 1, "", "did you mean shapes__calculate?"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := run(t, bin, append([]string{"call", "--config", cfg}, tt.args...)...)
			if code != tt.code || tt.stdout != "" && out != tt.stdout || !strings.Contains(errOut, tt.stderr) {
				t.Errorf("exit %d (want %d)\nstdout: %q (want %q)\nstderr: %s", code, tt.code, out, tt.stdout, errOut)
			}
		})
	}
	_, errOut, _ := run(t, bin, "call", "--config", cfg, "calculate")
	if !strings.Contains(errOut, "did you mean shapes__calculate?") {
		t.Errorf("a bare name gets no suggestion:\n%s", errOut)
	}

	// --json: the whole result, as the server sent it.
	out, errOut, code := run(t, bin, "call", "--config", cfg, "--json", "shapes__calculate", "expression=6*7")
	var res struct {
		Content           []map[string]any `json:"content"`
		StructuredContent map[string]any   `json:"structuredContent"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || len(res.Content) != 1 || res.Content[0]["text"] != "42" || res.StructuredContent["value"] != "42" {
		t.Errorf("call --json: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	out, _, code = run(t, bin, "call", "--config", cfg, "--json", "shapes__calculate", "expression=1/0")
	if code != 1 || !strings.Contains(out, `"isError": true`) {
		t.Errorf("call --json of a tool error: exit %d (want 1)\nstdout: %s", code, out)
	}
}

// TestCallReadTextFile: the README's example prints the file's text, not
// the structured {"content": ...} the server also sends.
func TestCallReadTextFile(t *testing.T) {
	root, _ := filepath.EvalSymlinks(t.TempDir())
	path := filepath.Join(root, "hello.txt")
	if err := os.WriteFile(path, []byte("hello from a file"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := claudeConfig(t, root)
	for _, args := range [][]string{{fmt.Sprintf(`{"path":%q}`, path)}, {"path=" + path}} {
		out, errOut, code := run(t, build(t), append([]string{"call", "--config", cfg, "filesystem__read_text_file"}, args...)...)
		if code != 0 || out != "hello from a file\n" {
			t.Errorf("call %v: exit %d\nstdout: %q\nstderr: %s", args, code, out, errOut)
		}
	}
	_, errOut, code := run(t, build(t), "call", "--config", cfg, "read_text_file", "path="+path)
	if code != 1 || !strings.Contains(errOut, "did you mean filesystem__read_text_file?") {
		t.Errorf("bare name: exit %d\nstderr: %s", code, errOut)
	}
}

// TestToolsShowNested: tools show lists nested fields with their types
// and descriptions, and the tool's hints.
func TestToolsShowNested(t *testing.T) {
	cfg := writeConfig(t, map[string]string{"shapes": testServerJSON(t, "shapes", nil, "")})
	out, errOut, code := run(t, build(t), "tools", "show", "--config", cfg, "shapes__record")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)

	}
	for _, want := range []string{
		"Hints: read-only: yes, open-world: no\n",
		"count  ", "integer", "how many",
		"entities  ", "object[]", "the things found",
		"entities[].name  ", "the entity's name",
		"entities[].where.city  ", "where it is",
		"options", "tags  ", "string[]",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("tools show lacks %q:\n%s", want, out)
		}
	}
	// A nested field follows its parent.
	if strings.Index(out, "entities  ") > strings.Index(out, "entities[].name") || strings.Index(out, "entities[].name") > strings.Index(out, "entities[].where.city") {
		t.Errorf("nested fields out of order:\n%s", out)
	}
}

func TestHintsLine(t *testing.T) {
	yes, no := true, false
	tests := []struct {
		a    *tool.Annotations
		want string
	}{
		{nil, "read-only: no (default), destructive: yes (default), idempotent: no (default), open-world: yes (default)"},
		{&tool.Annotations{ReadOnlyHint: &no, DestructiveHint: &no, IdempotentHint: &yes, OpenWorldHint: &no}, "read-only: no, destructive: no, idempotent: yes, open-world: no"},
		{&tool.Annotations{ReadOnlyHint: &yes, DestructiveHint: &yes}, "read-only: yes, open-world: yes (default)"},
	}
	for _, tt := range tests {
		if got := hintsLine(tt.a); got != tt.want {
			t.Errorf("hintsLine(%+v) = %q, want %q", tt.a, got, tt.want)
		}
	}
}

// TestServeForbiddenNamesFlags: serve --http refuses a Host or an Origin
// it does not allow with a 403 that names the flag that allows it.
func TestServeForbiddenNamesFlags(t *testing.T) {
	addr := serveHTTPForTest(t)
	for _, tt := range []struct {
		host, origin, want string
	}{
		{"evil.example", "", `Host "evil.example" is not allowed (DNS rebinding protection): the server must allow it (toolwire serve --allow-host NAME`},
		{"", "http://evil.example", `Origin "http://evil.example" is not allowed (DNS rebinding protection): the server must allow it (toolwire serve --allow-origin ORIGIN`},
	} {
		req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if tt.host != "" {
			req.Host = tt.host
		}
		if tt.origin != "" {
			req.Header.Set("Origin", tt.origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			Error struct{ Message string }
		}
		err = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || err != nil || !strings.Contains(body.Error.Message, tt.want) {
			t.Errorf("Host %q Origin %q: %d %q (%v); want 403 with %q", tt.host, tt.origin, resp.StatusCode, body.Error.Message, err, tt.want)
		}
	}
}

// TestServeStdioInterrupted: Ctrl-C (SIGINT) or SIGTERM ends serve over
// stdio with status 0 and nothing on stderr, as it does serve --http.
func TestServeStdioInterrupted(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := exec.Command(build(t), "serve")
			stdin, stdout, stderr := startPiped(t, cmd)
			defer stdin.Close()
			// Serving once it answers.
			fmt.Fprintln(stdin, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
			if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || !strings.Contains(line, `"id":1`) {
				t.Fatalf("serve answered %q, %v\n%s", line, err, stderr.String())
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			go func() { _ = cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				t.Fatalf("serve did not end after %v", sig)
			}
			if code := cmd.ProcessState.ExitCode(); code != 0 || stderr.String() != "" {
				t.Errorf("after %v: exit %d, stderr %q; want 0 and nothing", sig, code, stderr.String())
			}
		})
	}
}

// TestSchemaParamsDepth: nested fields are shown down to maxParamDepth
// levels, no deeper.
func TestSchemaParamsDepth(t *testing.T) {
	leaf := `{"type": "string"}`
	for _, name := range []string{"f", "e", "d", "c", "b", "a"} {
		leaf = fmt.Sprintf(`{"type": "object", "properties": {%q: %s}}`, name, leaf)
	}
	params, err := schemaParams(json.RawMessage(leaf))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range params {
		names = append(names, p.name)
	}
	if got := strings.Join(names, " "); got != "a a.b a.b.c a.b.c.d" {
		t.Errorf("rows %q, want 4 levels (maxParamDepth)", got)
	}
}
