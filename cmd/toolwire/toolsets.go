package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/toolwire/toolwire/tool"
	"github.com/toolwire/toolwire/toolsets"
	_ "github.com/toolwire/toolwire/toolsets/calc" // registers "calc"; data registers in data.go (cgo)
)

// defaultToolsets are the toolsets served and given to models when none
// are named: those that read nothing of the machine's. The others (data,
// which reads the working directory's files) are opened when named.
func defaultToolsets() []string { return []string{"calc"} }

// toolsetInstructions tells an MCP client what a toolset is for.
func toolsetInstructions(name string) string {
	switch name {
	case "calc":
		return "Tools for exact arithmetic and for dates and times across time zones."
	case "data":
		return "Tables from CSV files: load, clean, query and save them; tools pass tables by handle (tbl_…), never their rows."
	}
	return ""
}

// knownToolsets refuses a name no toolset is registered as, before any
// is opened.
func knownToolsets(names []string) error {
	known := toolsets.Names()
	for _, name := range names {
		if name != "" && !slices.Contains(known, name) {
			return fmt.Errorf("unknown toolset %q: choose from %s", name, strings.Join(known, ", "))
		}
	}
	return nil
}

// openedToolset is a toolset a command opened, and its name.
type openedToolset struct {
	name string
	toolsets.Toolset
}

// openedToolsets are the toolsets a command opened.
type openedToolsets []openedToolset

// openToolsets opens the toolsets named ("" is skipped), each with the
// options the flags give it; on an error, it closes those it opened.
func openToolsets(ctx context.Context, names []string, options func(ctx context.Context, name string) (any, error)) (openedToolsets, error) {
	var opened openedToolsets
	for _, name := range names {
		if name == "" {
			continue
		}
		ts, err := openToolset(ctx, name, options)
		if err != nil {
			_ = opened.Close() // those opened before it
			return nil, err
		}
		opened = append(opened, openedToolset{name, ts})
	}
	return opened, nil
}

// openToolset opens the toolset name with the options the flags give it.
func openToolset(ctx context.Context, name string, options func(ctx context.Context, name string) (any, error)) (toolsets.Toolset, error) {
	opts, err := options(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("toolset %s: %w", name, err)
	}
	return toolsets.Open(ctx, name, opts)
}

// tools returns the tools of every toolset.
func (ts openedToolsets) tools() []tool.Tool {
	var all []tool.Tool
	for _, t := range ts {
		all = append(all, t.Tools()...)
	}
	return all
}

// Close closes every toolset and returns their errors.
func (ts openedToolsets) Close() error {
	var errs []error
	for _, t := range ts {
		errs = append(errs, t.Close())
	}
	return errors.Join(errs...)
}
