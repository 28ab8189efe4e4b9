//go:build linux

package data

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// DefaultMaxMemory is the memory toolwire serve lets the data server take
// beyond what it holds once open (Config.MaxMemory, --max-memory): 2 GiB,
// four times DuckDB's default buffer memory (DefaultMemoryLimit), which it
// includes, leaving 1.5 GiB for what a query holds outside it (vectors,
// lists and strings in flight) and for the Go side.
const DefaultMaxMemory = 2 << 30

// limitMemory sets the process's RLIMIT_DATA (soft) to its data size now
// plus b.maxMemory. RLIMIT_DATA counts private writable mappings, so the
// address space the Go runtime and malloc reserve without using (about a
// gigabyte of toolwire serve data's 1.9 GB when idle) takes none of the
// bound, unlike RLIMIT_AS.
func (b bounds) limitMemory() error {
	now, err := dataSize()
	if err != nil {
		return fmt.Errorf("data: bounding the process's memory (--max-memory): %w", err)
	}
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_DATA, &r); err != nil {
		return fmt.Errorf("data: bounding the process's memory (--max-memory): %w", err)
	}
	want := uint64(now + b.maxMemory) // r.Max is RLIM_INFINITY (all ones) when unlimited
	if r.Max != ^uint64(0) && want > r.Max {
		return fmt.Errorf("data: the process's memory bound (--max-memory, %s beyond its %s) is above its hard RLIMIT_DATA, %s: lower it",
			bytesText(b.maxMemory), bytesText(now), bytesText(int64(r.Max)))
	}
	r.Cur = want
	if err := syscall.Setrlimit(syscall.RLIMIT_DATA, &r); err != nil {
		return fmt.Errorf("data: bounding the process's memory (--max-memory): %w", err)
	}
	return nil
}

// memoryLeft returns how much more the process may take under its
// RLIMIT_DATA now; false when it is unlimited or unknown.
func memoryLeft() (int64, bool) {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_DATA, &r); err != nil || r.Cur == ^uint64(0) {
		return 0, false
	}
	now, err := dataSize()
	if err != nil {
		return 0, false
	}
	return int64(r.Cur) - now, true
}

// dataSize returns the process's data size, as RLIMIT_DATA counts it
// (VmData in /proc/self/status), in bytes.
func dataSize() (int64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmData:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("VmData in /proc/self/status: %w", err)
			}
			return kb << 10, nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("no VmData in /proc/self/status")
}
