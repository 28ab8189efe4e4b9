package tool

import (
	"context"
	"encoding/json"
)

// ArgsFunc rewrites the arguments a model sent for a call of t before the
// argument pipeline runs over them, so that what it puts there is
// checked like anything the model wrote (package spill replaces result
// handles with the values behind them). It returns args unchanged when it
// has nothing to do, and an error a model can act on when it cannot
// rewrite them.
type ArgsFunc func(ctx context.Context, t Tool, args json.RawMessage) (json.RawMessage, error)

// UseArgs adds functions that rewrite every call's arguments before the
// argument pipeline, the first added first. A call they refuse fails
// with their error, and neither the pipeline nor the middleware runs.
func (r *Registry) UseArgs(f ...ArgsFunc) {
	r.mu.Lock()
	r.argFns = append(r.argFns, f...)
	r.mu.Unlock()
}
