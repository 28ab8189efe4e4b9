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

// Approval returns registry middleware that asks before a tool that may
// change things runs: one whose annotations say so, or do not say it is
// read-only (MCP's default for a tool that is not read-only is
// destructive), unless they say destructiveHint false; and the tools the
// policy names in Confirm. A refusal is a tool result the model reads.
func Approval(p Policy) tool.Middleware {
	return func(next tool.Handler) tool.Handler {
		return func(ctx context.Context, c *tool.Call) (*tool.Result, error) {
			ask := Destructive(c.Tool.Info()) || slices.Contains(p.Confirm, c.Name)
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
