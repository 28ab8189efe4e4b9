//go:build !race

package interop

// raceEnabled reports whether the test binary was built with -race.
const raceEnabled = false
