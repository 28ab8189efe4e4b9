package data

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/tool"
)

// env is a toolset on a temporary directory, called through a registry as
// an agent or the MCP server calls it.
type env struct {
	t   testing.TB
	dir string
	ts  *Toolset
	reg *tool.Registry
	ctx context.Context
}

func newEnv(t testing.TB, cfg Config) *env {
	t.Helper()
	dir := t.TempDir()
	if cfg.Dirs == nil {
		cfg.Dirs = []string{dir}
	}
	ts, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ts.Close() })
	var reg tool.Registry
	if err := reg.Add(ts.Tools()...); err != nil {
		t.Fatal(err)
	}
	real, _ := filepath.EvalSymlinks(dir)
	return &env{t: t, dir: real, ts: ts, reg: &reg, ctx: tool.WithCaller(context.Background(), tool.Caller{ID: "token:test"})}
}

func (e *env) write(name, content string) string {
	e.t.Helper()
	p := filepath.Join(e.dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
	return p
}

// call calls a tool and returns what the model reads, or the error.
func (e *env) call(name string, args any) (string, error) {
	e.t.Helper()
	b, err := json.Marshal(args)
	if err != nil {
		e.t.Fatal(err)
	}
	res, err := e.reg.Call(e.ctx, name, b)
	if err != nil {
		if errors.Is(err, tool.ErrFatal) {
			e.t.Fatalf("%s: fatal error %v", name, err)
		}
		return "", err
	}
	return res.ForModel().Text, nil
}

// must calls a tool that must succeed.
func (e *env) must(name string, args any) string {
	e.t.Helper()
	out, err := e.call(name, args)
	if err != nil {
		e.t.Fatalf("%s(%v): %v", name, args, err)
	}
	return out
}

// load loads a CSV file and returns the table's handle and summary.
func (e *env) load(path string) (string, TableInfo) {
	e.t.Helper()
	out := e.must("load_csv", map[string]any{"path": path})
	return tableOf(e.t, out)
}

func tableOf(t testing.TB, out string) (string, TableInfo) {
	t.Helper()
	var raw struct {
		Table string `json:"table"`
	}
	var info TableInfo
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatalf("result %q: %v", out, err)
	}
	_ = json.Unmarshal([]byte(out), &info)
	if !strings.HasPrefix(raw.Table, "tbl_") {
		t.Fatalf("result %q has no table handle", out)
	}
	return raw.Table, info
}
