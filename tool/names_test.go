package tool_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/tool"
)

func TestRegistrationRefusesUnsafeNames(t *testing.T) {
	fn := func(context.Context, struct{}) (string, error) { return "", nil }
	tests := []struct{ name, want string }{
		{"files.read", `has '.', which model providers reject: use only letters, digits, '_' and '-' (at most 64), e.g. "files_read_`},
		{"a/b", `has '/'`},
		{"héllo", `has 'é'`},
		{"with space", `has ' '`},
		{strings.Repeat("x", 65), "is 65 characters long; model providers take at most 64"},
		{"", "has no name"},
	}
	for _, tt := range tests {
		var reg tool.Registry
		err := reg.Add(tool.Must(tool.New(tt.name, "d", fn)))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Add(%q) = %v, want an error containing %q", tt.name, err, tt.want)
		}
		if reg.Len() != 0 {
			t.Errorf("Add(%q) registered the tool", tt.name)
		}
	}
	for _, ok := range []string{"read_file", "get-weather", "A1", strings.Repeat("x", 64)} {
		var reg tool.Registry
		if err := reg.Add(tool.Must(tool.New(ok, "d", fn))); err != nil {
			t.Errorf("Add(%q): %v", ok, err)
		}
	}
}

func TestSafeName(t *testing.T) {
	for _, name := range []string{"files.read/v2", "a.b", "a_b.", strings.Repeat("y", 70), "ünïcode", "x/" + strings.Repeat("z", 80)} {
		safe := tool.SafeName(name)
		if err := tool.CheckName(safe); err != nil {
			t.Errorf("SafeName(%q) = %q, which is refused: %v", name, safe, err)
		}
		if tool.SafeName(name) != safe {
			t.Errorf("SafeName(%q) is not deterministic", name)
		}
	}
	if got := tool.SafeName("read_file"); got != "read_file" {
		t.Errorf("an accepted name changed: %q", got)
	}
	if tool.SafeName("a.b") == tool.SafeName("a/b") || tool.SafeName("a.b") == "a_b" {
		t.Error("names that differ must not collide, nor collide with the accepted name a_b")
	}
}

func TestSuggest(t *testing.T) {
	names := []string{"memory__read_graph", "memory__search_nodes", "files__read_text_file", "everything__echo"}
	tests := []struct {
		name string
		want []string
	}{
		{"memory__read_grpah", []string{"memory__read_graph"}},
		{"everything__ech", []string{"everything__echo"}},
		{"read_text_file", []string{"files__read_text_file"}},
		{"nothing_like_it", nil},
	}
	for _, tt := range tests {
		if got := tool.Suggest(tt.name, names); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Suggest(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}
