// Package provider opens a model by name, as database/sql opens a database
// by driver name: "openai:gpt-4.1", "anthropic:claude-sonnet-4-5",
// "gemini:gemini-2.5-pro", "ollama:qwen3", "deepseek:deepseek-chat",
// "qwen:qwen-max", or "openai-compat:NAME" for any OpenAI-compatible
// server at a base URL.
//
// Keys and base URLs come from the environment, spelled as each vendor's
// own SDK or CLI reads them (see Providers); Options override them.
//
// An adapter of another module joins them with Register, and is then
// opened by Open (and named by toolwire's --model) as the built-in ones
// are, which register the same way.
package provider

import (
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/toolwire/toolwire/model"
	"github.com/toolwire/toolwire/model/anthropic"
	"github.com/toolwire/toolwire/model/gemini"
	"github.com/toolwire/toolwire/model/ollama"
	"github.com/toolwire/toolwire/model/openai"
	"github.com/toolwire/toolwire/telemetry"
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
	// Telemetry, when set, instruments the model (model.Instrument): a
	// chat span and the GenAI client metrics per request, with the
	// conventions' provider name (gemini's is "gcp.gemini"). Nil leaves
	// the model as the adapter made it.
	Telemetry *telemetry.Config
}

// Provider describes one provider name Open takes: where its key and
// base URL come from, and how its models are made.
type Provider struct {
	// Name is the prefix of a model string ("openai"): no colon.
	Name string
	// KeyEnv lists the variables the key is read from, first found wins;
	// empty for servers that need none.
	KeyEnv []string
	// BaseURLEnv is the variable a base URL is read from; empty for a
	// provider that needs none (then o.BaseURL is the option's, if any).
	BaseURLEnv string
	// DefaultBaseURL is used when neither option nor variable gives one.
	DefaultBaseURL string
	// KeyOptional says a missing key is no error (local servers).
	KeyOptional bool
	// New makes the model id (what follows "Name:" in a model string).
	// Open gives it the key and base URL it found, in o.APIKey and
	// o.BaseURL, and the Client and Retry of the caller's Options.
	New func(id string, o Options) (model.Model, error)
}

// Register makes a provider available to Open (and so to toolwire's
// --model) by its name, as the built-in ones are: an adapter's package
// calls it from its init function. Register panics if the name is empty
// or holds a colon, if New is nil, or if a provider of that name is
// already registered: a mistake in how the program was built, caught
// when it starts (as database/sql does).
func Register(p Provider) {
	registered.register(p)
}

// Providers lists the providers Open takes, sorted by name, with where
// each reads its key and base URL.
func Providers() []Provider {
	return registered.providers()
}

// registered holds the built-in providers and those the program's
// packages registered.
var registered registry

func init() {
	for _, p := range builtins() {
		Register(p)
	}
}

// registry maps names to providers.
type registry struct {
	mu     sync.RWMutex
	byName map[string]Provider
}

