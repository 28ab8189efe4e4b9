package model

import "time"

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
