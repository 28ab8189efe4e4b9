package host

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestProjectConfigs(t *testing.T) {
	tests := []struct {
		name  string
		files []string // made under a temporary directory; a trailing / makes a directory
		dir   string   // where to search from
		want  []string
	}{
		{"none", []string{"repo/.git/", "repo/sub/"}, "repo/sub", nil},
		{"Claude Code's, then VS Code's", []string{"repo/.git/", "repo/.mcp.json", "repo/.vscode/mcp.json"}, "repo",
			[]string{"repo/.mcp.json", "repo/.vscode/mcp.json"}},
		{"nearest first, up to the repository root", []string{"repo/.git/", "repo/.mcp.json", "repo/a/b/.vscode/mcp.json", "repo/a/.mcp.json"}, "repo/a/b",
			[]string{"repo/a/b/.vscode/mcp.json", "repo/a/.mcp.json", "repo/.mcp.json"}},
		{"not above the repository root", []string{".mcp.json", "repo/.git/", "repo/sub/"}, "repo/sub", nil},
		{"a worktree's .git file", []string{".mcp.json", "wt/.git", "wt/sub/"}, "wt/sub", nil},
		{"outside a repository, only the directory itself", []string{".mcp.json", "a/.mcp.json", "a/b/"}, "a",
			[]string{"a/.mcp.json"}},
		{"outside a repository, not the parents", []string{".mcp.json", "a/b/"}, "a/b", nil},
		{"a directory named .mcp.json is no file", []string{"repo/.git/", "repo/.mcp.json/"}, "repo", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			top := t.TempDir()
			for _, f := range tt.files {
				p := filepath.Join(top, f)
				if strings.HasSuffix(f, "/") {
					if err := os.MkdirAll(p, 0o755); err != nil {
						t.Fatal(err)
					}
					continue
				}
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(`{"mcpServers": {}}`), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var got []string
			for _, c := range ProjectConfigs(filepath.Join(top, tt.dir)) {
				rel, _ := filepath.Rel(top, c.Path)
				got = append(got, filepath.ToSlash(rel))
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ProjectConfigs = %q, want %q", got, tt.want)
			}
		})
	}
}
