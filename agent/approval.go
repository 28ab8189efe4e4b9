package agent

import (
	"context"
	"fmt"
	"slices"

	"github.com/toolwire/toolwire/tool"
)

// Approval returns registry middleware that asks before a destructive tool
// runs: one whose annotations say so, or do not say it is read-only (MCP's
// default for a tool that is not read-only is destructive), unless they
// say destructiveHint false. Tools named in allow run without asking.
//
// approve asks the user (in a terminal, say) and reports the answer; nil
// means nobody can be asked, and destructive tools not allowed are
// refused. A refusal is a tool result the model reads.
func Approval(allow []string, approve func(ctx context.Context, c *tool.Call) (bool, error)) tool.Middleware {
	return func(next tool.Handler) tool.Handler {
		return func(ctx context.Context, c *tool.Call) (*tool.Result, error) {
			if !Destructive(c.Tool.Info()) || slices.Contains(allow, c.Name) {
				return next(ctx, c)
			}
			if approve == nil {
				return tool.Errorf("tool %s may change things and was not approved: the user must allow it (run with --yes, or list it in the config's \"allow\")", c.Name), nil
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
