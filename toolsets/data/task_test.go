package data

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/tool"
)

// A query that runs past the server's threshold becomes a task of the
// Tasks extension, which toolwire's client follows to the result.
func TestQueryAsTask(t *testing.T) {
	e := newEnv(t, Config{})
	csv := e.write("sales.csv", "region,amount\nnorth,10\nsouth,20\nnorth,5\n")
	var q tool.Tool
	for _, tl := range e.ts.Tools() {
		if tl.Info().Name == "query" {
			q = tl
		}
	}
	if x := q.Info().Execution; x == nil || x.TaskSupport != tool.TaskOptional {
		t.Fatalf("query's execution: %+v", x)
	}
	store := &mcp.MemoryTaskStore{}
	srv := &mcp.Server{Info: mcp.Implementation{Name: "data", Version: "1"}, Tasks: mcp.TaskOptions{Store: store, After: time.Nanosecond, PollInterval: 20 * time.Millisecond}}
	if err := srv.AddTools(e.ts.Tools()...); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cs, err := (&mcp.Client{Info: mcp.Implementation{Name: "t", Version: "1"}}).Connect(ctx, &mcp.InMemoryTransport{Server: srv})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	h, _ := tableOf(t, mustTool(t, cs, "load_csv", map[string]any{"path": csv}))
	if n := store.Len(); n != 0 {
		t.Fatalf("load_csv made %d tasks", n)
	}
	out := mustTool(t, cs, "query", map[string]any{"sql": "SELECT region, sum(amount) AS total FROM s GROUP BY region ORDER BY region", "tables": map[string]string{"s": h}})
	if n := store.Len(); n != 1 {
		t.Errorf("the query made %d tasks, want 1", n)
	}
	if !json.Valid([]byte(out)) || !strings.Contains(out, "north") || !strings.Contains(out, "15") {
		t.Errorf("query result %s", out)
	}
}
