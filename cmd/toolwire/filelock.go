package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/gofrs/flock"
)

// lockWait is how long an edit waits for another toolwire process that
// is editing the same file.
const lockWait = 10 * time.Second

// withFileLock runs fn while holding an exclusive lock that every
// toolwire process takes before it reads, changes and writes the file at
// path, so that two edits at once (two `toolwire mcp add` in parallel
// scripts) both land instead of the later write dropping the earlier
// one. The lock is a file of toolwire's own, named by the file's real
// path, so nothing is left beside the user's file.
func withFileLock(path string, fn func() error) error {
	real, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("config %s: %w", path, err)
	}
	if r, err := filepath.EvalSymlinks(real); err == nil {
		real = r
	}
	sum := sha256.Sum256([]byte(real))
	dir := filepath.Join(filepath.Dir(trustPath()), "locks")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("config %s: cannot create the lock directory: %w", path, err)
	}
	l := flock.New(filepath.Join(dir, hex.EncodeToString(sum[:8])+".lock"), flock.SetPermissions(0o600))
	ctx, cancel := context.WithTimeout(context.Background(), lockWait)
	defer cancel()
	ok, err := l.TryLockContext(ctx, 5*time.Millisecond)
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("config %s: cannot lock it for editing (%s): %w", path, l.Path(), err)
	}
	if !ok {
		return fmt.Errorf("config %s: another toolwire process has been editing it for %s: try again when it is done (its lock is %s)", path, lockWait, l.Path())
	}
	defer l.Unlock()
	return fn()
}
