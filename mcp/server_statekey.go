package mcp

import (
	"fmt"
	"os"
)

// MinStateKey is the length, in bytes, of the shortest key ReadStateKey
// takes for Server.StateKey.
const MinStateKey = 16

// ReadStateKey reads a key for Server.StateKey from a file, so that the
// replicas of a server behind a load balancer sign and check the
// requestState of multi round-trip requests with one key. A key shorter
// than MinStateKey is refused, with how to make one.
func ReadStateKey(path string) ([]byte, error) {
	key, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("the state key: %w", err)
	}
	if len(key) < MinStateKey {
		return nil, fmt.Errorf("the state key in %s has %d bytes, too short to sign with (%d or more): write 32 random bytes (head -c 32 /dev/urandom >%s)", path, len(key), MinStateKey, path)
	}
	return key, nil
}
