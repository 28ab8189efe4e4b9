package host

import (
	"context"

	"github.com/toolwire/toolwire/mcp"
)

// askingServerKey is the context key of the server whose request a
// Client handler answers.
type askingServerKey struct{}

// AskingServer returns the name of the configured server whose request
// (an elicitation, a sampling request, a roots listing) the Client
// handler given ctx answers: "" for a context the host did not give a
// handler.
func AskingServer(ctx context.Context) string {
	name, _ := ctx.Value(askingServerKey{}).(string)
	return name
}

// nameHandlers makes c's handlers of a server's requests (a copy of
// Host.Client for one server) tell AskingServer the server's name.
func nameHandlers(c *mcp.Client, server string) {
	named := func(ctx context.Context) context.Context { return context.WithValue(ctx, askingServerKey{}, server) }
	if f := c.Elicitation; f != nil {
		c.Elicitation = func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) { return f(named(ctx), p) }
	}
	if f := c.Sampling; f != nil {
		c.Sampling = func(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
			return f(named(ctx), p)
		}
	}
	if f := c.Roots; f != nil {
		c.Roots = func(ctx context.Context) ([]mcp.Root, error) { return f(named(ctx)) }
	}
}
