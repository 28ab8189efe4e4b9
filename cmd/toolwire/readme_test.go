package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/testpeers"
)

// readmeDirective says how TestREADME tests the next code block of
// README.md. It is written as JSON in an HTML comment on the line before
// the block's fence, which GitHub does not show:
//
//	<!-- readme-test: {"model": true} -->
//
// Without one, a go block is built as a program (package main) and a sh
// block runs, line by line as bash runs a script, in a temporary
// directory with the built toolwire first on PATH; any other block needs
// a directive.
type readmeDirective struct {
	// Skip says why the block is not run, and which test covers what it
	// shows instead. Keep skips rare.
	Skip string `json:"skip"`
	// Omit names lines of a sh block (by prefix) that are not run, each
	// with the reason.
	Omit map[string]string `json:"omit"`
	// Checkout runs a sh block in the repository instead of a temporary
	// directory.
	Checkout bool `json:"checkout"`
	// Files are copied into the temporary directory first: name there →
	// path in the repository.
	Files map[string]string `json:"files"`
	// Model points every provider the README names (OpenAI, Ollama) at a
	// scripted model server, with keys set (see readmeModel).
	Model bool `json:"model"`
	// Servers configures the MCP servers the README's examples use:
	// "files" (the reference filesystem server over /tmp) and
	// "everything" (the reference server of every feature), in the file
	// TOOLWIRE_CONFIG names.
	Servers bool `json:"servers"`
	// Serve: each line of a sh block is a server: it is started (with
	// 127.0.0.1:8080 replaced by a free port), must accept a connection,
	// and must exit with status 0 on SIGINT.
	Serve bool `json:"serve"`
	// Config: a json block is an MCP client's configuration: "file" (a
	// whole file) or "entries" (entries of mcpServers, wrapped in one).
	// `toolwire tools` (or, for entries, `toolwire servers`) must read it.
	Config string `json:"config"`
	// Run: a go block's program is run too (with Model's environment when
	// set) and must exit with status 0.
	Run bool `json:"run"`
	// MCP: a go block's program is an MCP server on stdio, called with
	// `toolwire call` as the configured server "demo".
	MCP *struct {
		Call string `json:"call"`
		Args string `json:"args"`
		// HTTP: the program is then started with this flag and a free
		// address, and called at /mcp; the output must contain
		// HTTPStdout.
		HTTP       string `json:"http"`
		HTTPStdout string `json:"http_stdout"`
	} `json:"mcp"`
	// Stdout is text the output must contain.
	Stdout string `json:"stdout"`
	// Env is set for the block's commands (the variables a configuration
	// names, say).
	Env map[string]string `json:"env"`
}

// readmeBlock is a fenced code block of README.md.
type readmeBlock struct {
	name      string // the section's heading and the block's number in it
	line      int    // of the opening fence
	lang      string
	text      string
	directive readmeDirective
}

var readmeDirectiveRE = regexp.MustCompile(`^<!-- readme-test: (.*) -->$`)

// readmeBlocks parses the fenced code blocks of a README and their
// directives.
func readmeBlocks(t *testing.T, readme []byte) []readmeBlock {
	t.Helper()
	var (
		blocks  []readmeBlock
		heading = "top"
		n       int
		pending *readmeDirective
		cur     *readmeBlock
		body    strings.Builder
	)
	sc := bufio.NewScanner(bytes.NewReader(readme))
	for i := 1; sc.Scan(); i++ {
		line := sc.Text()
		switch {
		case cur != nil && line == "```":
			cur.text = body.String()
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			body.WriteString(line + "\n")
		case strings.HasPrefix(line, "```"):
			n++
			cur = &readmeBlock{name: fmt.Sprintf("%s/%d", heading, n), line: i, lang: strings.TrimPrefix(line, "```")}
			if pending != nil {
				cur.directive = *pending
				pending = nil
			}
			body.Reset()
		case strings.HasPrefix(line, "#"):
			heading = strings.Trim(regexp.MustCompile(`[^A-Za-z0-9]+`).ReplaceAllString(strings.TrimLeft(line, "# "), "_"), "_")
			n = 0
		case readmeDirectiveRE.MatchString(line):
			var d readmeDirective
			dec := json.NewDecoder(strings.NewReader(readmeDirectiveRE.FindStringSubmatch(line)[1]))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&d); err != nil {
				t.Fatalf("README.md:%d: a readme-test directive that does not parse: %v", i, err)
			}
			pending = &d
		case strings.TrimSpace(line) != "" && pending != nil:
			t.Fatalf("README.md:%d: a readme-test directive must come on the line before a code block", i-1)
		}
	}
	if cur != nil {
		t.Fatalf("README.md:%d: a code block is not closed", cur.line)
	}
	return blocks
}

