package adapter

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/toolwire/toolwire/model"
	"github.com/toolwire/toolwire/model/internal/retryevent"
)

// retries is the number of retries p allows.
func retries(p model.RetryPolicy) int {
	switch {
	case p.MaxRetries < 0:
		return 0
	case p.MaxRetries == 0:
		return 4
	}
	return p.MaxRetries
}

// delay is the wait before retry n (from 0), unless the error asks for one.
func delay(p model.RetryPolicy, n int, err error) time.Duration {
	maxDelay := p.MaxDelay
	if maxDelay <= 0 {
		maxDelay = 30 * time.Second
	}
	var ae *model.APIError
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
	var ae *model.APIError
	if errors.As(err, &ae) {
		return ae.Temporary()
	}
	var te *transportError
	var ce *cutError
	return errors.As(err, &te) || errors.As(err, &ce)
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

// cutError is an answer that broke off or could not be read, after
// received bytes of its body.
type cutError struct {
	provider, url string
	received      int64
	err           error
}

func (e *cutError) Error() string {
	return fmt.Sprintf("%s: the answer from %s broke off after %d bytes: %v", e.provider, e.url, e.received, e.err)
}
func (e *cutError) Unwrap() error { return e.err }

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// Endpoint posts JSON to one URL of a provider's API: the HTTP side every
// adapter shares.
type Endpoint struct {
	// Provider names the API in errors.
	Provider string
	URL      string
	Header   http.Header
	// Client sends the requests (nil: http.DefaultClient).
	Client *http.Client
	Retry  model.RetryPolicy
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
func (e *Endpoint) Generate(ctx context.Context, body []byte, onDelta func(model.Delta), idHeader string,
	whole func(*http.Response) (*model.Response, error), stream func(*http.Response, func(model.Delta)) (*model.Response, bool, error)) (*model.Response, error) {
	var res *model.Response
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
		if produced || n >= retries(e.Retry) || !temporary(ctx, err) {
			return err
		}
		wait := delay(e.Retry, n, err)
		retryevent.Record(ctx, n, err, wait)
		retryevent.Tell(ctx, e.Provider, n+2, retries(e.Retry)+1, err, wait)
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
	counted := &countingReader{r: resp.Body}
	resp.Body = struct {
		io.Reader
		io.Closer
	}{counted, resp.Body}
	produced, err := read(resp)
	if err != nil && ctx.Err() == nil {
		var ae *model.APIError
		if !errors.As(err, &ae) {
			// A stream cut or broken: worth another try before any
			// output (temporary).
			err = &cutError{provider: e.Provider, url: e.URL, received: counted.n, err: err}
		}
	}
	if err != nil && ctx.Err() != nil {
		err = fmt.Errorf("%s: %w", e.Provider, context.Cause(ctx))
	}
	return produced, err
}

// ReadAPIError reads an error answer: the body's message in any of the
// shapes providers use ({"error": {"message", "type", "code"}}, with
// Gemini's status and RetryInfo, or a plain {"message"}), the request id
// and the wait the headers ask for.
func ReadAPIError(provider, url string, resp *http.Response, body []byte) *model.APIError {
	e := &model.APIError{Provider: provider, URL: url, Status: resp.StatusCode, RetryAfter: retryAfter(resp.Header)}
	for _, h := range []string{"x-request-id", "request-id", "x-goog-request-id", "cf-ray"} {
		if v := resp.Header.Get(h); v != "" {
			e.RequestID = v
			break
		}
	}
	fillAPIError(e, body)
	if e.Message == "" {
		e.Message = strings.TrimSpace(string(body))
		if len(e.Message) > 300 {
			e.Message = e.Message[:300] + "…"
		}
		if e.Message == "" {
			e.Message = http.StatusText(resp.StatusCode)
		}
	}
	return e
}

// fillAPIError reads an error object from JSON into e.
func fillAPIError(e *model.APIError, body []byte) {
	var w struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Type    string          `json:"type"`
	}
	if json.Unmarshal(body, &w) != nil {
		return
	}
	e.Message = w.Message
	var inner struct {
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
		Status  string          `json:"status"`
		Details []struct {
			Type       string `json:"@type"`
			RetryDelay string `json:"retryDelay"`
		} `json:"details"`
	}
	if len(w.Error) > 0 && w.Error[0] == '{' && json.Unmarshal(w.Error, &inner) == nil {
		e.Message, e.Type = inner.Message, inner.Type
		if e.Type == "" {
			e.Type = inner.Status
		}
		var code string
		if json.Unmarshal(inner.Code, &code) == nil {
			e.Code = code
		}
		for _, d := range inner.Details {
			if strings.HasSuffix(d.Type, "RetryInfo") {
				if dur, err := time.ParseDuration(d.RetryDelay); err == nil && e.RetryAfter == 0 {
					e.RetryAfter = dur
				}
			}
		}
	} else if len(w.Error) > 0 && w.Error[0] == '"' {
		_ = json.Unmarshal(w.Error, &e.Message)
		e.Type = w.Type
	}
}

// StreamError is an error event a provider sent inside a stream.
func StreamError(provider, url string, body []byte) *model.APIError {
	e := &model.APIError{Provider: provider, URL: url}
	fillAPIError(e, body)
	if e.Message == "" {
		e.Message = strings.TrimSpace(string(body))
	}
	return e
}

// retryAfter reads the wait a response asks for: retry-after-ms
// (OpenAI), then Retry-After in seconds or as an HTTP date.
func retryAfter(h http.Header) time.Duration {
	if ms, err := strconv.ParseFloat(h.Get("retry-after-ms"), 64); err == nil && ms >= 0 {
		return time.Duration(ms * float64(time.Millisecond))
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}
