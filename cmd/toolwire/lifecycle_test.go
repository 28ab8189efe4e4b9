package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestDataToolsetClosed: every command that opens the data toolset
// closes it when it ends, however it ends (done, failed, its input
// closed, SIGTERM, SIGINT): no toolwire-data-* temporary directory stays
// behind, its own or that of the toolwire serve data it started as a
// configured server.
func TestDataToolsetClosed(t *testing.T) {
	seed, err := filepath.Abs(filepath.Join("..", "..", "examples", "seed000.json"))
	if err != nil {
		t.Fatal(err)
	}
	sales, err := os.ReadFile(filepath.Join("..", "..", "testdata", "data", "sales.csv"))
	if err != nil {
		t.Fatal(err)
	}
	// A model that answers at once (and refuses a wrong key), one that
	// never does.
	answers := newScriptedModel(t, `{"choices":[{"index":0,"delta":{"content":"Nothing to do."}}]}
{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`)
	stuck := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // so that the request's context ends with its connection
		<-r.Context().Done()
	}))
	t.Cleanup(stuck.Close)
	model := func(url string) []string {
		return []string{"OPENAI_API_KEY=test-key", "OPENAI_BASE_URL=" + url + "/v1"}
	}
	// A configured server that is toolwire serving data (and calc).
	self, _ := json.Marshal(map[string]any{"command": build(t), "args": []string{"serve", "data", "calc"}})
	dataServer := writeConfig(t, map[string]string{"d": string(self)})
	// A workflow that names tools the data toolset has not.
	notData := filepath.Join(t.TempDir(), "calc.json")
	if err := os.WriteFile(notData, []byte(`{"version": "toolwire.workflow/v1", "name": "calc", "nodes": [{"id": "c", "tool": "calculate",
		"input_parameters": [{"name": "expression", "type": "str", "value": "1+1"}]}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	// A port in use.
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	sigterm := func(cmd *exec.Cmd, _ io.Closer) { _ = cmd.Process.Signal(syscall.SIGTERM) }
	sigint := func(cmd *exec.Cmd, _ io.Closer) { _ = cmd.Process.Signal(syscall.SIGINT) }
	for _, c := range []struct {
		name string
		args []string
		env  []string
		// stdin is written to the command, then closed.
		stdin string
		// stop ends the command once it runs; nil: it ends by itself.
		stop func(*exec.Cmd, io.Closer)
		// ready is a line the command prints once it serves; "": the
		// temporary directory exists.
		ready string
		// fails: the command ends with an error (by itself).
		fails bool
		// want is in its output when the data toolset was open.
		want string
	}{
		{name: "workflow validate", args: []string{"workflow", "validate", "--toolsets=data", seed}, want: "fits the tools"},
		{name: "workflow validate, does not fit", args: []string{"workflow", "validate", "--toolsets=data", notData}, fails: true, want: "calculate"},
		{name: "workflow run", args: []string{"workflow", "run", "--toolsets=data", seed, "--set", "path=sales.csv"}, want: `"rows"`},
		{name: "workflow run, does not fit", args: []string{"workflow", "run", "--toolsets=data", notData}, fails: true, want: "calculate"},
		{name: "serve data, stdin closed", args: []string{"serve", "data"},
			stop: func(_ *exec.Cmd, stdin io.Closer) { stdin.Close() }},
		{name: "serve data, SIGTERM", args: []string{"serve", "data"}, stop: sigterm},
		{name: "serve data --http, SIGTERM", args: []string{"serve", "data", "--http", "127.0.0.1:0"}, ready: "toolwire: serving", stop: sigterm},
		{name: "serve data --http, SIGINT", args: []string{"serve", "data", "--http", "127.0.0.1:0"}, ready: "toolwire: serving", stop: sigint},
		{name: "serve data --http, port in use", args: []string{"serve", "data", "--http", busy.Addr().String()}, fails: true, want: "cannot listen"},
		{name: "serve data twice", args: []string{"serve", "data", "data"}, fails: true, want: "toolset data:"},
		{name: "tools of a server serving data", args: []string{"tools", "--config", dataServer}, want: "d__load_csv"},
		{name: "call a tool of a server serving data", args: []string{"call", "--config", dataServer, "d__calculate", `{"expression": "6*7"}`}, want: "42"},
		{name: "run", args: []string{"run", "--toolsets=data", "-m", "openai:test-model", "hi"}, env: model(answers.URL), want: "Nothing to do."},
		{name: "run, the model fails", args: []string{"run", "--toolsets=data", "-m", "openai:test-model", "hi"}, env: []string{"OPENAI_API_KEY=wrong", "OPENAI_BASE_URL=" + answers.URL + "/v1"},
			fails: true, want: "bad request"},
		{name: "run, SIGINT while the model thinks", args: []string{"run", "--toolsets=data", "-m", "openai:test-model", "hi"}, env: model(stuck.URL), stop: sigint},
		{name: "run, SIGTERM while the model thinks", args: []string{"run", "--toolsets=data", "-m", "openai:test-model", "hi"}, env: model(stuck.URL), stop: sigterm},
		{name: "chat, input ends", args: []string{"chat", "--toolsets=data", "-m", "openai:test-model"}, env: model(answers.URL), stdin: "/tools\n", want: "load_csv"},
		{name: "chat, SIGTERM while it waits for input", args: []string{"chat", "--toolsets=data", "-m", "openai:test-model"}, env: model(answers.URL), stop: sigterm},
	} {
		t.Run(c.name, func(t *testing.T) {
			tmp, home := t.TempDir(), t.TempDir()
			cmd := exec.Command(build(t), c.args...)
			cmd.Dir = t.TempDir()
			if err := os.WriteFile(filepath.Join(cmd.Dir, "sales.csv"), sales, 0o644); err != nil {
				t.Fatal(err)
			}
			// No configuration but the one given, no cached state.
			cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "HOME="+home, "XDG_CONFIG_HOME=", "XDG_CACHE_HOME=", "TOOLWIRE_CONFIG=", "TOOLWIRE_MODEL=", "GORACE=atexit_sleep_ms=0")
			cmd.Env = append(cmd.Env, c.env...)
			stdin, stdout, stderr := startPiped(t, cmd)
			lines := make(chan string, 100)
			var out syncBuffer
			go func() {
				sc := bufio.NewScanner(stdout)
				for sc.Scan() {
					out.Write([]byte(sc.Text() + "\n"))
					lines <- sc.Text()
				}
				close(lines)
			}()
			if c.stop != nil {
				waitForTemp(t, tmp)
				if c.ready != "" {
					if line := <-lines; !strings.HasPrefix(line, c.ready) {
						t.Fatalf("the server said %q\n%s", line, stderr.String())
					}
				}
				c.stop(cmd, stdin)
				// A command that does not end is killed, and leaves its
				// directory behind.
				kill := time.AfterFunc(30*time.Second, func() { _ = cmd.Process.Kill() })
				defer kill.Stop()
			} else {
				_, _ = io.WriteString(stdin, c.stdin)
				stdin.Close()
			}
			for range lines { // all of stdout read before Wait closes it
			}
			err = cmd.Wait()
			if c.stop == nil && (err != nil) != c.fails {
				t.Fatalf("%s: exit %v, want failure %v\n%s%s", c.name, err, c.fails, out.String(), stderr.String())
			}
			if !strings.Contains(out.String()+stderr.String(), c.want) {
				t.Errorf("%s did not say %q: was the data toolset open?\n%s%s", c.name, c.want, out.String(), stderr.String())
			}
			if left, _ := filepath.Glob(filepath.Join(tmp, "toolwire-data-*")); len(left) > 0 {
				t.Errorf("%s left %v (exit: %v)\n%s", c.name, left, err, stderr.String())
			}
		})
	}
}

// TestOpenToolsetsClosesOnError: when a toolset fails to open, those
// opened before it are closed.
func TestOpenToolsetsClosesOnError(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	t.Chdir(t.TempDir())
	opened, err := openToolsets(t.Context(), []string{"data", "calc", "nope"}, dataOptions{maxMemory: -1}.toolsetOptions)
	if err == nil {
		opened.Close()
		t.Fatal("opened an unknown toolset")
	}
	if !strings.Contains(err.Error(), `unknown toolset "nope"`) {
		t.Errorf("error %q does not name the toolset", err)
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "toolwire-data-*")); len(left) > 0 {
		t.Errorf("data was left open: %v", left)
	}
}

// waitForTemp waits until a toolset's temporary directory is in dir: at
// most 60 s.
func waitForTemp(t *testing.T, dir string) {
	t.Helper()
	for range 600 {
		if m, _ := filepath.Glob(filepath.Join(dir, "toolwire-data-*")); len(m) > 0 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("the command made no temporary directory for the data toolset")
}
