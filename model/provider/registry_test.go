package provider

import (
	"errors"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/model"
)

// TestRegisterPanics: a name registered twice, an empty name or one with
// a colon (which Open would never reach) and a nil New are mistakes in
// how the program was built, refused at once.
func TestRegisterPanics(t *testing.T) {
	newModel := func(string, Options) (model.Model, error) { return nil, nil }
	tests := []struct {
		name      string
		register  []Provider
		wantPanic string
	}{
		{name: "twice", register: []Provider{{Name: "x", New: newModel}, {Name: "x", New: newModel}}, wantPanic: "twice for provider x"},
		{name: "a built-in's name", register: builtins()[:1], wantPanic: "twice for provider openai"},
		{name: "empty name", register: []Provider{{New: newModel}}, wantPanic: `named ""`},
		{name: "a colon in the name", register: []Provider{{Name: "my:llm", New: newModel}}, wantPanic: `named "my:llm"`},
		{name: "nil New", register: []Provider{{Name: "x"}}, wantPanic: "nil New"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r registry
			for _, p := range builtins() {
				r.register(p)
			}
			defer func() {
				p := recover()
				if s, _ := p.(string); !strings.Contains(s, tt.wantPanic) {
					t.Errorf("panic %v, want one that says %q", p, tt.wantPanic)
				}
			}()
			for _, p := range tt.register {
				r.register(p)
			}
		})
	}
}

// TestRegistered: a registered provider is opened as the built-in ones
// are: listed among them, given the key and base URL Open finds, its
// error said with the model's name.
func TestRegistered(t *testing.T) {
	errNoSuchModel := errors.New("no such model: choose tiny or huge")
	var got Options
	var r registry
	for _, p := range builtins() {
		r.register(p)
	}
	r.register(Provider{Name: "test-local", KeyEnv: []string{"TEST_LOCAL_KEY"}, KeyOptional: true,
		New: func(id string, o Options) (model.Model, error) {
			if id != "tiny" {
				return nil, errNoSuchModel
			}
			got = o
			return nil, nil
		}})
	r.register(Provider{Name: "test-remote", KeyEnv: []string{"TEST_REMOTE_KEY"}, BaseURLEnv: "TEST_REMOTE_URL",
		New: func(string, Options) (model.Model, error) { return nil, nil }})
	env := func(kv map[string]string) Options {
		return Options{Getenv: func(k string) string { return kv[k] }}
	}
	tests := []struct {
		name    string
		spec    string
		opts    Options
		want    Options // APIKey and BaseURL New got
		wantErr []string
	}{
		{name: "key from the environment, no base URL needed", spec: "test-local:tiny", opts: env(map[string]string{"TEST_LOCAL_KEY": "k1"}),
			want: Options{APIKey: "k1"}},
		{name: "options win", spec: "test-local:tiny", opts: Options{APIKey: "k2", BaseURL: "http://127.0.0.1:9", Getenv: func(string) string { return "k1" }},
			want: Options{APIKey: "k2", BaseURL: "http://127.0.0.1:9"}},
		{name: "New's error names the model", spec: "test-local:mid", opts: env(nil),
			wantErr: []string{`model "test-local:mid"`, "choose tiny or huge"}},
		{name: "a base URL read from nowhere", spec: "test-remote:x", opts: env(map[string]string{"TEST_REMOTE_KEY": "k"}),
			wantErr: []string{"needs a base URL", "TEST_REMOTE_URL"}},
		{name: "unknown provider lists the registered ones", spec: "nope:x", opts: env(nil),
			wantErr: []string{`unknown provider "nope"`, "openai", "test-local", "test-remote"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got = Options{}
			_, err := r.open(tt.spec, tt.opts)
			if tt.wantErr != nil {
				if err == nil {
					t.Fatal("opened, want an error")
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not say %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.APIKey != tt.want.APIKey || got.BaseURL != tt.want.BaseURL {
				t.Errorf("New got key %q and base URL %q, want %q and %q", got.APIKey, got.BaseURL, tt.want.APIKey, tt.want.BaseURL)
			}
		})
	}
}
