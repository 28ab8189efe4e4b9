package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/testhaproxy"
	"github.com/toolwire/toolwire/internal/testredis"
	"github.com/toolwire/toolwire/mcp"
)

// TestServeReplicaKill: two replicas of `toolwire serve data --http`
// sharing Redis (handles) and a data directory (tables as Parquet) behind
// haproxy (internal/testhaproxy: round-robin per request, health checks
// every 200 ms). Tables are loaded through haproxy, so on either replica;
// then, while slow calls (a query that writes a large table, a load of a
// large file) run on both and a client calls head in a loop, one replica
// is killed with SIGKILL. Every call in flight on the dead replica fails
// with a clear error (haproxy's 502, or the connection's end) within a
// bound, none hangs; the loop's calls started after the kill succeed;
// every table loaded before the kill still resolves through the
// survivor (and again after a second kill, mid-task: midTaskKill); and
// the data directory holds no
// half-written Parquet file (a table's file appears under its name only
// once complete: temp file and rename).
func TestServeReplicaKill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Redis, three replicas and two haproxy (about 25 s: a task's lease runs out)")
	}
	rs := testredis.Start(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	files, tables := t.TempDir(), t.TempDir()
	writeCSV(t, filepath.Join(files, "small.csv"), 200)
	writeCSV(t, filepath.Join(files, "medium.csv"), 3000)
	writeCSV(t, filepath.Join(files, "large.csv"), 400_000)

	var addrs []string
	var replicas []*replica
	for range 2 {
		r := startReplica(t, "data", "--allow-dir", files, "--data-dir", tables, "--redis", rs.Addr)
		replicas = append(replicas, r)
		addrs = append(addrs, r.addr)
	}
	lb := testhaproxy.Start(t, addrs)
	url := "http://" + lb.Addr + "/mcp"
	client := &mcp.Client{Info: mcp.Implementation{Name: "replica-kill", Version: "1"}} // 2026-07-28: every request on its own
	s, err := client.Connect(ctx, &mcp.HTTPTransport{URL: url})
	if err != nil {
		t.Fatalf("connecting through haproxy: %v", err)
	}
	defer s.Close()
	call := func(ctx context.Context, name string, args map[string]any) (map[string]any, error) {
		b, _ := json.Marshal(args)
		res, err := s.CallTool(ctx, name, b)
		if err != nil {
			return nil, err
		}
		if res.IsError {
			return nil, fmt.Errorf("%s: tool error: %s", name, res.Content[0].Text)
		}
		out, _ := res.StructuredContent.(map[string]any)
		return out, nil
	}

	// Tables loaded before the kill: round-robin puts them on both.
	var handles []string
	for range 6 {
		out, err := call(ctx, "load_csv", map[string]any{"path": "small.csv"})
		if err != nil {
			t.Fatalf("load_csv: %v", err)
		}
		handles = append(handles, out["table"].(string))
	}
	out, err := call(ctx, "load_csv", map[string]any{"path": "medium.csv"})
	if err != nil {
		t.Fatalf("load_csv: %v", err)
	}
	medium := out["table"].(string)

	// Slow calls in flight on both replicas when one dies.
	var killed, dead atomic.Int64 // when it was signalled and reaped, in Unix ns; 0 before
	sinceKill := func() (time.Duration, bool) {
		k := killed.Load()
		return time.Since(time.Unix(0, k)), k != 0
	}
	type outcome struct {
		what string
		err  error
		took time.Duration // from the kill to the call's end
	}
	// Started one by one, with no other traffic, they alternate between
	// the replicas (round-robin): a query and a load on each.
	victim := replicas[0]
	busy0, _ := cpuTime(victim.cmd.Process.Pid)
	var slow sync.WaitGroup
	outcomes := make(chan outcome, 4)
	for i := range 4 {
		what, name, args := "query writing a large table", "query", map[string]any{
			"sql":    "SELECT a.id, b.id AS id2, a.amount * b.amount AS p FROM t a, t b WHERE (a.id + b.id) % 2 = 0",
			"tables": map[string]any{"t": medium},
		}
		if i >= 2 {
			what, name, args = "load of a large file", "load_csv", map[string]any{"path": "large.csv"}
		}
		slow.Go(func() {
			_, err := call(ctx, name, args)
			took, _ := sinceKill()
			outcomes <- outcome{what, err, took}
		})
		time.Sleep(50 * time.Millisecond)
	}
	// The victim is at work on its share (bounded: on after 10 s anyway).
	for start := time.Now(); time.Since(start) < 10*time.Second; time.Sleep(20 * time.Millisecond) {
		if busy, ok := cpuTime(victim.cmd.Process.Pid); !ok || busy-busy0 >= 200*time.Millisecond {
			break
		}
	}
	// A client calling in a loop meanwhile. A call it starts once the
	// dead replica is gone must succeed, even before haproxy's health
	// check notices (retry-on conn-failure).
	stopLoop := make(chan struct{})
	var loop sync.WaitGroup
	var loopErrs []error
	loopAfter := 0 // calls started after the replica died, all succeeded
	loop.Go(func() {
		for {
			select {
			case <-stopLoop:
				return
			default:
			}
			after := dead.Load() != 0
			_, err := call(ctx, "head", map[string]any{"table": handles[1], "n": 3})
			switch {
			case !after:
			case err == nil:
				loopAfter++
			default:
				loopErrs = append(loopErrs, err)
			}
		}
	})

	time.Sleep(100 * time.Millisecond) // the loop is calling too
	if err := victim.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed.Store(time.Now().UnixNano())
	_ = victim.cmd.Wait()
	dead.Store(time.Now().UnixNano())

	// Every slow call ends: those on the survivor succeed, those on the
	// dead replica fail with a clear error, none hangs.
	slowDone := make(chan struct{})
	go func() { slow.Wait(); close(slowDone) }()
	select {
	case <-slowDone:
	case <-time.After(90 * time.Second):
		t.Fatal("slow calls still running 90 s after the kill: a call on the dead replica hangs")
	}
	close(outcomes)
	failed := 0
	for o := range outcomes {
		if o.err == nil {
			continue
		}
		failed++
		// haproxy answers 502 Bad Gateway, or, when the request went out on
		// a kept-alive connection to the replica, closes the client's
		// connection too (so that a client may retry as it would have
		// without a proxy): the MCP client says so.
		if msg := o.err.Error(); !strings.Contains(msg, "502 Bad Gateway") && !strings.Contains(msg, "ended before its response was complete") {
			t.Errorf("%s on the dead replica failed with %q, want haproxy's 502 Bad Gateway or the connection's end", o.what, msg)
		}
		if o.took > 10*time.Second {
			t.Errorf("%s on the dead replica failed %v after the kill, want within 10 s", o.what, o.took)
		}
		t.Logf("%s on the dead replica: %v (%v after the kill)", o.what, o.err, o.took.Round(time.Millisecond))
	}
	if failed == 0 {
		t.Error("no slow call was in flight on the killed replica: the test killed nothing mid-call")
	}

	time.Sleep(time.Second) // the loop goes on past the health checks
	close(stopLoop)
	loop.Wait()
	if len(loopErrs) > 0 {
		t.Errorf("%d of %d calls started after the replica died failed; the first: %v", len(loopErrs), len(loopErrs)+loopAfter, loopErrs[0])
	}
	if loopAfter == 0 {
		t.Error("no call succeeded after the kill")
	}

	// Every table loaded before the kill resolves through the survivor.
	for _, h := range handles {
		if _, err := call(ctx, "describe", map[string]any{"table": h}); err != nil {
			t.Errorf("table %s, loaded before the kill, after it: %v", h, err)
		}
	}

	// A kill mid-task (the Tasks extension): a second pair of replicas,
	// the survivor and a new one, behind a haproxy of their own.
	midTaskKill(ctx, t, replicas[1], medium, handles, "data", "--allow-dir", files, "--data-dir", tables, "--redis", rs.Addr)

	// Nothing half-written under a table's name: every Parquet file is
	// whole (PAR1 at both ends). The dead replica's temporary files
	// (*.parquet.tmp) are named apart, read by nobody, and swept by the
	// replicas once stale.
	entries, err := os.ReadDir(tables)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := e.Name()
		switch {
		case strings.HasSuffix(name, ".parquet"):
			b, err := os.ReadFile(filepath.Join(tables, name))
			if err != nil {
				t.Fatal(err)
			}
			if len(b) < 8 || !bytes.HasPrefix(b, []byte("PAR1")) || !bytes.HasSuffix(b, []byte("PAR1")) {
				t.Errorf("%s is not a whole Parquet file (%d bytes)", name, len(b))
			}
		case strings.HasSuffix(name, ".parquet.tmp"):
			t.Logf("left by the dead replica, for the sweep: %s", name)
		default:
			// DuckDB's own files (spill, locks) live elsewhere; tables
			// are nothing else.
			t.Logf("also in the data directory: %s", name)
		}
	}
}

