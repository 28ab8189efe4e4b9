package host

import (
	"strings"
	"testing"
)

// Configurations as VS Code and the other apps accept them: JSON with
// comments and trailing commas, under "mcpServers" or VS Code's "servers".
func TestParseConfigJSONC(t *testing.T) {
	lookup := func(string) (string, bool) { return "", false }
	tests := []struct {
		name, json string
		want       map[string]string // server name: target
	}{
		{"plain", `{"mcpServers": {"a": {"command": "x"}}}`, map[string]string{"a": "x"}},
		{"line comments", "{\n  // my servers\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\"} // the first\n  }\n}", map[string]string{"a": "x"}},
		{"block comment", `{/* servers */ "mcpServers": {"a": {"command": "x" /* , "args": ["no"] */}}}`, map[string]string{"a": "x"}},
		{"trailing commas", `{"mcpServers": {"a": {"command": "x", "args": ["y",],}, "b": {"url": "http://h/mcp"},},}`, map[string]string{"a": "x y", "b": "http://h/mcp"}},
		{"VS Code's servers key", "{\n\t\"inputs\": [],\n\t// comment\n\t\"servers\": {\n\t\t\"v\": {\"type\": \"http\", \"url\": \"http://h/mcp\"},\n\t},\n}", map[string]string{"v": "http://h/mcp"}},
		{"comment holding a URL", `{"mcpServers": {"a": {"url": "http://h/mcp" // see http://docs
		}}}`, map[string]string{"a": "http://h/mcp"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := ParseConfig("mcp.json", []byte(tt.json), lookup)
			if err != nil {
				t.Fatal(err)
			}
			if len(cfg.Servers) != len(tt.want) {
				t.Errorf("servers %v, want %v", cfg.Servers, tt.want)
			}
			for name, target := range tt.want {
				if sc := cfg.Servers[name]; sc == nil || sc.Target() != target {
					t.Errorf("server %q = %+v, want target %q", name, sc, target)
				}
			}
		})
	}
}

// A file that is not JSON, even with comments and trailing commas allowed,
// is refused with its name, the line and the column.
func TestParseConfigJSONCErrors(t *testing.T) {
	lookup := func(string) (string, bool) { return "", false }
	tests := []struct {
		name, json string
		want       []string
	}{
		{"missing comma", "{\"mcpServers\": {\n  \"a\": {\"command\": \"x\"}\n  \"b\": {\"command\": \"y\"}\n}}", []string{"/p/.vscode/mcp.json is not valid JSON", "line 3, column 3", "expecting ','"}},
		{"unterminated comment", "{\"mcpServers\": {} /* never closed\n}", []string{"/p/.vscode/mcp.json", "line 1, column 19", "comment"}},
		{"cut short", `{"mcpServers": {`, []string{"/p/.vscode/mcp.json", "line 1, column 17"}},
		{"two commas", `{"mcpServers": {"a": {"command": "x"},,}}`, []string{"line 1, column 39"}},
		{"a list", `[{"mcpServers": {}}]`, []string{"/p/.vscode/mcp.json", `want a JSON object with "mcpServers"`, "not a list"}},
		{"neither key", `{"mcp": {}, "inputs": []}`, []string{`no "mcpServers"`, `"servers"`, "inputs, mcp"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseConfig("/p/.vscode/mcp.json", []byte(tt.json), lookup)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}