// TestREADME compiles or runs every code block of README.md, so that an
// example that stops working fails: Go programs are built in a module of
// their own that requires this checkout, and run where the directive
// says; shell blocks run with the built toolwire against the npm reference
// servers and a scripted model standing in for the hosted ones. See
// readmeDirective for how a block says what it needs.
func TestREADME(t *testing.T) {
	if testing.Short() {
		t.Skip("builds programs and runs the README's commands")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	env := newReadmeEnv(t, root)
	for _, b := range readmeBlocks(t, readme) {
		t.Run(b.name, func(t *testing.T) {
			if b.directive.Skip != "" {
				t.Skipf("README.md:%d: %s", b.line, b.directive.Skip)
			}
			switch b.lang {
			case "go":
				env.goBlock(t, b)
			case "sh":
				env.shBlock(t, b)
			case "json":
				env.jsonBlock(t, b)
			default:
				t.Fatalf("README.md:%d: no way to test a %q block: give it a readme-test directive", b.line, b.lang)
			}
		})
	}
}

// readmeEnv is what the README's blocks run with.
type readmeEnv struct {
	root   string
	tmp    string   // a directory for the whole test
	bin    string   // a directory holding toolwire, first on PATH
	base   []string // the environment of every command
	config string   // the MCP servers of Servers
}

func newReadmeEnv(t *testing.T, root string) *readmeEnv {
	e := &readmeEnv{root: root, tmp: t.TempDir(), bin: t.TempDir()}
	gobin := filepath.Join(e.tmp, "gobin") // where the README's go install puts toolwire
	if err := os.Symlink(build(t), filepath.Join(e.bin, "toolwire")); err != nil {
		t.Fatal(err)
	}
	// A home of its own, so that no user's configuration, keyring or
	// tokens are read or written; Go's caches stay where they are.
	home := t.TempDir()
	out, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE", "GOPATH").Output()
	if err != nil {
		t.Fatal(err)
	}
	goenv := strings.Fields(string(out))
	e.base = []string{
		"PATH=" + gobin + string(os.PathListSeparator) + e.bin + string(os.PathListSeparator) + os.Getenv("PATH"), "GOBIN=" + gobin,
		"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"GOCACHE=" + goenv[0], "GOMODCACHE=" + goenv[1], "GOPATH=" + goenv[2],
		"TOOLWIRE_TOKEN_STORE=file", "TOOLWIRE_CONFIG=" + filepath.Join(home, "none.json"),
		"TOOLWIRE_MODEL=", "NO_COLOR=1",
	}
	for _, k := range []string{"OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "GEMINI_API_KEY", "GOOGLE_API_KEY", "GEMINI_BASE_URL", "OLLAMA_HOST", "OTEL_EXPORTER_OTLP_ENDPOINT"} {
		e.base = append(e.base, k+"=")
	}
	return e
}

// envFor returns the environment a block's directive asks for.
func (e *readmeEnv) envFor(t *testing.T, d readmeDirective) []string {
	env := append(os.Environ(), e.base...)
	if d.Model {
		m := newReadmeModel(t)
		env = append(env, "OPENAI_API_KEY=test-key", "OPENAI_BASE_URL="+m.URL+"/v1", "OLLAMA_HOST="+m.URL,
			"ANTHROPIC_API_KEY=test-key", "ANTHROPIC_BASE_URL="+m.URL, "GEMINI_API_KEY=test-key", "GEMINI_BASE_URL="+m.URL)
	}
	for k, v := range d.Env {
		env = append(env, k+"="+v)
	}
	if d.Servers {
		env = append(env, "TOOLWIRE_CONFIG="+e.servers(t))
	}
	return env
}

// servers writes the configuration of the README's servers: "files" and
// "everything", the npm reference servers.
func (e *readmeEnv) servers(t *testing.T) string {
	if e.config != "" {
		return e.config
	}
	node := testpeers.Node(t)
	srv := func(pkg string, args ...string) map[string]any {
		return map[string]any{"command": node, "args": append([]string{filepath.Join(testpeers.Package(t, "@modelcontextprotocol/"+pkg), "dist", "index.js")}, args...)}
	}
	cfg, err := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"files":      srv("server-filesystem", os.TempDir()),
		"everything": srv("server-everything"),
	}})
	if err != nil {
		t.Fatal(err)
	}
	e.config = filepath.Join(e.tmp, "servers.json")
	if err := os.WriteFile(e.config, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	return e.config
}