// midTaskKill: a query that runs as a task (the Tasks extension) on one
// of two replicas sharing Redis (handles and tasks) behind haproxy, that
// replica killed with SIGKILL while the task runs. Polling tasks/get
// through haproxy reaches the other replica, which reports the task
// failed with a clear error once the dead replica's lease ran out
// (mcp.DefaultTaskLease), not working for ever; the client following the
// task (CallTool) ends with that error; and every table loaded before
// still resolves. survivor is a live replica of the first part; args
// start the new one.
func midTaskKill(ctx context.Context, t *testing.T, survivor *replica, medium string, handles []string, args ...string) {
	second := startReplica(t, args...)
	lb := testhaproxy.Start(t, []string{survivor.addr, second.addr})
	started := make(chan string, 1)
	client := &mcp.Client{Info: mcp.Implementation{Name: "replica-kill-task", Version: "1"},
		TaskStarted: func(id string) { started <- id }}
	s, err := client.Connect(ctx, &mcp.HTTPTransport{URL: "http://" + lb.Addr + "/mcp"})
	if err != nil {
		t.Fatalf("connecting through the second haproxy: %v", err)
	}
	defer s.Close()
	both := []*replica{survivor, second}
	var busy0 [2]time.Duration
	for i, r := range both {
		busy0[i], _ = cpuTime(r.cmd.Process.Pid)
	}

	// A query that runs for minutes (a filter on a three-way cross
	// product, 2.7e10 rows): it is a task after a second
	// (mcp.DefaultTaskAfter), and still running when its replica dies.
	type followed struct {
		err error
		at  time.Time
	}
	follow := make(chan followed, 1)
	go func() {
		args, _ := json.Marshal(map[string]any{
			"sql":    "SELECT count(*) AS n FROM t a, t b, t c WHERE (a.amount * b.amount + c.amount) % 1000003 = 7",
			"tables": map[string]any{"t": medium},
		})
		_, err := s.CallTool(ctx, "query", args)
		follow <- followed{err, time.Now()}
	}()
	var id string
	select {
	case id = <-started:
	case f := <-follow:
		t.Fatalf("the query ended (%v) without becoming a task", f.err)
	case <-time.After(30 * time.Second):
		t.Fatal("the query did not become a task within 30 s")
	}
	// The replica running it is the one at work.
	var victim *replica
	for start := time.Now(); victim == nil; time.Sleep(50 * time.Millisecond) {
		if time.Since(start) > 10*time.Second {
			t.Fatal("neither replica is at work on the task after 10 s")
		}
		for i, r := range both {
			if busy, ok := cpuTime(r.cmd.Process.Pid); ok && busy-busy0[i] >= 300*time.Millisecond {
				victim = r
				break
			}
		}
	}
	if err := victim.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	_ = victim.cmd.Wait()

	// tasks/get through haproxy, every 250 ms: the survivor answers,
	// working until the lease runs out, then failed.
	bound := mcp.DefaultTaskLease + 3*time.Second
	var task mcp.Task
	for {
		if time.Since(killed) > bound {
			t.Fatalf("task %s still %s %v after its replica was killed, want failed within the lease (%v)", id, task.Status, time.Since(killed).Round(time.Millisecond), mcp.DefaultTaskLease)
		}
		if err := s.Call(ctx, mcp.MethodTasksGet, &mcp.TaskParams{TaskID: id}, &task); err != nil {
			t.Fatalf("tasks/get %s after the kill: %v (the task's handle is lost)", id, err)
		}
		if task.Status != mcp.TaskWorking {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	failedAfter := time.Since(killed)
	if task.Status != mcp.TaskFailed || task.Error == nil || !strings.Contains(task.Error.Message, "stopped before it ended") {
		t.Fatalf("task %s after its replica was killed: status %q, error %v; want failed, saying its server stopped", id, task.Status, task.Error)
	}
	t.Logf("task %s on the killed replica: %s %v after the kill: %s", id, task.Status, failedAfter.Round(time.Millisecond), task.Error.Message)

	// The client following the task learns it too, at its polling pace
	// (backing off up to 10 s while nothing changes).
	select {
	case f := <-follow:
		if f.err == nil || !strings.Contains(f.err.Error(), "stopped before it ended") {
			t.Errorf("CallTool of the task on the killed replica returned %v, want the task's failure", f.err)
		}
		t.Logf("CallTool ended %v after the kill: %v", f.at.Sub(killed).Round(time.Millisecond), f.err)
	case <-time.After(bound + 15*time.Second - time.Since(killed)):
		t.Fatal("CallTool still follows the task 15 s after it read as failed")
	}

	// No handle lost: every table loaded before resolves through the
	// replica left.
	for _, h := range append(handles, medium) {
		args, _ := json.Marshal(map[string]any{"table": h})
		if res, err := s.CallTool(ctx, "describe", args); err != nil || res.IsError {
			t.Errorf("table %s, loaded before, after the mid-task kill: %v %v", h, err, res)
		}
	}
}

// replica is a `toolwire serve --http` process the test started.
type replica struct {
	cmd  *exec.Cmd
	addr string // host:port
}

// startReplica starts `toolwire serve --http 127.0.0.1:0 ARGS...` and
// kills it (by its PID) when the test ends.
func startReplica(t *testing.T, args ...string) *replica {
	t.Helper()
	cmd, addr, _ := serveHTTPProcess(t, args...)
	return &replica{cmd: cmd, addr: addr}
}

// cpuTime returns the CPU time (user + system) process pid has used, from
// /proc/PID/stat (10 ms ticks); false where there is no /proc.
func cpuTime(pid int) (time.Duration, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	// Fields after the command name, which may hold spaces: state is 3,
	// utime 14, stime 15.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		return 0, false
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	s, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(u+s) * 10 * time.Millisecond, true
}

// writeCSV writes a CSV file of rows rows: id, region, amount.
func writeCSV(t *testing.T, path string, rows int) {
	t.Helper()
	var b bytes.Buffer
	b.WriteString("id,region,amount\n")
	for i := range rows {
		fmt.Fprintf(&b, "%d,r%d,%d\n", i, i%7, i*37%1000)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
