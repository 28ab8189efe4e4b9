// Package retryevent carries, in a request's context, what records that
// the request is about to be retried: package model's telemetry puts it
// there (an event on the chat span), the adapters' endpoint calls it.
package retryevent

import (
	"context"
	"time"
)

// Recorder records that a request is about to be retried after err
// (retry n, from 0), in wait.
type Recorder interface {
	Retried(n int, err error, wait time.Duration)
}

type key struct{}

// With returns a context carrying r.
func With(ctx context.Context, r Recorder) context.Context {
	return context.WithValue(ctx, key{}, r)
}

// Record tells the Recorder ctx carries, if any, about a retry.
func Record(ctx context.Context, n int, err error, wait time.Duration) {
	if r, ok := ctx.Value(key{}).(Recorder); ok {
		r.Retried(n, err, wait)
	}
}

// Notify is told that a request to provider is about to be made again:
// attempt (2 for the first retry) of attempts at most, after err, in wait.
type Notify func(provider string, attempt, attempts int, err error, wait time.Duration)

type notifyKey struct{}

// WithNotify returns a context carrying f, for a user interface (package
// model's OnRetry).
func WithNotify(ctx context.Context, f Notify) context.Context {
	return context.WithValue(ctx, notifyKey{}, f)
}

// Tell calls the Notify ctx carries, if any.
func Tell(ctx context.Context, provider string, attempt, attempts int, err error, wait time.Duration) {
	if f, ok := ctx.Value(notifyKey{}).(Notify); ok {
		f(provider, attempt, attempts, err, wait)
	}
}
