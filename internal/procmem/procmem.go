// Package procmem reads this process's resident memory from /proc (Linux),
// for tests and soak runs that bound it.
package procmem

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
)

// RSS returns the process's resident set size, in bytes.
func RSS() (int64, error) { return status("VmRSS:") }

// PeakRSS returns the process's peak resident set size (VmHWM) since it
// started or since the last ResetPeak, in bytes.
func PeakRSS() (int64, error) { return status("VmHWM:") }

// ResetPeak resets the peak resident set size to the current one.
func ResetPeak() error {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		return fmt.Errorf("resetting the peak RSS: %w", err)
	}
	return nil
}

func status(field string) (int64, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, fmt.Errorf("reading memory figures: %w", err)
	}
	for line := range bytes.Lines(b) {
		if v, ok := bytes.CutPrefix(line, []byte(field)); ok {
			kb, err := strconv.ParseInt(string(bytes.TrimSuffix(bytes.TrimSpace(v), []byte(" kB"))), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("/proc/self/status %s %q: %w", field, v, err)
			}
			return kb << 10, nil
		}
	}
	return 0, errors.New("no " + field + " in /proc/self/status")
}
