package tool_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/tool"
)

type injectBase struct {
	Session string `json:"session" tool:"inject"`
}

type injectArgs struct {
	injectBase
	Query   string         `json:"query"`
	DB      chan int       `json:"db" tool:"other, inject"` // no JSON form, never in the schema
	Options map[string]int `json:"options,omitempty" tool:"other"`
}

type injectNested struct {
	Inner struct {
		Key string `json:"key" tool:"inject"`
	} `json:"inner"`
}

type injectOut struct {
	Text  string `json:"text"`
	Trace any    `json:"trace" tool:"inject"`
}

// TestNewInjectTag shows that fields tagged tool:"inject" (top-level or
// promoted, among other options) are named in Info.Injected and left out
// of both schemas, and that a nested one is refused.
func TestNewInjectTag(t *testing.T) {
	typed, err := tool.New("search", "Search.", func(ctx context.Context, in injectArgs) (injectOut, error) { return injectOut{}, nil })
	if err != nil {
		t.Fatal(err)
	}
	info := typed.Info()
	if want := []string{"session", "db"}; !slices.Equal(info.Injected, want) {
		t.Errorf("Injected = %q, want %q", info.Injected, want)
	}
	for _, name := range []string{"session", "db"} {
		if strings.Contains(string(info.InputSchema), `"`+name+`"`) {
			t.Errorf("input schema names injected %q: %s", name, info.InputSchema)
		}
	}
	for _, name := range []string{"query", "options"} {
		if !strings.Contains(string(info.InputSchema), `"`+name+`"`) {
			t.Errorf("input schema lacks %q: %s", name, info.InputSchema)
		}
	}
	if strings.Contains(string(info.OutputSchema), `"trace"`) || !strings.Contains(string(info.OutputSchema), `"text"`) {
		t.Errorf("output schema = %s, want text without trace", info.OutputSchema)
	}

	_, err = tool.New("nested", "Nested.", func(ctx context.Context, in injectNested) (string, error) { return "", nil })
	if err == nil || !strings.Contains(err.Error(), "injectNested.Inner.Key: only top-level fields may be left out of the schema") {
		t.Errorf("nested inject: err = %v, want the field named as not top-level", err)
	}
}
