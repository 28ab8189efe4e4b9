package handle_test

import (
	"strings"
	"testing"

	"github.com/toolwire/toolwire/handle"
)

// FuzzParse: Parse never panics, accepts only prefix_ and 22 URL-safe
// characters, and whatever it accepts resolves to an error a model reads,
// never a panic.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"", "tbl_", "tbl_AAAAAAAAAAAAAAAAAAAAAA", handle.NewID((*table)(nil).HandleKind()), "_x", "a_b_c", "tbl_\xff", strings.Repeat("a", 100)} {
		f.Add(s)
	}
	s := &handle.Memory{}
	ctx := as("fuzz")
	f.Fuzz(func(t *testing.T, in string) {
		p, err := handle.Parse(in)
		if err == nil {
			if len(in) != len(p)+1+22 || !strings.HasPrefix(in, p+"_") {
				t.Fatalf("Parse(%q) accepted prefix %q", in, p)
			}
		}
		if _, err := handle.Resolve[*table](ctx, s, in); err == nil {
			t.Fatalf("Resolve(%q) found a value in an empty store", in)
		}
	})
}
