package tool_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/tool"
)

type greetIn struct {
	Name     string `json:"name"`
	Language string `json:"language" jsonschema:"enum=en|fr,default=en"`
	Session  string `json:"session" tool:"inject"`
}

func greetTool() tool.Tool {
	return tool.Must(tool.New("greet", "Greets someone.", func(_ context.Context, in greetIn) (string, error) {
		if in.Name == "nobody" {
			return "", errors.New("nobody cannot be greeted")
		}
		hello := map[string]string{"en": "Hello", "fr": "Bonjour"}[in.Language]
		return fmt.Sprintf("%s, %s (%s)", hello, in.Name, in.Session), nil
	}))
}

// TestMiddleware: middleware sees each call's tool, completed arguments,
// caller, result, error and duration; it may refuse or rewrite a call;
// the first added is outermost; a panic reaches it as a *PanicError.
func TestMiddleware(t *testing.T) {
	var reg tool.Registry
	boom := tool.Must(tool.New("boom", "Panics.", func(context.Context, struct{}) (string, error) { panic("kaboom") }))
	if err := reg.Add(greetTool(), boom); err != nil {
		t.Fatal(err)
	}
	var log []string
	reg.Use(
		func(next tool.Handler) tool.Handler { // records, outermost
			return func(ctx context.Context, c *tool.Call) (*tool.Result, error) {
				start := time.Now()
				res, err := next(ctx, c)
				caller, _ := tool.CallerFrom(ctx)
				text := ""
				if res != nil {
					text = res.Content[0].Text
				}
				log = append(log, fmt.Sprintf("%s %s by %s → %q, %v", c.Name, c.Args(), caller.ID, text, err))
				if time.Since(start) < 0 {
					t.Error("negative duration")
				}
				return res, err
			}
		},
		func(next tool.Handler) tool.Handler { // refuses French, rewrites "bob"
			return func(ctx context.Context, c *tool.Call) (*tool.Result, error) {
				var in greetIn
				_ = json.Unmarshal(c.Args(), &in)
				if in.Language == "fr" {
					return tool.Errorf("French greetings need approval"), nil
				}
				if in.Name == "bob" {
					c.SetArgs(json.RawMessage(`{"name":"Robert","language":"en","session":"s1"}`))
				}
				return next(ctx, c)
			}
		},
	)
	ctx := tool.WithCaller(tool.WithInjected(context.Background(), map[string]any{"session": "s1"}), tool.Caller{ID: "user:ann"})
	for _, args := range []string{`{"name":"Ann"}`, `{"name":"Ann","language":"fr"}`, `{"name":"bob","session":"forged"}`, `{"name":"nobody"}`, `{"language":"de"}`} {
		res, err := reg.Call(ctx, "greet", json.RawMessage(args))
		if err != nil {
			res = tool.ErrorResult(err)
		}
		log = append(log, "  model sees: "+res.ForModel().Text)
	}
	if _, err := reg.Call(ctx, "boom", nil); err == nil || !strings.Contains(err.Error(), "tool boom failed: it panicked: kaboom") {
		t.Errorf("panic: %v", err)
	}
	want := []string{
		`greet {"language":"en","name":"Ann","session":"s1"} by user:ann → "Hello, Ann (s1)", <nil>`,
		`  model sees: Hello, Ann (s1)`,
		`greet {"language":"fr","name":"Ann","session":"s1"} by user:ann → "French greetings need approval", <nil>`,
		`  model sees: French greetings need approval`,
		`greet {"name":"Robert","language":"en","session":"s1"} by user:ann → "Hello, Robert (s1)", <nil>`,
		`  model sees: Hello, Robert (s1)`,
		`greet {"language":"en","name":"nobody","session":"s1"} by user:ann → "", nobody cannot be greeted`,
		`  model sees: nobody cannot be greeted`,
		// Arguments the pipeline refuses never reach the middleware.
		`  model sees: invalid arguments for tool greet: missing required argument "name"; argument "language": expected one of "en", "fr", got string "de"`,
		`boom {} by user:ann → "", tool boom failed: it panicked: kaboom`,
	}
	if got := strings.Join(log, "\n"); got != strings.Join(want, "\n") {
		t.Errorf("log:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
}

// TestErrorClasses: what a model can repair, and what ends a run.
func TestErrorClasses(t *testing.T) {
	var reg tool.Registry
	if err := reg.Add(greetTool()); err != nil {
		t.Fatal(err)
	}
	injected := tool.WithInjected(context.Background(), map[string]any{"session": "s"})
	cancelled, cancel := context.WithCancel(injected)
	cancel()
	slow := tool.Must(tool.New("slow", "Waits for its context.", func(ctx context.Context, _ struct{}) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	}))
	if err := reg.Add(slow); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		ctx   context.Context
		tool  string
		args  string
		fatal bool
		as    any
	}{
		{"bad arguments", injected, "greet", `{"name":1}`, false, new(*tool.ArgumentsError)},
		{"unknown tool", injected, "gret", `{}`, false, new(*tool.UnknownToolError)},
		{"the tool's own error", injected, "greet", `{"name":"nobody"}`, false, nil},
		{"no injected value", context.Background(), "greet", `{"name":"Ann"}`, true, new(*tool.InjectionError)},
		{"caller gave up", cancelled, "slow", `{}`, true, nil},
	}
	for _, tt := range tests {
		_, err := reg.Call(tt.ctx, tt.tool, json.RawMessage(tt.args))
		if err == nil {
			t.Fatalf("%s: no error", tt.name)
		}
		if got := errors.Is(err, tool.ErrFatal); got != tt.fatal {
			t.Errorf("%s: %v is fatal: %v, want %v", tt.name, err, got, tt.fatal)
		}
		if tt.as != nil && !errors.As(err, tt.as) {
			t.Errorf("%s: %v (%T) is not a %T", tt.name, err, err, tt.as)
		}
	}
	_, err := reg.Call(injected, "gret", nil)
	if !strings.Contains(err.Error(), `unknown tool "gret": did you mean greet?`) {
		t.Errorf("unknown tool error %q should list the closest names first", err)
	}
	if tool.Fatal(nil) != nil {
		t.Error("Fatal(nil) != nil")
	}
}

