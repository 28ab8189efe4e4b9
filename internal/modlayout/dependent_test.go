package modlayout

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"
)

// release is the version the test publishes every module at.
const release = "v0.1.0"

// placeholder is the version at which the modules of the repository
// require each other: go.work points it at the checkout, and a release sets
// it to the tag, as publish does.
const placeholder = "v0.0.0-00010101000000-000000000000"

// commandTimeout bounds each go command the test runs (the CLI's install
// compiles it, gRPC and the OpenTelemetry exporters included).
const commandTimeout = 5 * time.Minute

// TestDependentModule publishes the checkout's modules (the files git
// tracks or would add, uncommitted edits included) to a module proxy in a
// directory, then, in a module outside the repository with no replace
// directive and a module cache of its own, resolves, builds and documents a
// program importing the core packages and the Redis handle store as a
// user's would, and installs the CLI with go install ...@version. Third-party
// modules come offline from the machine's module cache, served as a second
// proxy.
func TestDependentModule(t *testing.T) {
	for _, tool := range []string{"go", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("the %s command is not on PATH: %v", tool, err)
		}
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	files := checkoutFiles(t, root)
	tmp := t.TempDir()
	proxy := filepath.Join(tmp, "proxy")
	// The root module, and the modules the dependent and the CLI need.
	for _, dir := range []string{".", "handle/redisstore", "toolsets/data", "cmd/toolwire"} {
		publish(t, proxy, root, dir, files)
	}

	cache := strings.TrimSpace(goCmd(t, root, nil, "env", "GOMODCACHE"))
	gopath := filepath.Join(tmp, "gopath")
	bin := filepath.Join(tmp, "bin")
	env := append(os.Environ(),
		"GOPROXY="+fileURL(proxy)+","+fileURL(filepath.Join(cache, "cache", "download")),
		"GOSUMDB=off", "GONOSUMDB=", "GOPRIVATE=", "GONOPROXY=", "GOINSECURE=",
		"GOFLAGS=-mod=mod -trimpath",
		"GOWORK=off", "GOTOOLCHAIN=local",
		"GOPATH="+gopath, "GOMODCACHE="+filepath.Join(gopath, "pkg", "mod"), "GOBIN="+bin,
	)
	// The module cache is read-only: make it removable for TempDir's cleanup.
	t.Cleanup(func() { goCmd(t, tmp, env, "clean", "-modcache") })

	dep := filepath.Join(tmp, "dependent")
	write(t, filepath.Join(dep, "go.mod"), "module example.com/dependent\n\ngo 1.26.0\n")
	write(t, filepath.Join(dep, "main.go"), `package main

import (
	"fmt"

	"github.com/toolwire/toolwire/agent"
	"github.com/toolwire/toolwire/handle/redisstore"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/tool"
)

func main() {
	var a *agent.Agent
	var tl tool.Tool
	var s *mcp.Server
	fmt.Println(a, tl, s, redisstore.New != nil)
}
`)
	// tidy finds the modules' latest version in the proxy's lists.
	goCmd(t, dep, env, "mod", "tidy")
	goCmd(t, dep, env, "build", "./...")
	all := goCmd(t, dep, env, "list", "-m", "all")
	for _, want := range []string{
		"github.com/toolwire/toolwire " + release,
		"github.com/toolwire/toolwire/handle/redisstore " + release,
	} {
		if !strings.Contains(all, want+"\n") {
			t.Errorf("go list -m all has no line %q:\n%s", want, all)
		}
	}
	// What only the data toolset and the CLI use stays out of a library
	// user's module graph.
	for _, unwanted := range []string{"github.com/duckdb/", "github.com/spf13/cobra", "github.com/toolwire/toolwire/toolsets/data", "github.com/toolwire/toolwire/cmd/toolwire"} {
		if strings.Contains(all, unwanted) {
			t.Errorf("go list -m all lists %s, which a program using only the core packages and redisstore does not need:\n%s", unwanted, all)
		}
	}
	if doc := goCmd(t, dep, env, "doc", "github.com/toolwire/toolwire/agent"); !strings.Contains(doc, `package agent // import "github.com/toolwire/toolwire/agent"`) {
		t.Errorf("go doc github.com/toolwire/toolwire/agent printed no package line:\n%s", doc)
	}

	// go install refuses a module with replace directives: the CLI must
	// resolve from its go.mod alone. Without cgo, so that DuckDB is not
	// compiled (the binary then says the data toolset needs cgo).
	install := append(env, "GOFLAGS=-trimpath", "CGO_ENABLED=0")
	goCmd(t, tmp, install, "install", "github.com/toolwire/toolwire/cmd/toolwire@"+release)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, filepath.Join(bin, "toolwire"), "--help").CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("toolwire")) {
		t.Errorf("the installed toolwire --help: %v\n%s", err, out)
	}
}

