package agent

import (
	"context"
	"fmt"
	"slices"

	"github.com/toolwire/toolwire/tool"
)

// Policy says which tools run only when the user approves.
type Policy struct {
	// Allow names tools that run without asking though they may change
	// things.
	Allow []string
	// Confirm names tools that ask first though their annotations say
	// they change nothing (the configuration knows better than a server's
	// hints).
	Confirm []string
	// Approve asks the user (in a terminal, say) and reports the answer;
	// nil means nobody can be asked, and such tools are refused.
	Approve func(ctx context.Context, c *tool.Call) (bool, error)
}

// Approval returns registry middleware that asks before a tool runs
// unless its annotations say it is read-only, or that it is neither
// destructive nor open-world (destructiveHint and openWorldHint false: a
// tool that only adds to a closed world of its own, such as the data
// toolset's tools that make new tables), as Codex CLI decides; MCP's
// defaults for hints left out are destructive and open-world. The tools
// the policy names in Confirm always ask. A refusal is a tool result the
// model reads.
func Approval(p Policy) tool.Middleware {
	return func(next tool.Handler) tool.Handler {
		return func(ctx context.Context, c *tool.Call) (*tool.Result, error) {
			ask := asksFirst(c.Tool.Info()) || slices.Contains(p.Confirm, c.Name)
			if !ask || slices.Contains(p.Allow, c.Name) && !slices.Contains(p.Confirm, c.Name) {
				return next(ctx, c)
			}
			approve := p.Approve
			if approve == nil {
				return tool.Errorf("tool %s may change things and was not approved: the user must allow it (toolwire run: --allow %s, or --yes for every tool; a configured server's tool may also be listed in that server's \"allow\")", c.Name, c.Name), nil
			}
			ok, err := approve(ctx, c)
			if err != nil {
				return nil, tool.Fatal(fmt.Errorf("asking to approve %s: %w", c.Name, err))
			}
			if !ok {
				return tool.Errorf("the user declined the call of %s", c.Name), nil
			}
			return next(ctx, c)
		}
	}
}

// Destructive reports whether a tool may change things, by its
// annotations: not read-only, and not declared non-destructive.
func Destructive(info tool.Info) bool {
	an := info.Annotations
	if an == nil {
		return true
	}
	if isTrue(an.ReadOnlyHint) {
		return false
	}
	return an.DestructiveHint == nil || *an.DestructiveHint
}

// asksFirst reports whether a tool runs only once approved, by its
// annotations: not read-only, and destructive or open-world.
func asksFirst(info tool.Info) bool {
	if !Destructive(info) {
		an := info.Annotations // not nil: Destructive said so
		return !isTrue(an.ReadOnlyHint) && (an.OpenWorldHint == nil || *an.OpenWorldHint)
	}
	return true
}
