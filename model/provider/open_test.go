package provider_test

import (
	"context"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/model"
	"github.com/toolwire/toolwire/model/anthropic"
	"github.com/toolwire/toolwire/model/gemini"
	"github.com/toolwire/toolwire/model/internal/wiretest"
	"github.com/toolwire/toolwire/model/ollama"
	"github.com/toolwire/toolwire/model/provider"
)

func env(kv ...string) model.Getenv {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

// TestOpenAdapters: anthropic, gemini and ollama read their keys and
// base URLs as their own SDKs and CLI do; a missing key names the
// variable to set.
func TestOpenAdapters(t *testing.T) {
	tests := []struct {
		name    string
		spec    string
		env     model.Getenv
		opts    provider.Options
		want    model.Model
		wantErr []string // words the error must hold
	}{
		{name: "anthropic from the environment", spec: "anthropic:claude-sonnet-4-5",
			env:  env("ANTHROPIC_API_KEY", "sk-ant-1", "ANTHROPIC_BASE_URL", "https://proxy.example.com"),
			want: &anthropic.Model{Name: "claude-sonnet-4-5", APIKey: "sk-ant-1", BaseURL: "https://proxy.example.com"}},
		{name: "anthropic default host", spec: "anthropic:claude-haiku-4-5", env: env("ANTHROPIC_API_KEY", "sk-ant-1"),
			want: &anthropic.Model{Name: "claude-haiku-4-5", APIKey: "sk-ant-1", BaseURL: "https://api.anthropic.com"}},
		{name: "anthropic options win", spec: "anthropic:claude-sonnet-4-5", env: env("ANTHROPIC_API_KEY", "sk-ant-1"),
			opts: provider.Options{APIKey: "sk-ant-flag", BaseURL: "http://127.0.0.1:9"},
			want: &anthropic.Model{Name: "claude-sonnet-4-5", APIKey: "sk-ant-flag", BaseURL: "http://127.0.0.1:9"}},
		{name: "anthropic without a key", spec: "anthropic:claude-sonnet-4-5", env: env(),
			wantErr: []string{"anthropic:claude-sonnet-4-5", "ANTHROPIC_API_KEY"}},
		{name: "gemini with GEMINI_API_KEY", spec: "gemini:gemini-2.5-pro", env: env("GEMINI_API_KEY", "AIza1", "GOOGLE_API_KEY", "AIza2"),
			want: &gemini.Model{Name: "gemini-2.5-pro", APIKey: "AIza1", BaseURL: "https://generativelanguage.googleapis.com"}},
		{name: "gemini with GOOGLE_API_KEY and GEMINI_BASE_URL", spec: "gemini:gemini-2.5-flash", env: env("GOOGLE_API_KEY", "AIza2", "GEMINI_BASE_URL", "http://127.0.0.1:8080"),
			want: &gemini.Model{Name: "gemini-2.5-flash", APIKey: "AIza2", BaseURL: "http://127.0.0.1:8080"}},
		{name: "gemini without a key", spec: "gemini:gemini-2.5-pro", env: env(),
			wantErr: []string{"GEMINI_API_KEY", "GOOGLE_API_KEY"}},
		{name: "ollama needs no key", spec: "ollama:qwen3", env: env(),
			want: &ollama.Model{Name: "qwen3", Host: "http://127.0.0.1:11434"}},
		{name: "ollama model with a tag", spec: "ollama:llama3.2:3b", env: env(),
			want: &ollama.Model{Name: "llama3.2:3b", Host: "http://127.0.0.1:11434"}},
		{name: "OLLAMA_HOST as host:port", spec: "ollama:qwen3", env: env("OLLAMA_HOST", "gpu-box:11500"),
			want: &ollama.Model{Name: "qwen3", Host: "http://gpu-box:11500"}},
		{name: "OLLAMA_HOST as a bare host", spec: "ollama:qwen3", env: env("OLLAMA_HOST", "0.0.0.0"),
			want: &ollama.Model{Name: "qwen3", Host: "http://0.0.0.0:11434"}},
		{name: "OLLAMA_HOST as a URL", spec: "ollama:qwen3", env: env("OLLAMA_HOST", "https://ollama.example.com"),
			want: &ollama.Model{Name: "qwen3", Host: "https://ollama.example.com:443"}},
		{name: "OLLAMA_HOST as :port", spec: "ollama:qwen3", env: env("OLLAMA_HOST", ":8081"),
			want: &ollama.Model{Name: "qwen3", Host: "http://127.0.0.1:8081"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.Getenv = tt.env
			m, err := provider.Open(tt.spec, tt.opts)
			if tt.wantErr != nil {
				if err == nil {
					t.Fatalf("opened %+v, want an error", m)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not name %s", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			switch want := tt.want.(type) {
			case *anthropic.Model:
				got, ok := m.(*anthropic.Model)
				if !ok || got.Name != want.Name || got.APIKey != want.APIKey || got.BaseURL != want.BaseURL {
					t.Errorf("opened %#v, want %#v", m, want)
				}
			case *gemini.Model:
				got, ok := m.(*gemini.Model)
				if !ok || got.Name != want.Name || got.APIKey != want.APIKey || got.BaseURL != want.BaseURL {
					t.Errorf("opened %#v, want %#v", m, want)
				}
			case *ollama.Model:
				got, ok := m.(*ollama.Model)
				if !ok || got.Name != want.Name || got.Host != want.Host {
					t.Errorf("opened %#v, want %#v", m, want)
				}
			}
		})
	}
}

// TestOpenedURLs: an opened model sends its requests where the vendor's
// API has them, from a base URL given as the vendor's SDK takes it.
func TestOpenedURLs(t *testing.T) {
	tests := []struct {
		spec, keyEnv, baseEnv string
		reply                 string
		wantPath              string
		wantHeader            [2]string
	}{
		{"anthropic:claude-sonnet-4-5", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL",
			`{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}`,
			"/v1/messages", [2]string{"X-Api-Key", "the-key"}},
		{"gemini:gemini-2.5-flash", "GEMINI_API_KEY", "GEMINI_BASE_URL",
			`{"candidates":[{"content":{"parts":[{"text":"ok"}],"role":"model"},"finishReason":"STOP"}]}`,
			"/v1beta/models/gemini-2.5-flash:generateContent", [2]string{"X-Goog-Api-Key", "the-key"}},
		{"ollama:qwen3", "", "OLLAMA_HOST",
			`{"model":"qwen3","message":{"role":"assistant","content":"ok"},"done":true,"done_reason":"stop"}`,
			"/api/chat", [2]string{"Content-Type", "application/json"}},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			srv := wiretest.NewServer(t, wiretest.Reply{Body: tt.reply})
			m, err := provider.Open(tt.spec, provider.Options{Getenv: env(tt.keyEnv, "the-key", tt.baseEnv, srv.URL)})
			if err != nil {
				t.Fatal(err)
			}
			res, err := m.Generate(context.Background(), &model.Request{Messages: []model.Message{{Role: model.RoleUser, Text: "hi"}}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.Message.Text != "ok" {
				t.Errorf("answer %q", res.Message.Text)
			}
			r := srv.Requests()[0]
			if r.Path != tt.wantPath || r.Header.Get(tt.wantHeader[0]) != tt.wantHeader[1] {
				t.Errorf("request to %s with %s %q, want %s with %q", r.Path, tt.wantHeader[0], r.Header.Get(tt.wantHeader[0]), tt.wantPath, tt.wantHeader[1])
			}
		})
	}
}
