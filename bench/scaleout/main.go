// Command scaleout is the load generator of bench/scaleout.sh: through one
// URL (haproxy in front of toolwire data replicas) it loads a CSV file
// once (load_csv, a table handle in Redis and a Parquet file in the shared
// data directory), then has -clients clients call head on that table as
// fast as they can, each a stateless 2026-07-28 request on a keep-alive
// connection of its own (bench/driver), and prints calls/s, latency and
// the CPU each process named in -cpu used over the measured window.
//
//	scaleout -url http://127.0.0.1:8080/mcp -csv /path/to/file.csv -clients 32 \
//	    -cpu replicas=101,102 -cpu haproxy=103 -cpu redis=104
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/toolwire/toolwire/bench/driver"
)

// cpuFlag is the -cpu flag: NAME=PID,PID,... (repeatable).
type cpuFlag struct {
	names []string
	pids  [][]int
}

func (f *cpuFlag) String() string { return strings.Join(f.names, ",") }

func (f *cpuFlag) Set(v string) error {
	name, list, ok := strings.Cut(v, "=")
	if !ok || name == "" {
		return fmt.Errorf("-cpu %q: want NAME=PID[,PID...]", v)
	}
	var pids []int
	for _, s := range strings.Split(list, ",") {
		pid, err := strconv.Atoi(s)
		if err != nil {
			return fmt.Errorf("-cpu %q: %q is not a process id", v, s)
		}
		pids = append(pids, pid)
	}
	f.names, f.pids = append(f.names, name), append(f.pids, pids)
	return nil
}

func main() {
	url := flag.String("url", "", "the MCP endpoint (haproxy's), http://host:port/mcp")
	csv := flag.String("csv", "", "the CSV file to load, as the replicas see its path")
	clients := flag.Int("clients", 32, "concurrent clients")
	warmup := flag.Duration("warmup", 2*time.Second, "calls before the measured window")
	duration := flag.Duration("duration", 10*time.Second, "the measured window")
	var cpu cpuFlag
	flag.Var(&cpu, "cpu", "NAME=PID[,PID...]: report the CPU these processes use in the window (repeatable)")
	flag.Parse()
	if *url == "" || *csv == "" {
		fmt.Fprintln(os.Stderr, "scaleout: -url and -csv are required")
		os.Exit(2)
	}
	if err := run(*url, *csv, *clients, *warmup, *duration, &cpu); err != nil {
		fmt.Fprintln(os.Stderr, "scaleout:", err)
		os.Exit(1)
	}
}

func run(url, csv string, clients int, warmup, duration time.Duration, cpu *cpuFlag) error {
	hc, err := driver.NewHTTPClient(url)
	if err != nil {
		return err
	}
	defer hc.CloseIdleConnections()
	table, err := load(hc.ConnectModern(), csv)
	if err != nil {
		return err
	}
	call, err := driver.NewModernToolCall("head", map[string]any{"table": table, "n": 5})
	if err != nil {
		return err
	}

	var (
		measuring, stop atomic.Bool
		calls, errs     atomic.Int64
		firstErr        atomic.Value
		wg              sync.WaitGroup
		lats            = make([][]time.Duration, clients)
	)
	for i := range clients {
		s := hc.ConnectModern()
		wg.Go(func() {
			defer s.Close()
			for !stop.Load() {
				t0 := time.Now()
				res, err := s.Call(call)
				if err == nil && !bytes.Contains(res, []byte(`"isError":true`)) {
					if measuring.Load() {
						calls.Add(1)
						lats[i] = append(lats[i], time.Since(t0))
					}
					continue
				}
				if err == nil {
					err = fmt.Errorf("head: %.300s", res)
				}
				errs.Add(1)
				firstErr.CompareAndSwap(nil, err)
			}
		})
	}
	time.Sleep(warmup)
	before := readCPU(cpu)
	self0, machine0 := selfCPU(), machineBusy()
	measuring.Store(true)
	start := time.Now()
	time.Sleep(duration)
	measuring.Store(false)
	elapsed := time.Since(start)
	after := readCPU(cpu)
	self1, machine1 := selfCPU(), machineBusy()
	stop.Store(true)
	wg.Wait()
	if e := errs.Load(); e > 0 {
		return fmt.Errorf("%d calls failed; the first: %v", e, firstErr.Load())
	}

	all := slices.Concat(lats...)
	slices.Sort(all)
	pct := func(p float64) float64 {
		if len(all) == 0 {
			return 0
		}
		i := max(0, min(int(p*float64(len(all))+0.999999)-1, len(all)-1))
		return float64(all[i]) / float64(time.Millisecond)
	}
	fmt.Printf("calls/s %.0f  p50-ms %.2f  p99-ms %.2f  calls %d  window %.1fs\n",
		float64(calls.Load())/elapsed.Seconds(), pct(0.5), pct(0.99), calls.Load(), elapsed.Seconds())
	cores := func(d time.Duration) float64 { return d.Seconds() / elapsed.Seconds() }
	ours := self1 - self0
	fmt.Printf("cpu (cores) loadgen %.2f", cores(self1-self0))
	for i, name := range cpu.names {
		fmt.Printf("  %s %.2f", name, cores(after[i]-before[i]))
		ours += after[i] - before[i]
	}
	// What else ran on the machine meanwhile (other users' load).
	fmt.Printf("  others %.2f  (machine busy %.2f)\n", cores(max(machine1-machine0-ours, 0)), cores(machine1-machine0))
	return nil
}

// load calls load_csv and returns the table's handle.
func load(s *driver.HTTPSession, csv string) (string, error) {
	defer s.Close()
	c, err := driver.NewModernToolCall("load_csv", map[string]any{"path": csv})
	if err != nil {
		return "", err
	}
	res, err := s.Call(c)
	if err != nil {
		return "", fmt.Errorf("load_csv: %w", err)
	}
	var r struct {
		StructuredContent struct {
			Table string `json:"table"`
		} `json:"structuredContent"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return "", fmt.Errorf("load_csv result: %w", err)
	}
	if r.IsError || r.StructuredContent.Table == "" {
		return "", errors.New("load_csv: no table in " + string(res))
	}
	return r.StructuredContent.Table, nil
}

// readCPU returns the CPU time (user + system) each group of processes
// has used, from /proc/PID/stat (10 ms ticks).
func readCPU(f *cpuFlag) []time.Duration {
	out := make([]time.Duration, len(f.pids))
	for i, pids := range f.pids {
		for _, pid := range pids {
			b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
			if err != nil {
				continue
			}
			j := bytes.LastIndexByte(b, ')')
			if j < 0 {
				continue
			}
			fields := strings.Fields(string(b[j+1:]))
			if len(fields) < 13 {
				continue
			}
			u, _ := strconv.ParseInt(fields[11], 10, 64)
			s, _ := strconv.ParseInt(fields[12], 10, 64)
			out[i] += time.Duration(u+s) * 10 * time.Millisecond
		}
	}
	return out
}

// machineBusy returns the CPU time all the machine's cores have spent
// busy (not idle or waiting for I/O), from /proc/stat (10 ms ticks).
func machineBusy() time.Duration {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	fields := strings.Fields(line) // cpu user nice system idle iowait irq softirq steal ...
	var busy int64
	for i, f := range fields[1:] {
		if i == 3 || i == 4 || i >= 8 { // idle, iowait; guest time is already in user
			continue
		}
		n, _ := strconv.ParseInt(f, 10, 64)
		busy += n
	}
	return time.Duration(busy) * 10 * time.Millisecond
}

// selfCPU returns the CPU time this process has used.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
