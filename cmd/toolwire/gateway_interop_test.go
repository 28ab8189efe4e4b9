package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/testas"
	"github.com/toolwire/toolwire/internal/testpeers"
	"github.com/toolwire/toolwire/mcp"
)

// gatewayConfig configures the three reference servers as upstreams: the
// gateway injects echo's message and asks before get-sum runs.
func gatewayConfig(t *testing.T) (cfg, root string) {
	t.Helper()
	node := testpeers.Node(t)
	pkg := func(name string) string {
		return filepath.Join(testpeers.Package(t, "@modelcontextprotocol/"+name), "dist", "index.js")
	}
	root, _ = filepath.EvalSymlinks(t.TempDir())
	cfg = writeConfig(t, map[string]string{
		"everything": fmt.Sprintf(`{"command": %q, "args": [%q, "stdio"], "inject": {"echo": {"message": "from the gateway"}}, "confirm": ["get-sum"]}`, node, pkg("server-everything")),
		"filesystem": fmt.Sprintf(`{"command": %q, "args": [%q, %q]}`, node, pkg("server-filesystem"), root),
		"memory":     fmt.Sprintf(`{"command": %q, "args": [%q], "env": {"MEMORY_FILE_PATH": %q}}`, node, pkg("server-memory"), filepath.Join(root, "memory.jsonl")),
	})
	return cfg, root
}

// stageNodeScript copies a script of testdata beside a link to the pinned
// node_modules (ES modules resolve bare imports from the script's
// directory) and returns its path.
func stageNodeScript(t *testing.T, name string) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(testpeers.Modules(t), filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, name)
	if err := os.WriteFile(dst, src, 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}

// runNodeScript runs node with args (and env), bounded in time.
func runNodeScript(t *testing.T, env []string, args ...string) (stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, testpeers.Node(t), args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.WaitDelay = 5 * time.Second
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Run(); err != nil {
		t.Logf("node %s: %v", strings.Join(args, " "), err)
	}
	return o.String(), e.String()
}

// gwSummary is what testdata/gwclient.mjs prints.
type gwSummary struct {
	ProtocolVersion string   `json:"protocolVersion"`
	Asked           []string `json:"asked"`
	Error           string   `json:"error"`
	Tools           []struct {
		Name        string          `json:"name"`
		InputSchema json.RawMessage `json:"inputSchema"`
	} `json:"tools"`
	Calls []struct {
		Name    string `json:"name"`
		IsError bool   `json:"isError"`
		Text    string `json:"text"`
		Threw   string `json:"threw"`
	} `json:"calls"`
}

// gatewayCalls are the calls each client makes: a tool of each upstream,
// echo whose message the gateway injects, and get-sum, which asks first.
const gatewayCalls = `[
  ["everything__echo", {}],
  ["filesystem__list_allowed_directories", {}],
  ["memory__create_entities", {"entities": [{"name": "ada", "entityType": "person", "observations": ["wrote the first program"]}]}],
  ["memory__read_graph", {}],
  ["everything__get-sum", {"a": 20260000, "b": 1126}]
]`