// goCmd runs the go command in dir with env (nil: the test's own) and
// returns its standard output; it fails the test, with the command's
// output, when the command fails.
func goCmd(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("go %s (in %s): %v\n%s%s", strings.Join(args, " "), dir, err, stdout.Bytes(), stderr.Bytes())
	}
	return stdout.String()
}

// checkoutFiles lists the files of the checkout, relative to root and
// slash-separated, as git would commit them: tracked or untracked but not
// ignored (so not .cache or build outputs), and present.
func checkoutFiles(t *testing.T, root string) []string {
	t.Helper()
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Skipf("listing the checkout's files with git ls-files (is %s a git checkout?): %v", root, err)
	}
	var files []string
	for _, f := range strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		if info, err := os.Lstat(filepath.Join(root, filepath.FromSlash(f))); err == nil && info.Mode().IsRegular() {
			files = append(files, f)
		}
	}
	return files
}

// publish writes the module in root's directory dir to the file-based
// module proxy at proxy, at version release: its @v/list, .info, .mod and
// .zip. As a release would, its requirements at the placeholder version
// become requirements at release. The zip leaves out the files of nested
// modules, as the go command does.
func publish(t *testing.T, proxy, root, dir string, files []string) {
	t.Helper()
	gomod, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(dir), "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	modPath := modfile.ModulePath(gomod)
	if modPath == "" {
		t.Fatalf("%s/go.mod has no module line", dir)
	}
	gomod = bytes.ReplaceAll(gomod, []byte(placeholder), []byte(release))
	// The released go.mod, in place of the checkout's in the zip.
	released := filepath.Join(t.TempDir(), "go.mod")
	write(t, released, string(gomod))

	prefix := ""
	if dir != "." {
		prefix = dir + "/"
	}
	var zipFiles []modzip.File
	for _, f := range files {
		rel, ok := strings.CutPrefix(f, prefix)
		if !ok {
			continue
		}
		abs := filepath.Join(root, filepath.FromSlash(f))
		if rel == "go.mod" {
			abs = released
		}
		zipFiles = append(zipFiles, diskFile{rel: rel, abs: abs})
	}
	escaped, err := module.EscapePath(modPath)
	if err != nil {
		t.Fatal(err)
	}
	v := filepath.Join(proxy, filepath.FromSlash(escaped), "@v")
	if err := os.MkdirAll(v, 0o755); err != nil {
		t.Fatal(err)
	}
	var zip bytes.Buffer
	if err := modzip.Create(&zip, module.Version{Path: modPath, Version: release}, zipFiles); err != nil {
		t.Fatalf("zipping module %s from %s: %v", modPath, dir, err)
	}
	write(t, filepath.Join(v, release+".zip"), zip.String())
	write(t, filepath.Join(v, release+".mod"), string(gomod))
	write(t, filepath.Join(v, release+".info"), fmt.Sprintf(`{"Version":%q,"Time":"2026-01-01T00:00:00Z"}`, release))
	write(t, filepath.Join(v, "list"), release+"\n")
}

// diskFile is a file of a module zip, read from disk.
type diskFile struct {
	rel string // path in the module, slash-separated
	abs string // where it is read from
}

func (f diskFile) Path() string                 { return path.Clean(f.rel) }
func (f diskFile) Lstat() (os.FileInfo, error)  { return os.Lstat(f.abs) }
func (f diskFile) Open() (io.ReadCloser, error) { return os.Open(f.abs) }

// fileURL returns the file:// URL of the directory p, as GOPROXY takes it.
func fileURL(p string) string {
	p = filepath.ToSlash(p)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // a Windows path: file:///C:/...
	}
	return (&url.URL{Scheme: "file", Path: p}).String()
}

// write writes the file p, creating its directory.
func write(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
