package tool

import "context"

// runKey keys a run context of type T.
type runKey[T any] struct{}

// WithRunContext returns a context carrying v as the run context of type T:
// the state an agent run shares with every tool it calls (loaded data,
// connections, credentials), which no model ever sees. It is the Go form
// of the OpenAI Agents SDK's RunContextWrapper.
func WithRunContext[T any](ctx context.Context, v *T) context.Context {
	return context.WithValue(ctx, runKey[T]{}, v)
}

// RunContext returns the run context of type T, if ctx carries one.
func RunContext[T any](ctx context.Context) (*T, bool) {
	v, ok := ctx.Value(runKey[T]{}).(*T)
	return v, ok && v != nil
}