// Acceptance 3 of issue 22: the TypeScript SDK client and the MCP
// Inspector CLI list and call the tools of the three reference servers
// through the gateway, over stdio and Streamable HTTP, in both protocol
// eras; the injected parameter is not in the schema the clients see and
// reaches the upstream; get-sum asks by elicitation and runs only on
// accept; --record writes a workflow that workflow run replays.
func TestGatewayInterop(t *testing.T) {
	cfg, root := gatewayConfig(t)
	bin := build(t)
	script := stageNodeScript(t, "gwclient.mjs")
	record := filepath.Join(t.TempDir(), "calls.json")
	addr, serveLog := serveHTTPWithLog(t, "--servers", "all", "--config", cfg, "--record", record)
	url := "http://" + addr + "/mcp"
	stdio := []string{"stdio", bin, "serve", "--servers", "all", "--config", cfg}

	for _, era := range []string{"2026-07-28", "2025-11-25"} {
		for _, tr := range []string{"stdio", "http"} {
			target := stdio
			if tr == "http" {
				target = []string{"http", url}
			}
			t.Run("typescript "+era+" "+tr, func(t *testing.T) {
				for _, elicit := range []string{"accept", "decline", "none"} {
					out, stderr := runNodeScript(t, []string{"CALLS=" + gatewayCalls}, append([]string{script, era, elicit}, target...)...)
					var got gwSummary
					if err := json.Unmarshal([]byte(out), &got); err != nil || got.Error != "" {
						t.Fatalf("%s: the client failed: %v %s\nstdout: %s\nstderr: %s\nserve: %s", elicit, err, got.Error, out, stderr, serveLog)
					}
					if got.ProtocolVersion != era {
						t.Errorf("%s: negotiated %q, want %s", elicit, got.ProtocolVersion, era)
					}
					checkGatewayTools(t, got)
					calls := map[string]string{}
					for _, c := range got.Calls {
						calls[c.Name] = c.Text + c.Threw
						if c.Name != "everything__get-sum" && (c.IsError || c.Threw != "") {
							t.Errorf("%s: %s failed: %s", elicit, c.Name, c.Text+c.Threw)
						}
					}
					for name, want := range map[string]string{
						"everything__echo":                     "Echo: from the gateway",
						"filesystem__list_allowed_directories": root,
						"memory__read_graph":                   "wrote the first program",
					} {
						if !strings.Contains(calls[name], want) {
							t.Errorf("%s: %s answered %q, want %q", elicit, name, calls[name], want)
						}
					}
					sum := calls["everything__get-sum"]
					switch elicit {
					case "accept":
						if !strings.Contains(sum, "20261126") || len(got.Asked) != 1 || !strings.Contains(got.Asked[0], "everything__get-sum") {
							t.Errorf("accept: get-sum answered %q after asking %q", sum, got.Asked)
						}
					case "decline":
						if strings.Contains(sum, "20261126") || !strings.Contains(sum, "declined") || len(got.Asked) != 1 {
							t.Errorf("decline: get-sum answered %q after asking %q", sum, got.Asked)
						}
					case "none":
						if strings.Contains(sum, "20261126") || !strings.Contains(sum, "does not support elicitation") {
							t.Errorf("no elicitation: get-sum answered %q", sum)
						}
					}
				}
			})
			t.Run("inspector "+era+" "+tr, func(t *testing.T) {
				inspectorCalls(t, era, tr, cfg, root, bin, url)
			})
		}
	}

	// What went through the HTTP gateway replays with no model.
	wf, err := os.ReadFile(record)
	if err != nil {
		t.Fatalf("--record wrote nothing: %v", err)
	}
	for _, want := range []string{`"tool": "everything__echo"`, `"tool": "memory__read_graph"`, `"tool": "filesystem__list_allowed_directories"`, `"tool": "everything__get-sum"`} {
		if !bytes.Contains(wf, []byte(want)) {
			t.Errorf("the recorded workflow lacks %s:\n%s", want, wf)
		}
	}
	if bytes.Contains(wf, []byte("from the gateway")) && bytes.Contains(wf, []byte(`"name": "message"`)) {
		t.Errorf("the recorded workflow holds the injected parameter:\n%s", wf)
	}
	r := runEnv(t, nil, "", "workflow", "run", record, "--config", cfg, "--toolsets", "")
	if r.code != 0 || !strings.Contains(r.stdout+r.stderr, "Echo: from the gateway") || !strings.Contains(r.stdout+r.stderr, "The sum of 20260000 and 1126 is 20261126") {
		t.Errorf("workflow run: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
}

// checkGatewayTools checks that a client sees the tools of the three
// upstreams, and echo without the parameter the gateway injects.
func checkGatewayTools(t *testing.T, got gwSummary) {
	t.Helper()
	seen := map[string]json.RawMessage{}
	for _, tl := range got.Tools {
		seen[tl.Name] = tl.InputSchema
	}
	for _, want := range []string{"everything__echo", "everything__get-sum", "filesystem__read_text_file", "filesystem__write_file", "memory__create_entities", "memory__read_graph"} {
		if _, ok := seen[want]; !ok {
			t.Errorf("the client does not see %s among %d tools", want, len(seen))
		}
	}
	if s := seen["everything__echo"]; strings.Contains(string(s), "message") {
		t.Errorf("the client sees the injected parameter in echo's schema: %s", s)
	}
}

// inspectorCalls lists and calls the three upstreams' tools through the
// gateway with the MCP Inspector's CLI.
func inspectorCalls(t *testing.T, era, tr, cfg, root, bin, url string) {
	inspector := filepath.Join(testpeers.Package(t, "@modelcontextprotocol/inspector"), "clients", "launcher", "build", "index.js")
	eraFlag := map[string]string{"2026-07-28": "modern", "2025-11-25": "legacy"}[era]
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--method", "tools/list"}, []string{`"everything__echo"`, `"filesystem__read_text_file"`, `"memory__read_graph"`}},
		{[]string{"--method", "tools/call", "--tool-name", "everything__echo"}, []string{"Echo: from the gateway"}},
		{[]string{"--method", "tools/call", "--tool-name", "filesystem__list_allowed_directories"}, []string{root}},
		{[]string{"--method", "tools/call", "--tool-name", "memory__search_nodes", "--tool-arg", "query=nobody"}, []string{`"entities"`}},
	} {
		args := append([]string{inspector, "--cli", "--protocol-era", eraFlag}, tc.args...)
		env := []string(nil)
		if tr == "stdio" {
			env = []string{"TOOLWIRE_CONFIG=" + cfg}
			args = append(args, "-e", "TOOLWIRE_CONFIG="+cfg, "--", bin, "serve", "--servers", "all")
		} else {
			args = append(args, "--transport", "http", "--server-url", url)
		}
		out, stderr := runNodeScript(t, env, args...)
		for _, want := range tc.want {
			if !strings.Contains(out, want) {
				t.Errorf("inspector %s: output lacks %q:\n%s\nstderr: %s", strings.Join(tc.args, " "), want, out, stderr)
			}
		}
		if strings.Contains(out, `"isError": true`) {
			t.Errorf("inspector %s: a tool error:\n%s", strings.Join(tc.args, " "), out)
		}
		if tc.args[1] == "tools/list" && strings.Contains(out, `"message"`) && strings.Contains(out, "Echoes back") {
			var list struct {
				Tools []struct {
					Name        string          `json:"name"`
					InputSchema json.RawMessage `json:"inputSchema"`
				} `json:"tools"`
			}
			if json.Unmarshal([]byte(out), &list) == nil {
				for _, tl := range list.Tools {
					if tl.Name == "everything__echo" && strings.Contains(string(tl.InputSchema), "message") {
						t.Errorf("the inspector sees the injected parameter in echo's schema: %s", tl.InputSchema)
					}
				}
			}
		}
	}
}

// Issue 22's acceptance 1 through the gateway, with the TypeScript SDK
// client as the host: server-filesystem reads a 5 MB CSV, the client gets
// a preview and a handle, passes the handle as write_file's content, and
// the file written equals the original byte for byte.
func TestGatewaySpill(t *testing.T) {
	cfg, root := gatewayConfig(t)
	var csv bytes.Buffer
	csv.WriteString("id,name,amount\n")
	for i := 0; csv.Len() < 5<<20; i++ {
		fmt.Fprintf(&csv, "%d,customer %d,%d.%02d\n", i, i%977, i%10007, i%100)
	}
	src, dst := filepath.Join(root, "big.csv"), filepath.Join(root, "copy.csv")
	if err := os.WriteFile(src, csv.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	script := stageNodeScript(t, "gwclient.mjs")
	addr, _ := serveHTTPWithLog(t, "--servers", "all", "--config", cfg)
	calls := fmt.Sprintf(`[["filesystem__read_text_file", {"path": %q}], ["filesystem__write_file", {"path": %q, "content": "$HANDLE"}]]`, src, dst)
	for _, tc := range []struct{ era, target []string }{
		{[]string{"2026-07-28"}, []string{"http", "http://" + addr + "/mcp"}},
		{[]string{"2025-11-25"}, []string{"stdio", build(t), "serve", "--servers", "all", "--config", cfg}},
	} {
		t.Run(tc.era[0]+" "+tc.target[0], func(t *testing.T) {
			os.Remove(dst)
			out, stderr := runNodeScript(t, []string{"CALLS=" + calls}, append([]string{script, tc.era[0], "none"}, tc.target...)...)
			var got gwSummary
			if err := json.Unmarshal([]byte(out), &got); err != nil || got.Error != "" || len(got.Calls) != 2 {
				t.Fatalf("the client failed: %v %s\nstdout: %s\nstderr: %s", err, got.Error, out, stderr)
			}
			read, write := got.Calls[0], got.Calls[1]
			if read.IsError || !strings.Contains(read.Text, "res_") || len(read.Text) > csv.Len()/100 {
				t.Errorf("read_text_file showed the client %d bytes (the file has %d): %.300s", len(read.Text), csv.Len(), read.Text)
			}
			if write.IsError || write.Threw != "" {
				t.Errorf("write_file with the handle: %s%s", write.Text, write.Threw)
			}
			copied, err := os.ReadFile(dst)
			if err != nil || !bytes.Equal(copied, csv.Bytes()) {
				t.Errorf("the file written (%d bytes, %v) is not the file read (%d bytes)", len(copied), err, csv.Len())
			}
		})
	}
}

// With --auth-issuer, each caller of the gateway is the user of its access
// token, and the result handles a user's calls made are theirs: another
// user can neither read one nor pass it to a tool.
func TestGatewayHandlesPerUser(t *testing.T) {
	cfg, root := gatewayConfig(t)
	big := strings.Repeat("a line of the file that alice reads\n", 3000) // over the 16 KiB budget
	src := filepath.Join(root, "alice.txt")
	if err := os.WriteFile(src, []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	const aud = "http://toolwire.test/mcp"
	as := testas.New(t, aud)
	addr, _ := serveHTTPWithLog(t, "--servers", "filesystem", "--config", cfg, "--auth-issuer", as.URL, "--auth-audience", aud)
	session := func(user string) *mcp.ClientSession {
		tr := &mcp.HTTPTransport{URL: "http://" + addr + "/mcp", Header: http.Header{"Authorization": {"Bearer " + as.Token(t, user, nil)}}}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		sess, err := (&mcp.Client{Info: mcp.Implementation{Name: user, Version: "1"}}).Connect(ctx, tr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sess.Close() })
		return sess
	}
	call := func(sess *mcp.ClientSession, name, args string) (string, bool) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		res, err := sess.CallTool(ctx, name, json.RawMessage(args))
		if err != nil {
			return err.Error(), true
		}
		var texts []string
		for _, c := range res.Content {
			texts = append(texts, c.Text)
		}
		return strings.Join(texts, "\n"), res.IsError
	}
	alice, bob := session("alice"), session("bob")
	got, isErr := call(alice, "filesystem__read_text_file", fmt.Sprintf(`{"path": %q}`, src))
	h := regexp.MustCompile(`res_[A-Za-z0-9_-]{22}`).FindString(got)
	if isErr || h == "" || len(got) > len(big)/4 {
		t.Fatalf("alice's read: %d bytes (isError %v), want a preview with a handle: %.300s", len(got), isErr, got)
	}
	if got, isErr := call(alice, "read_result", fmt.Sprintf(`{"handle": %q, "start_line": 2, "end_line": 2}`, h)); isErr || !strings.Contains(got, "a line of the file that alice reads") {
		t.Errorf("alice reads her handle: %q (isError %v)", got, isErr)
	}
	if got, isErr := call(bob, "read_result", fmt.Sprintf(`{"handle": %q}`, h)); !isErr || strings.Contains(got, "alice reads") || !strings.Contains(got, "handle") {
		t.Errorf("bob read alice's handle: %q (isError %v)", got, isErr)
	}
	dst := filepath.Join(root, "bob.txt")
	if got, isErr := call(bob, "filesystem__write_file", fmt.Sprintf(`{"path": %q, "content": %q}`, dst, h)); !isErr || !strings.Contains(got, "handle") {
		t.Errorf("bob passed alice's handle to write_file: %q", got)
	}
	if _, err := os.Stat(dst); err == nil {
		t.Error("bob's write_file with alice's handle wrote a file")
	}
}
