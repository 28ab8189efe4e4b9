package model

import (
	"context"
	"time"

	"github.com/toolwire/toolwire/model/internal/retryevent"
)

// RetryPolicy says how a failed request is retried: after a temporary
// *APIError (see APIError.Temporary) or a failed connection, waiting as
// the provider asks (Retry-After and its kin) or else exponentially longer
// with jitter. A request whose stream has produced output is never
// retried, nor one that failed for good (a bad key, no quota).
type RetryPolicy struct {
	// MaxRetries bounds the retries (default 4); -1 means none.
	MaxRetries int
	// BaseDelay is the wait before the first retry (default 500ms); each
	// retry waits up to twice as long as the one before, at most MaxDelay
	// (default 30s).
	BaseDelay, MaxDelay time.Duration
}

// Getenv reads the environment; tests pass their own.
type Getenv func(key string) string

// Retry is a request about to be sent again, for a UI to say why an
// answer is slow (see OnRetry).
type Retry struct {
	// Provider names the API; Err is what failed: an *APIError (its
	// Status, 503 say) or a connection's failure.
	Provider string
	Err      error
	// Attempt is the attempt about to be made (2 for the first retry) of
	// Attempts at most; Wait is how long it waits first.
	Attempt, Attempts int
	Wait              time.Duration
}

// OnRetry returns a context under which the model requests made with it
// call f before each retry (on the goroutine that makes the request).
func OnRetry(ctx context.Context, f func(Retry)) context.Context {
	return retryevent.WithNotify(ctx, func(provider string, attempt, attempts int, err error, wait time.Duration) {
		f(Retry{Provider: provider, Err: err, Attempt: attempt, Attempts: attempts, Wait: wait})
	})
}
