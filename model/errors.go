package model

import (
	"fmt"
	"net/http"
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