func (r *registry) register(p Provider) {
	switch {
	case p.Name == "" || strings.Contains(p.Name, ":"):
		panic(fmt.Sprintf("provider: Register of a provider named %q: a name is not empty and has no colon", p.Name))
	case p.New == nil:
		panic("provider: Register of provider " + p.Name + " with a nil New")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.byName[p.Name]; dup {
		panic("provider: Register called twice for provider " + p.Name)
	}
	if r.byName == nil {
		r.byName = map[string]Provider{}
	}
	r.byName[p.Name] = p
}

func (r *registry) lookup(name string) (Provider, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	p, ok := r.byName[name]
	return p, ok
}

func (r *registry) providers() []Provider {
	r.mu.RLock()
	defer r.mu.RUnlock()
	ps := make([]Provider, 0, len(r.byName))
	for _, p := range r.byName {
		ps = append(ps, p)
	}
	slices.SortFunc(ps, func(a, b Provider) int { return strings.Compare(a.Name, b.Name) })
	return ps
}

func openAICompatible(provider string) func(string, Options) (model.Model, error) {
	return func(name string, o Options) (model.Model, error) {
		return &openai.Model{Name: name, BaseURL: o.BaseURL, APIKey: o.APIKey, Provider: provider, Client: o.Client, Retry: o.Retry}, nil
	}
}

// builtins are the providers of this module's adapters.
func builtins() []Provider {
	return []Provider{
		{Name: "openai", KeyEnv: []string{"OPENAI_API_KEY"}, BaseURLEnv: "OPENAI_BASE_URL", DefaultBaseURL: openai.DefaultBaseURL, New: openAICompatible("openai")},
		{Name: "deepseek", KeyEnv: []string{"DEEPSEEK_API_KEY"}, BaseURLEnv: "DEEPSEEK_BASE_URL", DefaultBaseURL: "https://api.deepseek.com/v1", New: openAICompatible("deepseek")},
		{Name: "qwen", KeyEnv: []string{"DASHSCOPE_API_KEY"}, BaseURLEnv: "DASHSCOPE_BASE_URL", DefaultBaseURL: "https://dashscope.aliyuncs.com/compatible-mode/v1", New: openAICompatible("qwen")},
		{Name: "ark", KeyEnv: []string{"ARK_API_KEY"}, BaseURLEnv: "ARK_BASE_URL", DefaultBaseURL: "https://ark.cn-beijing.volces.com/api/v3", New: openAICompatible("ark")},
		{Name: "openrouter", KeyEnv: []string{"OPENROUTER_API_KEY"}, BaseURLEnv: "OPENROUTER_BASE_URL", DefaultBaseURL: "https://openrouter.ai/api/v1", New: openAICompatible("openrouter")},
		{Name: "openai-compat", KeyEnv: []string{"OPENAI_COMPAT_API_KEY", "OPENAI_API_KEY"}, BaseURLEnv: "OPENAI_COMPAT_BASE_URL", KeyOptional: true, New: openAICompatible("openai-compat")},
		{Name: "anthropic", KeyEnv: []string{"ANTHROPIC_API_KEY"}, BaseURLEnv: "ANTHROPIC_BASE_URL", DefaultBaseURL: anthropic.DefaultBaseURL,
			New: func(name string, o Options) (model.Model, error) {
				return &anthropic.Model{Name: name, BaseURL: o.BaseURL, APIKey: o.APIKey, Client: o.Client, Retry: o.Retry}, nil
			}},
		{Name: "gemini", KeyEnv: []string{"GEMINI_API_KEY", "GOOGLE_API_KEY"}, BaseURLEnv: "GEMINI_BASE_URL", DefaultBaseURL: gemini.DefaultBaseURL,
			New: func(name string, o Options) (model.Model, error) {
				return &gemini.Model{Name: name, BaseURL: o.BaseURL, APIKey: o.APIKey, Client: o.Client, Retry: o.Retry}, nil
			}},
		// OLLAMA_HOST is read as the Ollama CLI reads it (host, host:port
		// or a URL); Ollama needs no key.
		{Name: "ollama", BaseURLEnv: "OLLAMA_HOST", DefaultBaseURL: ollama.DefaultHost,
			New: func(name string, o Options) (model.Model, error) {
				return &ollama.Model{Name: name, Host: ollama.HostURL(o.BaseURL), Client: o.Client, Retry: o.Retry}, nil
			}},
	}
}

// Open opens the model named by spec, "provider:model". A missing key is
// an error that names the variable to set.
func Open(spec string, o Options) (model.Model, error) {
	return registered.open(spec, o)
}

func (r *registry) open(spec string, o Options) (model.Model, error) {
	name, id, ok := strings.Cut(spec, ":")
	if !ok || name == "" || id == "" {
		return nil, fmt.Errorf("model %q: write it as provider:model, e.g. openai:gpt-4.1 or ollama:qwen3 (providers: %s)", spec, r.names())
	}
	p, ok := r.lookup(name)
	if !ok {
		return nil, fmt.Errorf("model %q: unknown provider %q (providers: %s)", spec, name, r.names())
	}
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	c := o // the key and base URL found, for New
	if p.BaseURLEnv != "" && c.BaseURL == "" {
		c.BaseURL = getenv(p.BaseURLEnv)
	}
	if c.BaseURL == "" {
		c.BaseURL = p.DefaultBaseURL
	}
	if c.BaseURL == "" && p.BaseURLEnv != "" {
		return nil, fmt.Errorf("model %q: %s needs a base URL: set %s (e.g. http://127.0.0.1:8000/v1) or pass --base-url", spec, name, p.BaseURLEnv)
	}
	if c.APIKey == "" && len(p.KeyEnv) > 0 {
		key, err := apiKey(getenv, name, p.KeyEnv...)
		if err != nil && !p.KeyOptional {
			return nil, fmt.Errorf("model %q: %w", spec, err)
		}
		c.APIKey = key
	}
	m, err := p.New(id, c)
	if err != nil {
		return nil, fmt.Errorf("model %q: %w", spec, err)
	}
	if o.Telemetry != nil {
		u := c.BaseURL
		if name == "ollama" {
			u = ollama.HostURL(u) // OLLAMA_HOST may be host:port
		}
		m = model.Instrument(m, model.Info{Provider: conventionName(name), Name: id, URL: u}, *o.Telemetry)
	}
	return m, nil
}

// conventionName is the gen_ai.provider.name of a provider: the GenAI
// conventions' well-known value where it differs from the name here.
func conventionName(name string) string {
	if name == "gemini" {
		return "gcp.gemini"
	}
	return name
}

func (r *registry) names() string {
	var out []string
	for _, p := range r.providers() {
		out = append(out, p.Name)
	}
	return strings.Join(out, ", ")
}

// apiKey returns the value of the first of names that is set in env, or an
// error naming the variable to set.
func apiKey(env model.Getenv, provider string, names ...string) (string, error) {
	for _, n := range names {
		if v := strings.TrimSpace(env(n)); v != "" {
			return v, nil
		}
	}
	return "", fmt.Errorf("%s needs an API key: set %s (or pass --api-key)", provider, strings.Join(names, " or "))
}