// workdir returns the directory a block runs in, with its files.
func (e *readmeEnv) workdir(t *testing.T, d readmeDirective) string {
	if d.Checkout {
		return e.root
	}
	dir := t.TempDir()
	for name, from := range d.Files {
		b, err := os.ReadFile(filepath.Join(e.root, from))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// shBlock runs a sh block as bash runs a script (-e: the first command
// that fails stops it), or, with Serve, each line as a server.
func (e *readmeEnv) shBlock(t *testing.T, b readmeBlock) {
	d := b.directive
	var script strings.Builder
	omitted := map[string]bool{}
	for _, line := range strings.Split(b.text, "\n") {
		keep := true
		for prefix := range d.Omit {
			if strings.HasPrefix(line, prefix) {
				keep, omitted[prefix] = false, true
			}
		}
		if keep {
			script.WriteString(line + "\n")
		}
	}
	for prefix, why := range d.Omit {
		if !omitted[prefix] {
			t.Errorf("README.md:%d: no line starts with %q, which the directive omits (%s)", b.line, prefix, why)
		}
	}
	env, dir := e.envFor(t, d), e.workdir(t, d)
	if d.Serve {
		for _, line := range strings.Split(strings.TrimSpace(strings.ReplaceAll(script.String(), "\\\n", "")), "\n") {
			e.serveLine(t, b, line, env, dir)
		}
		return
	}
	if strings.Contains(script.String(), "/tmp/notes.txt") {
		readmeNotes(t)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-eo", "pipefail", "-c", script.String())
	cmd.Dir, cmd.Env, cmd.Stdin = dir, env, strings.NewReader("")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("README.md:%d: the block failed: %v\n%s\n--- output:\n%s", b.line, err, script.String(), out)
	}
	t.Logf("output:\n%s", out)
	if !strings.Contains(string(out), d.Stdout) {
		t.Errorf("README.md:%d: the output lacks %q:\n%s", b.line, d.Stdout, out)
	}
}

// readmeNotes makes the /tmp/notes.txt the README reads, unless there is
// one, and removes it at the end if it made it.
func readmeNotes(t *testing.T) {
	const notes = "/tmp/notes.txt"
	f, err := os.OpenFile(notes, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if os.IsExist(err) {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(notes) })
	if _, err := f.WriteString("Notes for the README's example.\n"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// serveLine starts a server as the README starts it (on a free port
// instead of 8080), waits until it accepts connections, and stops it
// with SIGINT, as Ctrl-C does: it must exit with status 0.
func (e *readmeEnv) serveLine(t *testing.T, b readmeBlock, line string, env []string, dir string) {
	ports, err := testpeers.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", ports[0])
	line = strings.ReplaceAll(line, "127.0.0.1:8080", addr)
	var out bytes.Buffer
	cmd := exec.Command("bash", "-c", "exec "+line)
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, env, &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			break
		}
		select {
		case err := <-done:
			t.Fatalf("README.md:%d: %s ended before it served: %v\n%s", b.line, line, err, out.String())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			<-done
			t.Fatalf("README.md:%d: %s did not listen on %s within 30 s\n%s", b.line, line, addr, out.String())
		}
	}
	_ = cmd.Process.Signal(os.Interrupt)
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("README.md:%d: %s, stopped with SIGINT: %v\n%s", b.line, line, err, out.String())
		}
	case <-time.After(15 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Errorf("README.md:%d: %s did not stop within 15 s of SIGINT", b.line, line)
	}
}

// jsonBlock reads a configuration block with toolwire.
func (e *readmeEnv) jsonBlock(t *testing.T, b readmeBlock) {
	d := b.directive
	text, args := b.text, []string{"tools"}
	switch d.Config {
	case "file":
	case "entries":
		text, args = `{"mcpServers": {`+text+`}}`, []string{"servers"}
	default:
		t.Fatalf(`README.md:%d: a json block needs a directive {"config": "file"} or {"config": "entries"}, or a skip`, b.line)
	}
	cfg := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	// The servers the block's own may serve (the gateway's), as
	// TOOLWIRE_CONFIG says.
	d.Servers = true
	cmd := exec.Command(build(t), append(args, "--config", cfg)...)
	cmd.Env, cmd.Dir = e.envFor(t, d), t.TempDir()
	out, err := cmd.CombinedOutput()
	if err != nil || strings.Contains(string(out), "warning") {
		t.Fatalf("README.md:%d: toolwire %s with the block as its configuration: %v\n%s", b.line, args[0], err, out)
	}
	if !strings.Contains(string(out), d.Stdout) {
		t.Errorf("README.md:%d: the output lacks %q:\n%s", b.line, d.Stdout, out)
	}
}

// goBlock builds a go block as a program in a module of its own that
// requires this checkout, and runs it when the directive says.
func (e *readmeEnv) goBlock(t *testing.T, b readmeBlock) {
	d := b.directive
	if !strings.HasPrefix(b.text, "package main\n") {
		t.Fatalf("README.md:%d: a go block must be a whole program (package main), or say why not with a skip", b.line)
	}
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("main.go", b.text)
	if out, err := exec.Command("gofmt", "-l", filepath.Join(dir, "main.go")).CombinedOutput(); err != nil || len(out) > 0 {
		t.Errorf("README.md:%d: the program is not formatted as gofmt formats it: %v %s", b.line, err, out)
	}
	write("go.mod", "module example.com/readme\n\ngo 1.26.0\n\nrequire github.com/toolwire/toolwire v0.0.0\n")
	sum, err := os.ReadFile(filepath.Join(e.root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	write("go.sum", string(sum))
	// The checkout, and the modules it replaces, as its own go.mod says.
	var mod struct {
		Replace []struct {
			Old struct{ Path string }
			New struct{ Path, Version string }
		}
	}
	out, err := exec.Command("go", "mod", "edit", "-json", filepath.Join(e.root, "go.mod")).Output()
	if err != nil || json.Unmarshal(out, &mod) != nil {
		t.Fatalf("reading go.mod: %v", err)
	}
	edit := []string{"mod", "edit", "-replace", "github.com/toolwire/toolwire=" + e.root}
	for _, r := range mod.Replace {
		to := r.New.Path
		if r.New.Version != "" {
			to += "@" + r.New.Version
		} else if !filepath.IsAbs(to) {
			to = filepath.Join(e.root, to)
		}
		edit = append(edit, "-replace", r.Old.Path+"="+to)
	}
	goCmd := func(args ...string) {
		t.Helper()
		cmd := exec.Command("go", args...)
		cmd.Dir, cmd.Env = dir, append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off", "GOPROXY=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("README.md:%d: go %s: %v\n%s", b.line, strings.Join(args, " "), err, out)
		}
	}
	goCmd(edit...)
	goCmd("build", "-o", "prog", ".")
	prog := filepath.Join(dir, "prog")
	switch {
	case d.MCP != nil:
		cfg, err := json.Marshal(map[string]any{"mcpServers": map[string]any{"demo": map[string]any{"command": prog}}})
		if err != nil {
			t.Fatal(err)
		}
		write("mcp.json", string(cfg))
		e.runProgram(t, b, build(t), "call", "--config", filepath.Join(dir, "mcp.json"), d.MCP.Call, d.MCP.Args)
		if d.MCP.HTTP != "" {
			e.callOverHTTP(t, b, prog, dir)
		}
	case d.Run:
		e.runProgram(t, b, prog)
	}
}

// callOverHTTP starts an MCP server program with its HTTP flag on a free
// port, calls it with toolwire call, and stops it with SIGINT: it must
// exit with status 0.
func (e *readmeEnv) callOverHTTP(t *testing.T, b readmeBlock, prog, dir string) {
	ports, err := testpeers.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", ports[0])
	var out bytes.Buffer
	srv := exec.Command(prog, b.directive.MCP.HTTP, addr)
	srv.Stdout, srv.Stderr = &out, &out
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Wait() }()
	defer func() {
		_ = srv.Process.Signal(os.Interrupt)
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("README.md:%d: the program over HTTP, stopped with SIGINT: %v\n%s", b.line, err, out.String())
			}
		case <-time.After(15 * time.Second):
			_ = srv.Process.Kill()
			<-done
			t.Errorf("README.md:%d: the program over HTTP did not stop within 15 s of SIGINT", b.line)
		}
	}()
	cfg, err := json.Marshal(map[string]any{"mcpServers": map[string]any{"demo": map[string]any{"url": "http://" + addr + "/mcp"}}})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "http.json")
	if err := os.WriteFile(file, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("README.md:%d: the program did not listen on %s within 30 s\n%s", b.line, addr, out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	d := b.directive
	d.Stdout = d.MCP.HTTPStdout
	e.runProgram(t, readmeBlock{line: b.line, directive: d}, build(t), "call", "--config", file, d.MCP.Call, d.MCP.Args)
}

// runProgram runs a program with the block's environment and checks its
// exit status and output.
func (e *readmeEnv) runProgram(t *testing.T, b readmeBlock, name string, args ...string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env, cmd.Dir = e.envFor(t, b.directive), t.TempDir()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("README.md:%d: %s %s: %v\n%s", b.line, filepath.Base(name), strings.Join(args, " "), err, out)
	}
	if !strings.Contains(string(out), b.directive.Stdout) {
		t.Errorf("README.md:%d: the output lacks %q:\n%s", b.line, b.directive.Stdout, out)
	}
}

