//go:build !race

package mcp_test

// raceEnabled reports whether the race detector is on.
const raceEnabled = false
