package bench

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// coldServer is a server program of BenchmarkColdStart: built by build
// (a go build command line, run in dir, with the output path appended)
// and started as args (after the binary).
type coldServer struct {
	name  string
	dir   string   // where to build, from bench/
	env   []string // added to go build's environment
	build []string
	args  []string
}

// coldServers: go-sdk's example server (examples/server/hello, its own
// code, built here), the toolwire binary as an MCP client launches it
// (toolwire serve: the calc toolset), the same serving the data toolset,
// servers/toolwirecalc (the calc toolset without the rest of the binary)
// and the toolwire binary built without cgo, so without DuckDB (what
// linking DuckDB costs a server that does not open it).
var coldServers = []coldServer{
	{name: "gosdk-hello", dir: ".", build: []string{"github.com/modelcontextprotocol/go-sdk/examples/server/hello"}},
	{name: "toolwire-serve", dir: "..", build: []string{"./cmd/toolwire"}, args: []string{"serve"}},
	{name: "toolwire-serve-data", dir: "..", build: []string{"./cmd/toolwire"}, args: []string{"serve", "data"}},
	{name: "toolwirecalc", dir: ".", build: []string{"./servers/toolwirecalc"}},
	{name: "toolwire-nocgo-serve", dir: "..", env: []string{"CGO_ENABLED=0"}, build: []string{"./cmd/toolwire"}, args: []string{"serve"}},
}

var (
	coldOnce  sync.Once
	coldBins  map[string]string
	coldErr   error
	coldWorkd string
)

// buildCold builds the cold-start servers once (the toolwire binary, with
// DuckDB, takes a while the first time).
func buildCold(tb testing.TB) {
	tb.Helper()
	coldOnce.Do(func() {
		if buildDir == "" {
			if buildDir, coldErr = os.MkdirTemp("", "mcpbench-"); coldErr != nil {
				return
			}
		}
		coldBins = map[string]string{}
		built := map[string]string{}
		for _, s := range coldServers {
			key := strings.Join(s.env, " ") + " " + s.dir + " " + strings.Join(s.build, " ")
			if bin, ok := built[key]; ok {
				coldBins[s.name] = bin
				continue
			}
			bin := filepath.Join(buildDir, "cold-"+s.name)
			cmd := exec.Command("go", append([]string{"build", "-o", bin}, s.build...)...)
			cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = s.dir, append(os.Environ(), s.env...), os.Stderr, os.Stderr
			if coldErr = cmd.Run(); coldErr != nil {
				coldErr = fmt.Errorf("go build %s: %w", strings.Join(s.build, " "), coldErr)
				return
			}
			built[key], coldBins[s.name] = bin, bin
		}
		// The data toolset works in its working directory: an empty one.
		coldWorkd, coldErr = os.MkdirTemp(buildDir, "work-")
	})
	if coldErr != nil {
		tb.Fatal(coldErr)
	}
}

const coldInitialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"coldstart","version":"1"}}}` + "\n"

// coldStart starts s, sends initialize over stdio and returns the time
// from just before the start to the first line of its answer, which it
// checks; then it closes the server's input, which ends it, and reaps it.
func coldStart(s coldServer) (time.Duration, error) {
	cmd := exec.Command(coldBins[s.name], s.args...)
	cmd.Dir = coldWorkd
	cmd.Env = append(os.Environ(), "TMPDIR="+coldWorkd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return 0, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return 0, err
	}
	stderr := newCappedBuffer()
	cmd.Stderr = stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	defer func() {
		stdin.Close()
		_, _ = io.Copy(io.Discard, stdout)
		_ = cmd.Wait()
	}()
	if _, err := io.WriteString(stdin, coldInitialize); err != nil {
		return 0, fmt.Errorf("%s: writing initialize: %w (stderr: %s)", s.name, err, stderr)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	took := time.Since(start)
	if err != nil || !strings.Contains(line, `"id":1,"result":{`) {
		return 0, fmt.Errorf("%s: the answer to initialize is %q (%v; stderr: %s)", s.name, line, err, stderr)
	}
	return took, nil
}

// TestColdStart starts each cold-start server once.
func TestColdStart(t *testing.T) {
	buildCold(t)
	for _, s := range coldServers {
		if _, err := coldStart(s); err != nil {
			t.Error(err)
		}
	}
}

// BenchmarkColdStart is the time from starting a server program to the
// first line of its answer to initialize over stdio, what a client that
// launches the server waits: go-sdk's example server against the
// toolwire binary (toolwire serve, and toolwire serve data),
// servers/toolwirecalc and toolwire serve built without DuckDB. Each b.N starts every server once, in an order
// that turns by one each time, so that the machine's drift weighs on all
// alike. Reported: each server's median (ms) and the ratio of its median
// to go-sdk's (x-gosdk). Run it with a fixed count:
//
//	go test -run '^$' -bench ColdStart -benchtime 40x
func BenchmarkColdStart(b *testing.B) {
	buildCold(b)
	for _, s := range coldServers { // warm the page cache
		if _, err := coldStart(s); err != nil {
			b.Fatal(err)
		}
	}
	times := make([][]time.Duration, len(coldServers))
	for i := 0; b.Loop(); i++ {
		for k := range coldServers {
			j := (i + k) % len(coldServers)
			d, err := coldStart(coldServers[j])
			if err != nil {
				b.Fatal(err)
			}
			times[j] = append(times[j], d)
		}
	}
	median := func(ds []time.Duration) float64 {
		ds = slices.Clone(ds)
		slices.Sort(ds)
		return float64(ds[len(ds)/2].Microseconds()) / 1e3
	}
	base := median(times[0])
	for j, s := range coldServers {
		m := median(times[j])
		b.ReportMetric(m, s.name+"-ms")
		if j > 0 {
			b.ReportMetric(m/base, s.name+"-x-gosdk")
		}
	}
}
