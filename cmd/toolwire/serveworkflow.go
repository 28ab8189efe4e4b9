package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/workflow"
)

// serveWorkflows adds a tool per --workflow (FILE or NAME=FILE) to srv,
// each replaying its workflow through the tools srv serves, once it fits
// them; the error names the file and what to do.
func serveWorkflows(srv *mcp.Server, specs []string) error {
	runner := &workflow.Runner{Tools: srv.Registry()}
	for _, spec := range specs {
		name, path, err := workflowSpec(spec)
		if err != nil {
			return err
		}
		wf, err := workflow.Load(path)
		if err != nil {
			return fmt.Errorf("--workflow %s: %w (record one with toolwire run --record FILE)", spec, err)
		}
		if _, ok := srv.Registry().Lookup(name); ok {
			return fmt.Errorf("--workflow %s: the server already has a tool named %s: name the workflow's tool, as in --workflow %s_workflow=%s", spec, name, name, path)
		}
		// The inputs without a default are the tool's required
		// arguments: each call gives them.
		given := map[string]any{}
		for _, in := range wf.Inputs {
			if in.Default == nil {
				given[in.Name] = nil
			}
		}
		if err := wf.Check(srv.Registry(), given); err != nil {
			return fmt.Errorf("--workflow %s does not fit the tools served: %w\n(serve the toolsets and --servers it calls, or record it again against them)", spec, err)
		}
		t, err := runner.Tool(name, wf)
		if err == nil {
			err = srv.AddTools(t)
		}
		if err != nil {
			return fmt.Errorf("--workflow %s: %w", spec, err)
		}
	}
	return nil
}

// workflowSpec reads a --workflow value: NAME=FILE, or FILE, whose tool
// is named after the file's base name without its extension.
func workflowSpec(spec string) (name, path string, err error) {
	name, path, ok := strings.Cut(spec, "=")
	if !ok {
		path = spec
		name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	if name == "" || path == "" {
		return "", "", fmt.Errorf("--workflow %q: write FILE or NAME=FILE (the tool's name, then the workflow file)", spec)
	}
	return name, path, nil
}

// workflowNames names the tools of the --workflow values that name one.
func workflowNames(specs []string) []string {
	var names []string
	for _, spec := range specs {
		if name, _, err := workflowSpec(spec); err == nil {
			names = append(names, name)
		}
	}
	return names
}
