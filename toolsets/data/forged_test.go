package data

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/handle"
	"github.com/toolwire/toolwire/internal/testredis"
)

// TestForgedRedisEntries: whoever reaches Redis may write its entries,
// so each field of a table read back from it is input the server checks
// before use. Replicas (`toolwire serve data --http --data-dir --redis`)
// get entries forged field by field under handles of their caller: each
// is refused as corrupt (or, for a column type, not trusted), no file
// outside the data directory is removed or read, and no SQL from the
// entry runs.
func TestForgedRedisEntries(t *testing.T) {
	rds := testredis.Start(t)
	root := t.TempDir()
	work, dataDir, outside := filepath.Join(root, "work"), filepath.Join(root, "data"), filepath.Join(root, "outside")
	for _, d := range []string{work, dataDir, outside} {
		must(t, os.Mkdir(d, 0o755))
	}
	root, _ = filepath.EvalSymlinks(root)
	work, outside = filepath.Join(root, "work"), filepath.Join(root, "outside")
	must(t, os.WriteFile(filepath.Join(work, "sales.csv"), []byte(sales), 0o644))
	victim := filepath.Join(outside, "victim.parquet")
	must(t, os.WriteFile(victim, []byte("not yours"), 0o644))
	secret := filepath.Join(outside, "secret.csv")
	must(t, os.WriteFile(secret, []byte("secret\ns3cr3t\n"), 0o644))
	must(t, os.Symlink(secret, filepath.Join(work, "link.csv")))

	s := startServer(t, work, "--data-dir", dataDir, "--redis", rds.Addr)
	alice := connect(t, s.url, "alice")
	h, _ := tableOf(t, mustTool(t, alice, "load_csv", map[string]any{"path": "sales.csv"}))
	key := "toolwire:handle:" + h
	owner, err := rds.Do("HGET", key, "owner")
	must(t, err)
	stored, err := rds.Do("HGET", key, "value")
	must(t, err)

	// parquet is the entry of the table loaded, with changes; file, an
	// entry of a CSV file read where it is.
	parquet := func(change func(map[string]any)) string {
		var v map[string]any
		must(t, json.Unmarshal([]byte(stored), &v))
		change(v)
		b, _ := json.Marshal(v)
		return string(b)
	}
	file := func(path string, csv map[string]any, options string) string {
		fi, err := os.Stat(path)
		must(t, err)
		b, _ := json.Marshal(map[string]any{
			"name": "f_" + strings.Repeat("ab", 12), "rows": 1, "columns": []map[string]string{{"name": "secret", "type": "VARCHAR"}},
			"file": map[string]any{"path": path, "csv": csv, "options": options, "size": fi.Size(), "modTime": fi.ModTime()},
		})
		return string(b)
	}
	sales := filepath.Join(work, "sales.csv")
	injected := sqlString(sales) + ") UNION ALL (SELECT 'INJECTED', 'x', 'x', 1, 1"
	refused := func(text string, isErr bool) error {
		if !isErr || !strings.Contains(text, "corrupt") || !strings.Contains(text, "load the file again") {
			return fmt.Errorf("not refused as corrupt: %q", text)
		}
		return nil
	}
	for _, c := range []struct {
		name  string
		value string
		size  string
		tool  string
		args  map[string]any
		want  func(text string, isErr bool) error
	}{
		{name: "name out of the data directory, released", tool: "release",
			value: parquet(func(v map[string]any) { v["name"] = "../outside/victim" })},
		{name: "name out of the data directory, read", tool: "head",
			value: parquet(func(v map[string]any) { v["name"] = "../outside/victim" })},
		{name: "name quoted into SQL", tool: "describe",
			value: parquet(func(v map[string]any) { v["name"] = `t_x') UNION ALL (SELECT 'INJECTED'` })},
		{name: "name of a file table without its file", tool: "head",
			value: parquet(func(v map[string]any) { v["name"] = "f_" + strings.Repeat("0", 24) })},
		{name: "rows negative", tool: "describe",
			value: parquet(func(v map[string]any) { v["rows"] = -1 })},
		{name: "column without a type", tool: "describe",
			value: parquet(func(v map[string]any) { v["columns"] = []map[string]string{{"name": "units", "type": ""}} })},
		{name: "column type pasted into SQL", tool: "filter", args: map[string]any{"column": "units", "op": "gt", "value": 100},
			value: parquet(func(v map[string]any) {
				v["columns"] = []map[string]string{{"name": "units", "type": "BIGINT) OR (true"}}
			}),
			want: func(text string, isErr bool) error {
				if isErr || !strings.Contains(text, `"rows":0`) {
					return fmt.Errorf("filter units > 100 on a table whose stored type says SQL: %q, want 0 rows", text)
				}
				return nil
			}},
		{name: "file outside the allowed directories", tool: "head", value: file(secret, map[string]any{}, sqlString(secret))},
		{name: "file path not clean", tool: "head",
			value: file(work+"/../outside/secret.csv", map[string]any{}, sqlString(work+"/../outside/secret.csv"))},
		{name: "file through a symlink out", tool: "head",
			value: file(filepath.Join(work, "link.csv"), map[string]any{}, sqlString(filepath.Join(work, "link.csv")))},
		{name: "read_csv options: delimiter", tool: "head",
			value: file(sales, map[string]any{"delim": "'); SELECT 'INJECTED' --", "columns": []string{"a"}}, injected)},
		{name: "read_csv options: encoding", tool: "head",
			value: file(sales, map[string]any{"encoding": "utf-8') UNION ALL (SELECT 'INJECTED'"}, injected)},
		{name: "read_csv options: columns without a delimiter", tool: "head",
			value: file(sales, map[string]any{"columns": []string{"a"}}, injected)},
		{name: "value not JSON", tool: "describe", value: `{"name":`},
		{name: "size negative", tool: "describe", value: stored, size: "-1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			id := handle.NewID((*Table)(nil).HandleKind())
			size := c.size
			if size == "" {
				size = "100"
			}
			if _, err := rds.Do("HSET", "toolwire:handle:"+id, "owner", owner, "value", c.value, "size", size); err != nil {
				t.Fatal(err)
			}
			args := map[string]any{"table": id}
			for k, v := range c.args {
				args[k] = v
			}
			text, isErr := callTool(t, alice, c.tool, args)
			want := c.want
			if want == nil {
				want = refused
			}
			if err := want(text, isErr); err != nil {
				t.Error(err)
			}
			if strings.Contains(text, "INJECTED") || strings.Contains(text, "s3cr3t") {
				t.Errorf("%s read what the entry injected: %q", c.tool, text)
			}
		})
	}
	if b, err := os.ReadFile(victim); err != nil || string(b) != "not yours" {
		t.Errorf("the file outside the data directory: %q, %v", b, err)
	}
	// The server is up, and the real table as it was.
	mustTool(t, alice, "describe", map[string]any{"table": h})
}
