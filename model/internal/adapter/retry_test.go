package adapter_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/model"
	"github.com/toolwire/toolwire/model/anthropic"
	"github.com/toolwire/toolwire/model/gemini"
	"github.com/toolwire/toolwire/model/internal/adapter"
	"github.com/toolwire/toolwire/model/internal/wiretest"
	"github.com/toolwire/toolwire/model/ollama"
)

// Waits: fast enough for tests. A policy whose own delay is an hour shows
// that a wait the server asked for was honoured: otherwise the test's
// context ends first and the error says so.
var (
	fast      = model.RetryPolicy{BaseDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond}
	slowOwn   = model.RetryPolicy{BaseDelay: time.Hour, MaxDelay: time.Hour}
	ok        = wiretest.Reply{Body: `{"ok":true}`}
	overload  = wiretest.Reply{Status: 529, Body: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, Header: http.Header{"Request-Id": {"req_011CSHoEeqs5C35K2UUqR7Fy"}}}
	rateLimit = `{"error":{"message":"Rate limit reached for gpt-4.1 in organization org-x on tokens per min (TPM)","type":"tokens","code":"rate_limit_exceeded"}}`
	noQuota   = `{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","code":"insufficient_quota"}}`
)

// TestRetry posts once through adapter.Endpoint to a server that answers
// with replies in order, and counts the requests it saw.
func TestRetry(t *testing.T) {
	tests := []struct {
		name       string
		replies    []wiretest.Reply
		policy     model.RetryPolicy
		wantN      int
		wantStatus int // of the error; 0 for success
		wantInErr  string
	}{
		{name: "429 with Retry-After in seconds", policy: slowOwn, wantN: 2, replies: []wiretest.Reply{
			{Status: 429, Header: http.Header{"Retry-After": {"0.05"}}, Body: rateLimit}, ok}},
		{name: "429 with retry-after-ms", policy: slowOwn, wantN: 2, replies: []wiretest.Reply{
			{Status: 429, Header: http.Header{"Retry-After-Ms": {"20"}, "Retry-After": {"3600"}}, Body: rateLimit}, ok}},
		{name: "529 overloaded (Anthropic), twice", policy: fast, wantN: 3, replies: []wiretest.Reply{overload, overload, ok}},
		{name: "503 then success", policy: fast, wantN: 2, replies: []wiretest.Reply{{Status: 503, Body: "upstream connect error"}, ok}},
		{name: "408 and 409 are retried", policy: fast, wantN: 3, replies: []wiretest.Reply{{Status: 408}, {Status: 409, Body: `{"error":{"message":"conflict"}}`}, ok}},
		{name: "Gemini RESOURCE_EXHAUSTED with RetryInfo.retryDelay", policy: slowOwn, wantN: 2, replies: []wiretest.Reply{{Status: 429, Body: `{"error": {"code": 429,
  "message": "You exceeded your current quota, please check your plan and billing details. Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_requests, limit: 10",
  "status": "RESOURCE_EXHAUSTED",
  "details": [
    {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [{"quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests", "quotaId": "GenerateRequestsPerMinutePerProjectPerModel-FreeTier"}]},
    {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "0.05s"}
  ]}}`}, ok}},
		{name: "insufficient_quota is not retried", policy: fast, wantN: 1, wantStatus: 429, wantInErr: "check the account's quota and billing",
			replies: []wiretest.Reply{{Status: 429, Body: noQuota}, ok}},
		{name: "a spend limit is not retried", policy: fast, wantN: 1, wantStatus: 400, wantInErr: "credit balance",
			replies: []wiretest.Reply{{Status: 400, Body: `{"type":"error","error":{"type":"invalid_request_error","message":"Your credit balance is too low to access the Anthropic API."}}`}, ok}},
		{name: "400 is not retried", policy: fast, wantN: 1, wantStatus: 400, wantInErr: "bad field",
			replies: []wiretest.Reply{{Status: 400, Body: `{"error":{"message":"bad field","type":"invalid_request_error"}}`}, ok}},
		{name: "401 is not retried and says to check the key", policy: fast, wantN: 1, wantStatus: 401, wantInErr: "check the API key",
			replies: []wiretest.Reply{{Status: 401, Body: `{"error":{"message":"Incorrect API key provided"}}`}, ok}},
		{name: "retries run out", policy: model.RetryPolicy{MaxRetries: 2, BaseDelay: time.Millisecond}, wantN: 3, wantStatus: 503,
			replies: []wiretest.Reply{{Status: 503}}},
		{name: "MaxRetries -1: no retry", policy: model.RetryPolicy{MaxRetries: -1}, wantN: 1, wantStatus: 503,
			replies: []wiretest.Reply{{Status: 503}, ok}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := wiretest.NewServer(t, tt.replies...)
			ep := &adapter.Endpoint{Provider: "test", URL: srv.URL + "/v1/x", Retry: tt.policy}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			var got string
			err := ep.Post(ctx, []byte(`{}`), func(resp *http.Response) (bool, error) {
				b, err := io.ReadAll(resp.Body)
				got = string(b)
				return false, err
			})
			if n := len(srv.Requests()); n != tt.wantN {
				t.Errorf("%d requests, want %d (error: %v)", n, tt.wantN, err)
			}
			if tt.wantStatus == 0 {
				if err != nil || got != ok.Body {
					t.Fatalf("error %v, body %q", err, got)
				}
				return
			}
			var ae *model.APIError
			if !errors.As(err, &ae) || ae.Status != tt.wantStatus {
				t.Fatalf("error %v, want an *APIError with status %d", err, tt.wantStatus)
			}
			if !strings.Contains(err.Error(), tt.wantInErr) || !strings.Contains(err.Error(), srv.URL) {
				t.Errorf("error %q does not say %q and the URL", err, tt.wantInErr)
			}
		})
	}
}

