package model

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// APIError is an error answer from a provider's API, with the provider's
// own message.
type APIError struct {
	// Provider names the API ("openai", "anthropic", ...) and URL the
	// endpoint asked.
	Provider string
	URL      string
	// Status is the HTTP status; 0 for an error sent inside a stream.
	Status int
	// Type and Code are the provider's names for the error
	// ("rate_limit_error", "insufficient_quota", "RESOURCE_EXHAUSTED").
	Type, Code string
	Message    string
	// RequestID is the provider's id of the request, for support.
	RequestID string
	// RetryAfter is how long the provider asked to wait before a retry
	// (Retry-After, retry-after-ms, Gemini's RetryInfo); 0 if it did not.
	RetryAfter time.Duration
}

func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s", e.Provider)
	if e.Status != 0 {
		fmt.Fprintf(&b, ": HTTP %d", e.Status)
	}
	for _, s := range []string{e.Type, e.Code} {
		if s != "" && !strings.Contains(b.String(), s) {
			fmt.Fprintf(&b, " %s", s)
		}
	}
	if e.Message != "" {
		fmt.Fprintf(&b, ": %s", e.Message)
	}
	if e.URL != "" {
		fmt.Fprintf(&b, " (%s", e.URL)
		if e.RequestID != "" {
			fmt.Fprintf(&b, ", request id %s", e.RequestID)
		}
		b.WriteString(")")
	}
	switch {
	case e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden:
		b.WriteString(": check the API key")
	case e.noRetry():
		b.WriteString(": check the account's quota and billing")
	}
	return b.String()
}

// noRetry reports errors that waiting does not mend: no quota or credit
// left, a spending limit reached.
func (e *APIError) noRetry() bool {
	if e.Type == "RESOURCE_EXHAUSTED" && e.RetryAfter > 0 {
		// Gemini's rate limits say "check your plan and billing details"
		// too, but come with a RetryInfo saying when to try again.
		return false
	}
	s := strings.ToLower(e.Type + " " + e.Code + " " + e.Message)
	for _, w := range []string{"insufficient_quota", "billing", "spend limit", "spending limit", "credit balance", "quota exceeded for this month"} {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// Temporary reports whether a retry may succeed: a timeout (408), a
// conflict (409), a rate limit (429), a server error (5xx) or an overload
// (Anthropic's 529), unless the account is out of quota.
func (e *APIError) Temporary() bool {
	switch {
	case e.noRetry():
		return false
	case e.Status == 408, e.Status == 409, e.Status == 429, e.Status >= 500:
		return true
	case e.Status == 0: // in a stream: overloaded or rate limited
		t := strings.ToLower(e.Type + e.Code)
		return strings.Contains(t, "overloaded") || strings.Contains(t, "rate_limit") || strings.Contains(t, "unavailable")
	}
	return false
}

// ReadAPIError reads an error answer: the body's message in any of the
// shapes providers use ({"error": {"message", "type", "code"}}, with
// Gemini's status and RetryInfo, or a plain {"message"}), the request id
// and the wait the headers ask for.
func ReadAPIError(provider, url string, resp *http.Response, body []byte) *APIError {
	e := &APIError{Provider: provider, URL: url, Status: resp.StatusCode, RetryAfter: retryAfter(resp.Header)}
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
func fillAPIError(e *APIError, body []byte) {
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
func StreamError(provider, url string, body []byte) *APIError {
	e := &APIError{Provider: provider, URL: url}
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
