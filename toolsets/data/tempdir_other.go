//go:build !(linux || darwin)

package data

import "os"

// lockTemp does nothing where there is no flock: a temporary directory a
// killed process left stays.
func lockTemp(string) (*os.File, error) { return nil, nil }

// sweepTemp does nothing where there is no flock.
func sweepTemp() {}
