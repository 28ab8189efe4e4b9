package interop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/testpeers"
)

// nodeTimeout bounds every Node process a test starts.
const nodeTimeout = 60 * time.Second

// nodeEnv locates the pinned npm test peers under the module root.
type nodeEnv struct {
	root        string // the module root (holds go.mod)
	node        string // the Node 22 executable
	nodeModules string // .cache/npm/node_modules
	sdkVersion  string // version of @modelcontextprotocol/sdk installed
}

// findNodeEnv finds Node and the TypeScript SDK the tests run.
func findNodeEnv(t *testing.T) nodeEnv {
	t.Helper()
	env := nodeEnv{root: testpeers.Root(t), node: testpeers.Node(t), nodeModules: testpeers.Modules(t)}
	pkg := filepath.Join(testpeers.Package(t, "@modelcontextprotocol/sdk"), "package.json")
	b, err := os.ReadFile(pkg)
	if err != nil {
		t.Fatal(err)
	}
	var meta struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(b, &meta); err != nil {
		t.Fatalf("reading %s: %v", pkg, err)
	}
	env.sdkVersion = meta.Version
	return env
}

// stageScript copies testdata/name into a fresh directory beside a
// node_modules link to the pinned packages, and returns the copy's path.
// ES modules ignore NODE_PATH and resolve bare imports from the importing
// file's directory upwards, so the script must sit next to node_modules.
func stageScript(t *testing.T, env nodeEnv, name string) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(env.nodeModules, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, name)
	if err := os.WriteFile(dst, src, 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}

// buildToolwire builds cmd/toolwire into a temporary directory, with the
// race detector when the test itself runs with it, and returns its path.
func buildToolwire(t *testing.T, root string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "toolwire")
	args := []string{"build", "-o", bin}
	if raceEnabled {
		args = append(args, "-race")
	}
	args = append(args, "./cmd/toolwire")
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return bin
}

// runNode runs node with the staged script and arguments, bounded by
// nodeTimeout, and returns its stdout and stderr. The process is killed
// (by its PID) when the time runs out or the test ends.
func runNode(t *testing.T, env nodeEnv, script string, args ...string) (stdout, stderr []byte, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), nodeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, env.node, append([]string{script}, args...)...)
	cmd.Dir = filepath.Dir(script)
	cmd.WaitDelay = 5 * time.Second
	var out, errOut bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &errOut
	err = cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("node did not finish within %v: %w", nodeTimeout, err)
	}
	return out.Bytes(), errOut.Bytes(), err
}

// startServeHTTP runs `toolwire serve --http 127.0.0.1:0` until the test
// ends and returns the Streamable HTTP URL it prints. On cleanup the
// server is interrupted, waited for, and its stderr checked for data races.
func startServeHTTP(t *testing.T, bin string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "serve", "--http", "127.0.0.1:0")
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 5 * time.Second // then killed
	pr, pw := io.Pipe()
	cmd.Stdout = pw
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("starting %s serve --http: %v", bin, err)
	}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		first := true
		for sc.Scan() {
			if first {
				lines <- sc.Text()
				first = false
			}
		}
		close(lines)
	}()
	done := make(chan error, 1)
	go func() {
		err := cmd.Wait()
		pw.Close()
		done <- err
	}()
	t.Cleanup(func() {
		cancel()
		// Wait reports the cancellation even when the server shut down
		// cleanly on the interrupt; only an unclean exit is a failure.
		if err := <-done; err != nil && !cmd.ProcessState.Success() {
			t.Errorf("toolwire serve --http did not shut down cleanly on interrupt: %v\nstderr:\n%s", err, stderr.Bytes())
		}
		checkNoRace(t, "toolwire serve --http", stderr.Bytes())
	})
	select {
	case line, ok := <-lines:
		if !ok {
			t.Fatalf("toolwire serve --http printed nothing and ended")
		}
		// "toolwire: serving 4 tools at http://127.0.0.1:PORT/mcp (legacy SSE clients: /sse)"
		for _, f := range strings.Fields(line) {
			if strings.HasPrefix(f, "http://127.0.0.1:") && strings.HasSuffix(f, "/mcp") {
				return f
			}
		}
		t.Fatalf("no http://127.0.0.1:PORT/mcp URL in toolwire serve --http's first line: %q", line)
	case <-time.After(30 * time.Second):
		t.Fatal("toolwire serve --http printed no address within 30s")
	}
	return ""
}

// checkNoRace fails the test if a race-enabled toolwire reported a race.
func checkNoRace(t *testing.T, what string, stderr []byte) {
	t.Helper()
	if bytes.Contains(stderr, []byte("WARNING: DATA RACE")) {
		t.Errorf("%s reported a data race:\n%s", what, stderr)
	}
}
