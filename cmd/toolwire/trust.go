package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/toolwire/toolwire/host"
)

// A project's .mcp.json or .vscode/mcp.json names commands that toolwire
// starts, and it arrives with the project (a clone, a pull). Like Claude
// Code and VS Code, toolwire uses such a file only once the user trusts
// it: toolwire mcp trust records the file's digest, and a file whose
// content changed since is untrusted again.

// trustPath is the file that holds the digests of trusted project files.
func trustPath() string {
	dir, err := os.UserConfigDir()
	if err != nil {
		dir = "."
	}
	return filepath.Join(dir, "toolwire", "trusted-projects.json")
}

// trustedFiles reads the trusted files: absolute path to the SHA-256 of
// the content the user trusted. A missing store is empty.
func trustedFiles() (map[string]string, error) {
	data, err := os.ReadFile(trustPath())
	if errors.Is(err, os.ErrNotExist) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s is not valid JSON (%v): remove it and trust the project files again", trustPath(), err)
	}
	return m, nil
}

// fileDigest is the SHA-256 of the file at path, in hex, and its
// absolute path.
func fileDigest(path string) (abs, digest string, err error) {
	if abs, err = filepath.Abs(path); err != nil {
		return "", "", err
	}
	data, err := os.ReadFile(abs)
	if err != nil {
		return "", "", err
	}
	sum := sha256.Sum256(data)
	return abs, hex.EncodeToString(sum[:]), nil
}

// isTrusted reports whether the project file at path is trusted as it is
// now.
func isTrusted(path string) bool {
	abs, digest, err := fileDigest(path)
	if err != nil {
		return false
	}
	m, err := trustedFiles()
	return err == nil && m[abs] == digest
}

// trustFile records the project file at path, as it is now, as trusted.
func trustFile(path string) error {
	abs, digest, err := fileDigest(path)
	if err != nil {
		return fmt.Errorf("trusting %s: %w", path, err)
	}
	return withFileLock(trustPath(), func() error {
		m, err := trustedFiles()
		if err != nil {
			return err
		}
		m[abs] = digest
		data, err := json.MarshalIndent(m, "", "  ")
		if err != nil {
			return err
		}
		return writeFileAtomic(trustPath(), append(data, '\n'))
	})
}

// untrustedNote says why a project file is not used and what to do.
func untrustedNote(c host.AppConfig) string {
	return fmt.Sprintf("not using %s (%s's): a project's file starts the commands it names, so toolwire uses it only once you trust it: read it, then run toolwire mcp trust %s (again after it changes)", c.Path, c.App, shellQuote(c.Path))
}

func newMCPTrustCmd(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "trust [FILE]",
		Short: "Trust a project's .mcp.json or .vscode/mcp.json, as it is now",
		Long: `A project's .mcp.json (Claude Code) or .vscode/mcp.json (VS Code) names
commands that toolwire would start on this machine, and it comes with the
project: a clone or a pull can change it. toolwire uses such a file only
after you trust it, and only as long as it is unchanged: trust records the
file's SHA-256, and a file that changes since is not used until you trust
it again (toolwire mcp add and remove, editing a trusted file, trust it
again themselves). Without FILE, the nearest project file from the
working directory up to the repository's root.

trust prints the servers the file names, with their commands, so that you
see what you agreed to start.`,
		Example: `  toolwire mcp trust
  toolwire mcp trust .vscode/mcp.json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var path string
			if len(args) == 1 {
				path = args[0]
			} else {
				wd, err := os.Getwd()
				if err != nil {
					return err
				}
				found := host.ProjectConfigs(wd)
				if len(found) == 0 {
					return &exitError{code: 2, msg: "no project configuration (.mcp.json or .vscode/mcp.json) here or above, up to the repository's root: name the file"}
				}
				path = found[0].Path
			}
			cfg, err := host.LoadConfig(path)
			if err != nil {
				return err
			}
			if err := trustFile(path); err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "Trusted %s as it is now; its servers:\n", path)
			names := make([]string, 0, len(cfg.Servers))
			for n := range cfg.Servers {
				names = append(names, n)
			}
			slices.Sort(names)
			for _, n := range names {
				s := cfg.Servers[n]
				what := s.URL
				if what == "" {
					what = strings.Join(append([]string{s.Command}, s.Args...), " ")
				}
				fmt.Fprintf(out, "  %s: %s\n", n, what)
			}
			if !g.quiet {
				fmt.Fprintln(cmd.ErrOrStderr(), "A change to the file needs toolwire mcp trust again.")
			}
			return nil
		},
	}
}
