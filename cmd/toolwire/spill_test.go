package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/toolwire/toolwire/internal/testpeers"
)

// handleModel is an OpenAI-compatible model server that follows a plan:
// at each request it calls the next tool of the plan, where {handle} in
// the arguments stands for the last result handle (res_…) a tool result
// showed it, and at the end it answers. It keeps every tool result it
// was sent, by call id, as the model saw it.
type handleModel struct {
	*httptest.Server
	mu      sync.Mutex
	results map[string]string
}

var resultHandle = regexp.MustCompile(`res_[A-Za-z0-9_-]{22}`)

func newHandleModel(t *testing.T, plan [][2]string, answer string) *handleModel {
	t.Helper()
	m := &handleModel{results: map[string]string{}}
	m.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var body struct {
			Messages []struct {
				Role       string `json:"role"`
				Content    any    `json:"content"`
				ToolCallID string `json:"tool_call_id"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(b, &body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		m.mu.Lock()
		handle, calls := "", 0
		for _, msg := range body.Messages {
			if msg.Role != "tool" {
				continue
			}
			calls++
			text, _ := msg.Content.(string)
			m.results[msg.ToolCallID] = text
			if h := resultHandle.FindString(text); h != "" {
				handle = h
			}
		}
		m.mu.Unlock()
		streamPlanStep(w, plan, calls, "{handle}", handle, answer)
	}))
	t.Cleanup(m.Close)
	return m
}

// seen returns the bytes of tool results the model was shown, each
// counted once, and how many.
func (m *handleModel) seen() (bytes, n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, r := range m.results {
		bytes += len(r)
	}
	return bytes, len(m.results)
}

// bigCSV writes a CSV of about size bytes, every line different.
func bigCSV(t *testing.T, path string, size int) []byte {
	t.Helper()
	var b strings.Builder
	b.WriteString("id,city,amount,note\n")
	cities := []string{"Zürich", "Tōkyō", "São Paulo", "Kraków", "Reykjavík"}
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "%d,%s,%d.%02d,\"row %d, \"\"quoted\"\" \\ tab\t\"\n", i, cities[i%len(cities)], i*37%100000, i%100, i)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return []byte(b.String())
}

// TestSpillAcrossForeignServers is issue 22's acceptance 1 through
// toolwire run: server-filesystem (npm, knows nothing of handles) reads
// a 5 MB CSV; the model sees a preview with a handle and passes the
// handle as write_file's content; the file written equals the original
// byte for byte, and the tool results the model saw total at most 1% of
// the file's size.
func TestSpillAcrossForeignServers(t *testing.T) {
	node := testpeers.Node(t)
	pkg := testpeers.Package(t, "@modelcontextprotocol/server-filesystem")
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	in, out := filepath.Join(dir, "big.csv"), filepath.Join(dir, "copy.csv")
	orig := bigCSV(t, in, 5<<20)
	server, _ := json.Marshal(map[string]any{"command": node, "args": []string{filepath.Join(pkg, "dist", "index.js"), dir}})
	cfg := writeConfig(t, map[string]string{"files": string(server)})
	m := newHandleModel(t, [][2]string{
		{"files__read_text_file", fmt.Sprintf(`{"path":%q}`, in)},
		{"files__write_file", fmt.Sprintf(`{"path":%q,"content":"{handle}"}`, out)},
	}, "Copied.")
	r := runEnv(t, []string{"OPENAI_API_KEY=k", "OPENAI_BASE_URL=" + m.URL + "/v1"}, "",
		// --allow-dir: the run gives its roots to server-filesystem, which
		// then uses them instead of the directory it was started with.
		"run", "--config", cfg, "--toolsets=", "--yes", "--allow-dir", dir, "-m", "openai:test", "Copy "+in+" to "+out+".")
	if r.code != 0 || !strings.Contains(r.stdout, "Copied.") {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(orig) {
		t.Fatalf("the copy has %d bytes, the original %d: they differ", len(got), len(orig))
	}
	seen, n := m.seen()
	t.Logf("file: %d bytes; tool results the model saw: %d in %d results (%.3f%%)", len(orig), seen, n, 100*float64(seen)/float64(len(orig)))
	if n != 2 || seen > len(orig)/100 {
		t.Errorf("the model saw %d bytes of %d tool results, want 2 results and at most 1%% of %d bytes", seen, n, len(orig))
	}
}