// TestRetryAPIErrorDetails: the error after the last retry keeps the
// provider's message, type, status and request id.
func TestRetryAPIErrorDetails(t *testing.T) {
	srv := wiretest.NewServer(t, overload)
	m := &anthropic.Model{Name: "claude-sonnet-4-5", BaseURL: srv.URL, APIKey: "k", Retry: model.RetryPolicy{MaxRetries: 1, BaseDelay: time.Millisecond}}
	_, err := m.Generate(context.Background(), &model.Request{Messages: []model.Message{{Role: model.RoleUser, Text: "hi"}}}, nil)
	var ae *model.APIError
	if !errors.As(err, &ae) {
		t.Fatalf("error %v, want an *APIError", err)
	}
	want := model.APIError{Provider: "anthropic", URL: srv.URL + "/v1/messages", Status: 529, Type: "overloaded_error", Message: "Overloaded", RequestID: "req_011CSHoEeqs5C35K2UUqR7Fy"}
	if *ae != want {
		t.Errorf("error %+v, want %+v", *ae, want)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
}

// Streams for TestRetryStream.
const (
	anthropicStart = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"usage\":{\"input_tokens\":5,\"output_tokens\":1}}}\n\n"
	anthropicText  = "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}\n\n"
	anthropicEnd = "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":2}}\n\n" +
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
	anthropicOverloaded = "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n"
	geminiText          = "data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \"Hi\"}],\"role\": \"model\"},\"index\": 0}]}\r\n\r\n"
	geminiEnd           = "data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \"\"}],\"role\": \"model\"},\"finishReason\": \"STOP\",\"index\": 0}],\"usageMetadata\": {\"promptTokenCount\": 5,\"candidatesTokenCount\": 1}}\r\n\r\n"
	ollamaText          = "{\"model\":\"qwen3\",\"message\":{\"role\":\"assistant\",\"content\":\"Hi\"},\"done\":false}\n"
	ollamaEnd           = "{\"model\":\"qwen3\",\"message\":{\"role\":\"assistant\",\"content\":\"\"},\"done\":true,\"done_reason\":\"stop\",\"prompt_eval_count\":5,\"eval_count\":1}\n"
)

