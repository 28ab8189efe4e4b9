//go:build linux || darwin

package data

import (
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// tempLock is the file in a toolset's temporary directory that its
// process holds locked (flock) while it runs: the kernel releases the
// lock when the process dies, however it dies.
const tempLock = ".lock"

// lockTemp locks the temporary directory dir for this process; the lock
// lasts until the file returned is closed or the process ends.
func lockTemp(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, tempLock), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// sweepTemp removes the temporary directories of toolsets whose process
// died without closing them (killed): those unchanged for a minute
// (longer than a directory goes between its creation and its lock) whose
// lock no process holds. A directory without a lock file is left alone.
func sweepTemp() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "toolwire-data-*"))
	for _, d := range dirs {
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() || time.Since(fi.ModTime()) < time.Minute {
			continue
		}
		f, err := os.OpenFile(filepath.Join(d, tempLock), os.O_RDWR, 0)
		if err != nil {
			continue
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			_ = os.RemoveAll(d)
		}
		f.Close()
	}
}