// readmeAnswer is what the scripted model answers a task it has no
// script for.
const readmeAnswer = "The scripted model's answer."

// newReadmeModel starts a model server that speaks OpenAI's Chat
// Completions (streamed) and Ollama's /api/chat. It answers every task
// with readmeAnswer, except the README's data task, for which it calls
// load_csv, drop_missing and describe in turn, each on the table the
// previous call returned, as a model would.
func newReadmeModel(t *testing.T) *httptest.Server {
	handle := regexp.MustCompile(`tbl_[A-Za-z0-9_-]+`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		body, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(body, &req); err != nil {
			http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
			return
		}
		var task string
		var calls int
		var tables []string
		for _, m := range req.Messages {
			switch m.Role {
			case "user":
				if task == "" {
					task = string(m.Content)
				}
			case "assistant":
				calls++
			case "tool":
				tables = append(tables, handle.FindAllString(string(m.Content), -1)...)
			}
		}
		var tool, args string
		if strings.Contains(task, "Load sales.csv") && calls < 3 {
			tool = []string{"load_csv", "drop_missing", "describe"}[calls]
			args = `{"path": "sales.csv"}`
			if calls > 0 && len(tables) > 0 {
				args = fmt.Sprintf(`{"table": %q}`, tables[len(tables)-1])
			}
		}
		if r.URL.Path == "/api/chat" { // Ollama, text only
			w.Header().Set("Content-Type", "application/x-ndjson")
			fmt.Fprintf(w, `{"message":{"role":"assistant","content":%q},"done":false}`+"\n", readmeAnswer)
			fmt.Fprint(w, `{"message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","prompt_eval_count":10,"eval_count":5}`+"\n")
			return
		}
		if r.URL.Path != "/v1/chat/completions" || !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ") {
			http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		if tool != "" {
			call, _ := json.Marshal(map[string]any{"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"role": "assistant", "tool_calls": []any{
				map[string]any{"index": 0, "id": fmt.Sprintf("call_%d", calls), "type": "function", "function": map[string]any{"name": tool, "arguments": args}}}}}}})
			fmt.Fprintf(w, "data: %s\n\n", call)
			fmt.Fprint(w, `data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":10,"completion_tokens":5}}`+"\n\n")
		} else {
			fmt.Fprintf(w, `data: {"choices":[{"index":0,"delta":{"role":"assistant","content":%q}}]}`+"\n\n", readmeAnswer)
			fmt.Fprint(w, `data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":5}}`+"\n\n")
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv
}
