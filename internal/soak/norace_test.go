//go:build !race

package soak_test

// raceEnabled reports whether the race detector is on.
const raceEnabled = false
