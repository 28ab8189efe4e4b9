// Package provider opens a model by name, as database/sql opens a database
// by driver name: "openai:gpt-4.1", "anthropic:claude-sonnet-4-5",
// "gemini:gemini-2.5-pro", "ollama:qwen3", "deepseek:deepseek-chat",
// "qwen:qwen-max", or "openai-compat:NAME" for any OpenAI-compatible
// server at a base URL.
//
// Keys and base URLs come from the environment, spelled as each vendor's
// own SDK or CLI reads them (see Providers); Options override them.
package provider

import (
	"fmt"
	"net/http"
	"os"
	"sort"
	"strings"

	"github.com/toolwire/toolwire/model"
	"github.com/toolwire/toolwire/model/anthropic"
	"github.com/toolwire/toolwire/model/gemini"
	"github.com/toolwire/toolwire/model/ollama"
	"github.com/toolwire/toolwire/model/openai"
)

// Options override what Open reads from the environment.
type Options struct {
	// APIKey and BaseURL, when set, replace the environment's.
	APIKey, BaseURL string
	// Getenv reads the environment (default os.Getenv).
	Getenv model.Getenv
	// Client sends the requests (nil: http.DefaultClient).
	Client *http.Client
	Retry  model.RetryPolicy
}

// Provider describes one provider name Open takes.
type Provider struct {
	// Name is the prefix of a model string ("openai").
	Name string
	// KeyEnv lists the variables the key is read from, first found wins;
	// empty for servers that need none.
	KeyEnv []string
	// BaseURLEnv is the variable a base URL is read from.
	BaseURLEnv string
	// DefaultBaseURL is used when neither option nor variable gives one.
	DefaultBaseURL string
	// KeyOptional says a missing key is no error (local servers).
	KeyOptional bool

	open func(name string, c config) model.Model
}

// config is what a provider's model is made with.
type config struct {
	key, baseURL string
	o            Options
}

func openAICompatible(provider string) func(string, config) model.Model {
	return func(name string, c config) model.Model {
		return &openai.Model{Name: name, BaseURL: c.baseURL, APIKey: c.key, Provider: provider, Client: c.o.Client, Retry: c.o.Retry}
	}
}

// Providers lists the provider names Open takes, with where each reads its
// key and base URL.
func Providers() []Provider {
	ps := []Provider{
		{Name: "openai", KeyEnv: []string{"OPENAI_API_KEY"}, BaseURLEnv: "OPENAI_BASE_URL", DefaultBaseURL: openai.DefaultBaseURL, open: openAICompatible("openai")},
		{Name: "deepseek", KeyEnv: []string{"DEEPSEEK_API_KEY"}, BaseURLEnv: "DEEPSEEK_BASE_URL", DefaultBaseURL: "https://api.deepseek.com/v1", open: openAICompatible("deepseek")},
		{Name: "qwen", KeyEnv: []string{"DASHSCOPE_API_KEY"}, BaseURLEnv: "DASHSCOPE_BASE_URL", DefaultBaseURL: "https://dashscope.aliyuncs.com/compatible-mode/v1", open: openAICompatible("qwen")},
		{Name: "ark", KeyEnv: []string{"ARK_API_KEY"}, BaseURLEnv: "ARK_BASE_URL", DefaultBaseURL: "https://ark.cn-beijing.volces.com/api/v3", open: openAICompatible("ark")},
		{Name: "openrouter", KeyEnv: []string{"OPENROUTER_API_KEY"}, BaseURLEnv: "OPENROUTER_BASE_URL", DefaultBaseURL: "https://openrouter.ai/api/v1", open: openAICompatible("openrouter")},
		{Name: "openai-compat", KeyEnv: []string{"OPENAI_COMPAT_API_KEY", "OPENAI_API_KEY"}, BaseURLEnv: "OPENAI_COMPAT_BASE_URL", KeyOptional: true, open: openAICompatible("openai-compat")},
	}
	ps = append(ps, moreProviders()...)
	sort.Slice(ps, func(i, j int) bool { return ps[i].Name < ps[j].Name })
	return ps
}

// moreProviders are the providers with adapters of their own.
func moreProviders() []Provider {
	return []Provider{
		{Name: "anthropic", KeyEnv: []string{"ANTHROPIC_API_KEY"}, BaseURLEnv: "ANTHROPIC_BASE_URL", DefaultBaseURL: anthropic.DefaultBaseURL,
			open: func(name string, c config) model.Model {
				return &anthropic.Model{Name: name, BaseURL: c.baseURL, APIKey: c.key, Client: c.o.Client, Retry: c.o.Retry}
			}},
		{Name: "gemini", KeyEnv: []string{"GEMINI_API_KEY", "GOOGLE_API_KEY"}, BaseURLEnv: "GEMINI_BASE_URL", DefaultBaseURL: gemini.DefaultBaseURL,
			open: func(name string, c config) model.Model {
				return &gemini.Model{Name: name, BaseURL: c.baseURL, APIKey: c.key, Client: c.o.Client, Retry: c.o.Retry}
			}},
		// OLLAMA_HOST is read as the Ollama CLI reads it (host, host:port
		// or a URL); Ollama needs no key.
		{Name: "ollama", BaseURLEnv: "OLLAMA_HOST", DefaultBaseURL: ollama.DefaultHost,
			open: func(name string, c config) model.Model {
				return &ollama.Model{Name: name, Host: ollama.HostURL(c.baseURL), Client: c.o.Client, Retry: c.o.Retry}
			}},
	}
}

// Open opens the model named by spec, "provider:model". A missing key is
// an error that names the variable to set.
func Open(spec string, o Options) (model.Model, error) {
	name, id, ok := strings.Cut(spec, ":")
	if !ok || name == "" || id == "" {
		return nil, fmt.Errorf("model %q: write it as provider:model, e.g. openai:gpt-4.1 or ollama:qwen3 (providers: %s)", spec, names())
	}
	var p *Provider
	for _, cand := range Providers() {
		if cand.Name == name {
			p = &cand
			break
		}
	}
	if p == nil {
		return nil, fmt.Errorf("model %q: unknown provider %q (providers: %s)", spec, name, names())
	}
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	c := config{key: o.APIKey, baseURL: o.BaseURL, o: o}
	if c.baseURL == "" && p.BaseURLEnv != "" {
		c.baseURL = getenv(p.BaseURLEnv)
	}
	if c.baseURL == "" {
		c.baseURL = p.DefaultBaseURL
	}
	if c.baseURL == "" {
		return nil, fmt.Errorf("model %q: %s needs a base URL: set %s (e.g. http://127.0.0.1:8000/v1) or pass --base-url", spec, name, p.BaseURLEnv)
	}
	if c.key == "" && len(p.KeyEnv) > 0 {
		key, err := model.Key(getenv, name, p.KeyEnv...)
		if err != nil && !p.KeyOptional {
			return nil, fmt.Errorf("model %q: %w", spec, err)
		}
		c.key = key
	}
	return p.open(id, c), nil
}

func names() string {
	var out []string
	for _, p := range Providers() {
		out = append(out, p.Name)
	}
	return strings.Join(out, ", ")
}
