package schema

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestSuiteFastPathSound runs the official JSON-Schema-Test-Suite
// (draft2020-12, required tests) through Compile and checks that the fast
// check never accepts a value the library rejects. Set JSTS_DIR to the
// suite's root to run it; VALIDATOR.md says where to get a copy.
func TestSuiteFastPathSound(t *testing.T) {
	dir := os.Getenv("JSTS_DIR")
	if dir == "" {
		t.Skip("JSTS_DIR not set")
	}
	files, err := filepath.Glob(filepath.Join(dir, "tests", "draft2020-12", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no suite files under %s: %v", dir, err)
	}
	var groups, compiled, fast, tests, agree int
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var gs []struct {
			Description string
			Schema      json.RawMessage
			Tests       []struct {
				Description string
				Data        json.RawMessage
				Valid       bool
			}
		}
		if err := json.Unmarshal(b, &gs); err != nil {
			t.Fatal(err)
		}
		for _, g := range gs {
			groups++
			v, err := Compile(g.Schema)
			if err != nil {
				continue // remote references, defaults that fail their schema
			}
			compiled++
			if v.fast != nil {
				fast++
			}
			for _, tc := range g.Tests {
				var x any
				if err := json.Unmarshal(tc.Data, &x); err != nil {
					t.Fatal(err)
				}
				tests++
				lib := v.root.Validate(x) == nil
				if lib == tc.Valid {
					agree++
				}
				if v.fast != nil && v.fast.accepts(x) && !lib {
					t.Errorf("%s: %s / %s: fast check accepts what the library rejects", filepath.Base(f), g.Description, tc.Description)
				}
				if (v.Validate(x) == nil) != lib {
					t.Errorf("%s: %s / %s: Validate disagrees with the library", filepath.Base(f), g.Description, tc.Description)
				}
			}
		}
	}
	t.Logf("groups %d, compiled %d, with fast check %d; tests %d, library agrees with the suite on %d (formats asserted)",
		groups, compiled, fast, tests, agree)
}
