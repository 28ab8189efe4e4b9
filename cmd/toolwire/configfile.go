package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/toolwire/toolwire/host"
)

// configFile is the configuration file a command uses, and why.
type configFile struct {
	Path string
	// Origin says where the path came from: "--config",
	// "$TOOLWIRE_CONFIG", "Claude Code project", "VS Code workspace",
	// "user" (toolwire's own file) or another app's name.
	Origin string
	// Others are the project files found but not used (a nearer one
	// wins), or the other apps' files after the one used.
	Others []host.AppConfig
	// Exists is false for the user's file when no file exists at all
	// (findConfig with create).
	Exists bool
	// Untrusted are the project files found and passed over, as the user
	// has not trusted them as they are (see trust.go).
	Untrusted []host.AppConfig
}

// configOrder is the order configuration files are looked for in, for
// the help of the commands.
const configOrder = `The configuration file is, in this order: --config; $TOOLWIRE_CONFIG; the
project's .mcp.json (Claude Code) or .vscode/mcp.json (VS Code) in the
working directory or a parent up to the repository's root, nearest first,
once you trust it (toolwire mcp trust); ~/.config/toolwire/mcp.json; Claude Desktop's, Cursor's, VS Code's or
Windsurf's own file. -v and toolwire mcp list say which is used.`

// findConfig finds the configuration file, in configOrder. With create,
// the file is for writing: another app's file is never chosen, and when
// no file exists the user's is returned with Exists false.
func (o *hostOptions) findConfig(create bool) (configFile, error) {
	switch {
	case o.config != "":
		return configFile{Path: o.config, Origin: "--config", Exists: exists(o.config)}, nil
	case os.Getenv("TOOLWIRE_CONFIG") != "":
		p := os.Getenv("TOOLWIRE_CONFIG")
		return configFile{Path: p, Origin: "$TOOLWIRE_CONFIG", Exists: exists(p)}, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return configFile{}, fmt.Errorf("finding the project's configuration: %w (pass --config)", err)
	}
	found := host.ProjectConfigs(wd)
	var untrusted []host.AppConfig
	for len(found) > 0 && !isTrusted(found[0].Path) {
		untrusted, found = append(untrusted, found[0]), found[1:]
	}
	if len(found) > 0 {
		return configFile{Path: found[0].Path, Origin: found[0].App, Others: found[1:], Exists: true, Untrusted: untrusted}, nil
	}
	user := host.DefaultConfigPath()
	if exists(user) {
		return configFile{Path: user, Origin: "user", Exists: true, Untrusted: untrusted}, nil
	}
	if create {
		return configFile{Path: user, Origin: "user", Untrusted: untrusted}, nil
	}
	apps := host.AppConfigs()
	if len(apps) == 0 {
		if len(untrusted) > 0 {
			return configFile{}, errors.New("no configuration: " + untrustedNote(untrusted[0]) + "; or pass --config")
		}
		return configFile{}, fmt.Errorf("no configuration: %s does not exist, nor does a project's .mcp.json or .vscode/mcp.json, nor Claude Desktop's, Cursor's, VS Code's or Windsurf's files: create it with toolwire mcp add, or an \"mcpServers\" object (see toolwire help config), or pass --config", user)
	}
	return configFile{Path: apps[0].Path, Origin: apps[0].App, Others: apps[1:], Exists: true, Untrusted: untrusted}, nil
}

// describe is how messages name the file: its path and origin.
func (f configFile) describe() string {
	switch f.Origin {
	case "--config", "$TOOLWIRE_CONFIG":
		return fmt.Sprintf("%s (from %s)", f.Path, f.Origin)
	case "user":
		return f.Path + " (your toolwire configuration)"
	}
	return fmt.Sprintf("%s (%s's)", f.Path, f.Origin)
}

// report says which file is used: always for another app's file, which
// the user did not choose; with -v for the rest.
func (f configFile) report(w io.Writer, g *globalOptions) {
	if !g.quiet {
		for _, u := range f.Untrusted {
			fmt.Fprintln(w, "toolwire:", untrustedNote(u))
		}
	}
	switch {
	case g.quiet:
	case f.Origin != "user" && !f.isProject() && f.Origin != "--config" && f.Origin != "$TOOLWIRE_CONFIG":
		fmt.Fprintf(w, "toolwire: using %s's configuration %s, as %s does not exist (--config to choose another)\n", f.Origin, f.Path, host.DefaultConfigPath())
		for _, o := range f.Others {
			fmt.Fprintf(w, "toolwire: also found %s's %s\n", o.App, o.Path)
		}
	case g.verbose:
		fmt.Fprintf(w, "toolwire: configuration %s\n", f.describe())
		for _, o := range f.Others {
			fmt.Fprintf(w, "toolwire: not used: %s (%s's; a nearer file wins)\n", o.Path, o.App)
		}
	}
}

// isProject says the file is a project's .mcp.json or .vscode/mcp.json.
func (f configFile) isProject() bool {
	return f.Origin == "Claude Code project" || f.Origin == "VS Code workspace"
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return !errors.Is(err, os.ErrNotExist)
}
