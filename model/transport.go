package model

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"
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

func (p RetryPolicy) retries() int {
	switch {
	case p.MaxRetries < 0:
		return 0
	case p.MaxRetries == 0:
		return 4
	}
	return p.MaxRetries
}

// delay is the wait before retry n (from 0), unless the error asks for one.
func (p RetryPolicy) delay(n int, err error) time.Duration {
	maxDelay := p.MaxDelay
	if maxDelay <= 0 {
		maxDelay = 30 * time.Second
	}
	var ae *APIError
	if errors.As(err, &ae) && ae.RetryAfter > 0 {
		return min(ae.RetryAfter, 2*maxDelay)
	}
	base := p.BaseDelay
	if base <= 0 {
		base = 500 * time.Millisecond
	}
	d := min(base<<min(n, 20), maxDelay)
	return d/2 + rand.N(d/2+1) // jitter: half fixed, half random
}

// temporary reports whether err may go away on a retry.
func temporary(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.Temporary()
	}
	var te *transportError
	return errors.As(err, &te)
}

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

type onRetryKey struct{}

// OnRetry returns a context under which the model requests made with it
// call f before each retry (on the goroutine that makes the request).
func OnRetry(ctx context.Context, f func(Retry)) context.Context {
	return context.WithValue(ctx, onRetryKey{}, f)
}

// transportError is a request that got no answer.
type transportError struct {
	url string
	err error
}

func (e *transportError) Error() string {
	return fmt.Sprintf("cannot reach %s: %v", e.url, e.err)
}
func (e *transportError) Unwrap() error { return e.err }

// Endpoint posts JSON to one URL of a provider's API: the HTTP side every
// adapter shares.
type Endpoint struct {
	// Provider names the API in errors.
	Provider string
	URL      string
	Header   http.Header
	// Client sends the requests (nil: http.DefaultClient).
	Client *http.Client
	Retry  RetryPolicy
}

// NewEndpoint makes the endpoint at path under base (defaultBase when
// base is empty), with a copy of header and the headers kv names (name,
// value, ...; a pair with an empty value is left out).
func NewEndpoint(provider, base, defaultBase, path string, header http.Header, kv ...string) *Endpoint {
	if base == "" {
		base = defaultBase
	}
	h := header.Clone()
	if h == nil {
		h = http.Header{}
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			h.Set(kv[i], kv[i+1])
		}
	}
	return &Endpoint{Provider: provider, URL: strings.TrimRight(base, "/") + path, Header: h}
}

// Generate posts body, a request in JSON, and reads the answer: with
// whole when onDelta is nil, else with stream, which hands deltas to
// onDelta and reports whether it produced any (see Post). The request id
// is the one the header named idHeader carries, when it does (what the
// provider's support asks for), else the one the answer gave.
func (e *Endpoint) Generate(ctx context.Context, body []byte, onDelta func(Delta), idHeader string,
	whole func(*http.Response) (*Response, error), stream func(*http.Response, func(Delta)) (*Response, bool, error)) (*Response, error) {
	var res *Response
	err := e.Post(ctx, body, func(resp *http.Response) (bool, error) {
		var produced bool
		var err error
		if onDelta == nil {
			res, err = whole(resp)
		} else {
			res, produced, err = stream(resp, onDelta)
		}
		if id := resp.Header.Get(idHeader); res != nil && idHeader != "" && id != "" {
			res.RequestID = id
		}
		return produced, err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// Post sends body and hands a successful (2xx) response to read, retrying
// as the policy says. read reports whether it produced output (handed a
// delta to the caller): a failure after that is not retried. Error
// answers become *APIError.
func (e *Endpoint) Post(ctx context.Context, body []byte, read func(resp *http.Response) (produced bool, err error)) error {
	client := e.Client
	if client == nil {
		client = http.DefaultClient
	}
	for n := 0; ; n++ {
		produced, err := e.post(ctx, client, body, read)
		if err == nil {
			return nil
		}
		if produced || n >= e.Retry.retries() || !temporary(ctx, err) {
			return err
		}
		wait := e.Retry.delay(n, err)
		retried(ctx, n, err, wait)
		if f, ok := ctx.Value(onRetryKey{}).(func(Retry)); ok {
			f(Retry{Provider: e.Provider, Err: err, Attempt: n + 2, Attempts: e.Retry.retries() + 1, Wait: wait})
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w (gave up waiting to retry: %w)", err, context.Cause(ctx))
		case <-t.C:
		}
	}
}

func (e *Endpoint) post(ctx context.Context, client *http.Client, body []byte, read func(*http.Response) (bool, error)) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.URL, bytes.NewReader(body))
	if err != nil {
		return false, fmt.Errorf("%s: %w", e.Provider, err)
	}
	for k, v := range e.Header {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return false, fmt.Errorf("%s: request to %s: %w", e.Provider, e.URL, context.Cause(ctx))
		}
		return false, fmt.Errorf("%s: %w", e.Provider, &transportError{url: e.URL, err: err})
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		return false, ReadAPIError(e.Provider, e.URL, resp, b)
	}
	produced, err := read(resp)
	if err != nil && !produced && ctx.Err() == nil {
		var ae *APIError
		if !errors.As(err, &ae) {
			// A stream cut before any output: worth another try.
			err = &transportError{url: e.URL, err: err}
		}
	}
	if err != nil && ctx.Err() != nil {
		err = fmt.Errorf("%s: %w", e.Provider, context.Cause(ctx))
	}
	return produced, err
}

// Getenv reads the environment; tests pass their own.
type Getenv func(key string) string

// Key returns the value of the first of names that is set in env, or an
// error naming the variable to set.
func Key(env Getenv, provider string, names ...string) (string, error) {
	for _, n := range names {
		if v := strings.TrimSpace(env(n)); v != "" {
			return v, nil
		}
	}
	return "", fmt.Errorf("%s needs an API key: set %s (or pass --api-key)", provider, strings.Join(names, " or "))
}

// NewCallID makes an id for a tool call the provider gave none: 9
// letters and digits, which every provider accepts (some require
// exactly that).
func NewCallID() string {
	const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b := make([]byte, 9)
	for i := range b {
		b[i] = alnum[rand.N(len(alnum))]
	}
	return string(b)
}