// TestForModel: a result as a model is shown it.
func TestForModel(t *testing.T) {
	long := strings.Repeat("é", tool.MaxExcerpt) // 2 bytes a rune
	tests := []struct {
		name string
		res  *tool.Result
		want string
		att  int
	}{
		{"nil", nil, "(the tool returned no output)", 0},
		{"empty", &tool.Result{}, "(the tool returned no output)", 0},
		{"texts", &tool.Result{Content: []tool.Content{tool.TextContent("a"), tool.TextContent("b")}}, "a\nb", 0},
		{"structured only", &tool.Result{StructuredContent: map[string]any{"n": 1}}, `{"n":1}`, 0},
		{"text beats structured", &tool.Result{Content: []tool.Content{tool.TextContent("t")}, StructuredContent: map[string]any{"n": 1}}, "t", 0},
		{"image and audio", &tool.Result{Content: []tool.Content{tool.ImageContent("aGVsbG8=", "image/png"), tool.AudioContent("AAAA", "audio/wav")}},
			"[image 1: image/png, 5 bytes, attached]\n[audio 2: audio/wav, 3 bytes, attached]", 2},
		{"text resource", &tool.Result{Content: []tool.Content{tool.EmbeddedResource(tool.ResourceContents{URI: "file:///a.txt", MimeType: "text/plain", Text: "hi"})}},
			"[resource file:///a.txt: text/plain]\nhi", 0},
		{"blob resource", &tool.Result{Content: []tool.Content{tool.EmbeddedResource(tool.ResourceContents{URI: "file:///a.bin", Blob: "AAAA"})}},
			"[resource file:///a.bin: unknown type, 3 bytes of binary data]", 0},
		{"link", &tool.Result{Content: []tool.Content{tool.ResourceLink(tool.Resource{URI: "file:///b", Name: "b", MimeType: "text/csv", Description: "the data"})}},
			"[resource link file:///b (b, text/csv): the data]", 0},
	}
	for _, tt := range tests {
		v := tt.res.ForModel()
		if v.Text != tt.want || len(v.Attachments) != tt.att {
			t.Errorf("%s: %q with %d attachments, want %q with %d", tt.name, v.Text, len(v.Attachments), tt.want, tt.att)
		}
	}
	v := (&tool.Result{IsError: true, Content: []tool.Content{tool.EmbeddedResource(tool.ResourceContents{URI: "u", Text: long})}}).ForModel()
	if !v.IsError || len(v.Text) > tool.MaxExcerpt+200 || !strings.Contains(v.Text, "more bytes left out") || !strings.Contains(v.Text, "first 8192 of 16384 bytes") {
		t.Errorf("long resource: error %v, %d bytes: %.120q…", v.IsError, len(v.Text), v.Text)
	}
}