// TestRetryStream: a stream cut (or failed) before any output is tried
// again; once output was handed on, never.
func TestRetryStream(t *testing.T) {
	sse := http.Header{"Content-Type": {"text/event-stream"}}
	nd := http.Header{"Content-Type": {"application/x-ndjson"}}
	open := map[string]func(url string) model.Model{
		"anthropic": func(url string) model.Model {
			return &anthropic.Model{Name: "claude-sonnet-4-5", BaseURL: url, APIKey: "k", Retry: fast}
		},
		"gemini": func(url string) model.Model {
			return &gemini.Model{Name: "gemini-2.5-flash", BaseURL: url, APIKey: "k", Retry: fast}
		},
		"ollama": func(url string) model.Model { return &ollama.Model{Name: "qwen3", Host: url, Retry: fast} },
	}
	tests := []struct {
		name     string
		provider string
		replies  []wiretest.Reply
		wantN    int
		wantErr  bool
		wantText string // what onDelta was handed, in all
	}{
		{name: "anthropic: cut after text is not retried", provider: "anthropic", wantN: 1, wantErr: true, wantText: "Hi",
			replies: []wiretest.Reply{{Header: sse, Body: anthropicStart + anthropicText, Cut: true}, {Header: sse, Body: anthropicStart + anthropicText + anthropicEnd}}},
		{name: "anthropic: cut before any output is retried", provider: "anthropic", wantN: 2, wantText: "Hi",
			replies: []wiretest.Reply{{Header: sse, Body: anthropicStart, Cut: true}, {Header: sse, Body: anthropicStart + anthropicText + anthropicEnd}}},
		{name: "anthropic: overloaded error event before any output is retried", provider: "anthropic", wantN: 2, wantText: "Hi",
			replies: []wiretest.Reply{{Header: sse, Body: anthropicStart + anthropicOverloaded}, {Header: sse, Body: anthropicStart + anthropicText + anthropicEnd}}},
		{name: "anthropic: overloaded error event after output is not retried", provider: "anthropic", wantN: 1, wantErr: true, wantText: "Hi",
			replies: []wiretest.Reply{{Header: sse, Body: anthropicStart + anthropicText + anthropicOverloaded}, {Header: sse, Body: anthropicStart + anthropicText + anthropicEnd}}},
		{name: "gemini: cut after text is not retried", provider: "gemini", wantN: 1, wantErr: true, wantText: "Hi",
			replies: []wiretest.Reply{{Header: sse, Body: geminiText, Cut: true}, {Header: sse, Body: geminiText + geminiEnd}}},
		{name: "gemini: cut before any output is retried", provider: "gemini", wantN: 2, wantText: "Hi",
			replies: []wiretest.Reply{{Header: sse, Cut: true}, {Header: sse, Body: geminiText + geminiEnd}}},
		{name: "ollama: cut after text is not retried", provider: "ollama", wantN: 1, wantErr: true, wantText: "Hi",
			replies: []wiretest.Reply{{Header: nd, Body: ollamaText, Cut: true}, {Header: nd, Body: ollamaText + ollamaEnd}}},
		{name: "ollama: cut before any output is retried", provider: "ollama", wantN: 2, wantText: "Hi",
			replies: []wiretest.Reply{{Header: nd, Cut: true}, {Header: nd, Body: ollamaText + ollamaEnd}}},
		{name: "ollama: 503 (model loading) then a stream", provider: "ollama", wantN: 2, wantText: "Hi",
			replies: []wiretest.Reply{{Status: 503, Body: `{"error":"server busy, please try again. maximum pending requests exceeded"}`}, {Header: nd, Body: ollamaText + ollamaEnd}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := wiretest.NewServer(t, tt.replies...)
			m := open[tt.provider](srv.URL)
			var d wiretest.Deltas
			res, err := m.Generate(context.Background(), &model.Request{Messages: []model.Message{{Role: model.RoleUser, Text: "hi"}}}, d.On)
			if n := len(srv.Requests()); n != tt.wantN {
				t.Errorf("%d requests, want %d (error: %v)", n, tt.wantN, err)
			}
			if (err != nil) != tt.wantErr {
				t.Fatalf("error %v, want one: %v", err, tt.wantErr)
			}
			// A cut stream names the provider, the URL and how much came.
			if r := tt.replies[0]; err != nil && r.Cut {
				for _, want := range []string{tt.provider + ": the answer from " + srv.URL, fmt.Sprintf("broke off after %d bytes", len(r.Body))} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q lacks %q", err, want)
					}
				}
			}
			if d.Text != tt.wantText {
				t.Errorf("text handed on %q, want %q", d.Text, tt.wantText)
			}
			if err == nil && res.Message.Text != "Hi" {
				t.Errorf("answer %q, want %q", res.Message.Text, "Hi")
			}
		})
	}
}

// TestOnRetry: a context made by OnRetry hears of each retry, with the
// status that caused it and the attempt about to be made; a request that
// does not fail calls nothing.
func TestOnRetry(t *testing.T) {
	srv := wiretest.NewServer(t, wiretest.Reply{Status: 503}, wiretest.Reply{Status: 500}, ok)
	ep := &adapter.Endpoint{Provider: "test", URL: srv.URL + "/v1/x", Retry: fast}
	var got []string
	ctx := model.OnRetry(context.Background(), func(r model.Retry) {
		var ae *model.APIError
		if !errors.As(r.Err, &ae) {
			t.Errorf("retry after %v, want an *APIError", r.Err)
			return
		}
		got = append(got, fmt.Sprintf("%s %d %d/%d", r.Provider, ae.Status, r.Attempt, r.Attempts))
	})
	if err := ep.Post(ctx, []byte(`{}`), func(*http.Response) (bool, error) { return false, nil }); err != nil {
		t.Fatal(err)
	}
	if want := []string{"test 503 2/5", "test 500 3/5"}; !slices.Equal(got, want) {
		t.Errorf("retries heard %q, want %q", got, want)
	}
}
