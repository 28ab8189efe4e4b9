package host

import (
	"os"
	"path/filepath"
)

// AppConfig is another app's MCP server configuration file.
type AppConfig struct {
	// App names the app, e.g. "Claude Desktop".
	App  string
	Path string
}

// AppConfigs returns the MCP configuration files of Claude Desktop, Cursor,
// VS Code and Windsurf that exist in their standard places on this system
// (Linux, macOS or Windows), in that order.
func AppConfigs() []AppConfig {
	home, _ := os.UserHomeDir()
	confDir, _ := os.UserConfigDir()
	var found []AppConfig
	for _, c := range appConfigPaths(home, confDir) {
		if fi, err := os.Stat(c.Path); err == nil && fi.Mode().IsRegular() {
			found = append(found, c)
		}
	}
	return found
}

// appConfigPaths lists where each app keeps its configuration, given the
// home directory and os.UserConfigDir (~/.config on Linux, ~/Library/
// Application Support on macOS, %AppData% on Windows). An empty directory
// leaves out the paths under it.
func appConfigPaths(home, confDir string) []AppConfig {
	var paths []AppConfig
	if confDir != "" {
		paths = append(paths, AppConfig{"Claude Desktop", filepath.Join(confDir, "Claude", "claude_desktop_config.json")})
	}
	if home != "" {
		paths = append(paths, AppConfig{"Cursor", filepath.Join(home, ".cursor", "mcp.json")})
	}
	if confDir != "" {
		paths = append(paths, AppConfig{"VS Code", filepath.Join(confDir, "Code", "User", "mcp.json")})
	}
	if home != "" {
		paths = append(paths, AppConfig{"Windsurf", filepath.Join(home, ".codeium", "windsurf", "mcp_config.json")})
	}
	return paths
}

// ProjectConfigs returns the project's MCP configuration files that exist,
// nearest first: Claude Code's .mcp.json, then VS Code's .vscode/mcp.json,
// in dir and in each parent up to the root of the repository dir is in (the
// nearest directory holding .git). Outside a repository only dir is
// searched, so that a stray file in a parent directory is not picked up.
func ProjectConfigs(dir string) []AppConfig {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	dirs := []string{dir}
	if root := repoRoot(dir); root != "" {
		for d := dir; d != root; {
			d = filepath.Dir(d)
			dirs = append(dirs, d)
		}
	}
	var found []AppConfig
	for _, d := range dirs {
		for _, c := range []AppConfig{
			{"Claude Code project", filepath.Join(d, ".mcp.json")},
			{"VS Code workspace", filepath.Join(d, ".vscode", "mcp.json")},
		} {
			if fi, err := os.Stat(c.Path); err == nil && fi.Mode().IsRegular() {
				found = append(found, c)
			}
		}
	}
	return found
}

// repoRoot is the nearest directory from dir up that holds .git (a
// directory, or a file in a worktree), or "" if none does.
func repoRoot(dir string) string {
	for d := dir; ; {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return ""
		}
		d = parent
	}
}
