package schema

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/toolwire/toolwire/internal/testpeers"
)

// suiteModule is the Go module whose testdata holds the copy of the
// JSON-Schema-Test-Suite this package is checked against (VALIDATOR.md).
const suiteModule = "github.com/kaptinlin/jsonschema@v0.9.8"

// The counts of the suite's draft2020-12 required tests under Compile's
// settings: groups, groups that compile (the rest need remote references
// or have defaults that fail their schema), their tests, and the tests on
// which the library's verdict agrees with the suite's (formats asserted).
const (
	suiteGroups   = 361
	suiteCompiled = 336
	suiteTests    = 1182
	suiteAgree    = 1165
)

// suiteDir returns the suite's root: $JSTS_DIR, or under CI (or with
// TOOLWIRE_REQUIRE_NODE=1) the copy in suiteModule, fetched through the Go
// module proxy.
func suiteDir(t *testing.T) string {
	if dir := os.Getenv("JSTS_DIR"); dir != "" {
		return dir
	}
	if !testpeers.Strict() {
		t.Skip("JSTS_DIR not set: set it to the JSON-Schema-Test-Suite's root (see VALIDATOR.md), or set CI=1 to fetch the suite through the Go module proxy")
	}
	cmd := exec.Command("go", "mod", "download", "-json", suiteModule)
	cmd.Dir = t.TempDir() // outside this module
	out, err := cmd.Output()
	var mod struct{ Dir, Error string }
	if jerr := json.Unmarshal(out, &mod); err != nil || jerr != nil || mod.Dir == "" {
		testpeers.Missing(t, "the JSON-Schema-Test-Suite", "go mod download "+suiteModule+" failed ("+mod.Error+"): check the module proxy (GOPROXY) or set JSTS_DIR")
	}
	return filepath.Join(mod.Dir, "testdata", "JSON-Schema-Test-Suite")
}

// TestSuiteFastPathSound runs the official JSON-Schema-Test-Suite
// (draft2020-12, required tests) through Compile and checks that the fast
// check never accepts a value the library rejects, and that the library
// passes as many of the suite's tests as it did when chosen. It runs with
// JSTS_DIR set to the suite's root, and always under CI (see suiteDir).
func TestSuiteFastPathSound(t *testing.T) {
	dir := suiteDir(t)
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
	if groups != suiteGroups || compiled != suiteCompiled || tests != suiteTests || agree != suiteAgree {
		t.Errorf("suite counts: %d groups, %d compiled, %d tests, %d agreeing; want %d, %d, %d, %d (if the suite or the library changed on purpose, update the constants and VALIDATOR.md)",
			groups, compiled, tests, agree, suiteGroups, suiteCompiled, suiteTests, suiteAgree)
	}
}
