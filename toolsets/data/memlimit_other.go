//go:build !linux

package data

import "errors"

// DefaultMaxMemory is the memory toolwire serve lets the data server take
// beyond what it holds once open (Config.MaxMemory, --max-memory): none
// here, since only Linux enforces RLIMIT_DATA on every allocation.
const DefaultMaxMemory = 0

// limitMemory refuses: only Linux enforces RLIMIT_DATA on every
// allocation (mmap included).
func (bounds) limitMemory() error {
	return errors.New("data: bounding the process's memory (--max-memory) needs Linux, where it sets RLIMIT_DATA: set it to 0 here")
}

// memoryLeft reports no bound: only Linux has one (limitMemory).
func memoryLeft() (int64, bool) { return 0, false }
