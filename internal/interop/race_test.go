//go:build race

package interop

// raceEnabled reports whether the test binary was built with -race; the
// toolwire binary the tests build then gets the race detector too.
const raceEnabled = true
