package data

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// within reports whether the absolute, clean path p is one of the allowed
// directories or inside one.
func (t *Toolset) within(p string) bool {
	for _, d := range t.dirs {
		if p == d || strings.HasPrefix(p, strings.TrimSuffix(d, string(filepath.Separator))+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// absolute makes a path a model passed absolute and clean: a relative
// path is taken from the first allowed directory.
func (t *Toolset) absolute(p string) (string, error) {
	if strings.TrimSpace(p) == "" {
		return "", errors.New("the path is empty: pass the path of a file, relative to " + t.dirs[0])
	}
	if strings.ContainsRune(p, 0) {
		return "", fmt.Errorf("the path %q contains a NUL byte", p)
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(t.dirs[0], p)
	}
	return filepath.Clean(p), nil
}

func (t *Toolset) outside(p string) error {
	return fmt.Errorf("%s is outside the directories this server may use (%s): pass a path inside them", p, strings.Join(t.dirs, ", "))
}

// readable returns the real path of an existing file a model asked to
// read, refusing paths outside the allowed directories and symlinks that
// lead out of them.
func (t *Toolset) readable(p string) (string, os.FileInfo, error) {
	abs, err := t.absolute(p)
	if err != nil {
		return "", nil, err
	}
	if !t.within(abs) {
		return "", nil, t.outside(abs)
	}
	real, err := filepath.EvalSymlinks(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil, fmt.Errorf("there is no file %s: check the name (relative paths start at %s)", abs, t.dirs[0])
	}
	if err != nil {
		return "", nil, fmt.Errorf("cannot read %s: %w", abs, err)
	}
	if !t.within(real) {
		return "", nil, fmt.Errorf("%s is a symlink to %s, outside the directories this server may use (%s): pass a file inside them",
			abs, real, strings.Join(t.dirs, ", "))
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", nil, fmt.Errorf("cannot read %s: %w", abs, err)
	}
	if fi.IsDir() {
		return "", nil, fmt.Errorf("%s is a directory: pass the path of a file in it", abs)
	}
	if !fi.Mode().IsRegular() { // reading a FIFO or a device can block for ever
		return "", nil, fmt.Errorf("%s is not a regular file (%s): pass the path of a regular file", abs, fileKind(fi.Mode()))
	}
	return real, fi, nil
}

// writable returns the real path of a file a model asked to write: its
// directory must exist inside the allowed directories, and an existing
// file there must not be a symlink leading out, nor a directory.
func (t *Toolset) writable(p string) (string, error) {
	abs, err := t.absolute(p)
	if err != nil {
		return "", err
	}
	if !t.within(abs) {
		return "", t.outside(abs)
	}
	dir, err := filepath.EvalSymlinks(filepath.Dir(abs))
	if err != nil {
		return "", fmt.Errorf("cannot write %s: its directory %s does not exist: save into an existing directory", abs, filepath.Dir(abs))
	}
	if !t.within(dir) {
		return "", fmt.Errorf("cannot write %s: its directory is a symlink to %s, outside the directories this server may use (%s)",
			abs, dir, strings.Join(t.dirs, ", "))
	}
	real := filepath.Join(dir, filepath.Base(abs))
	if fi, err := os.Lstat(real); err == nil {
		if fi.Mode()&fs.ModeSymlink != 0 {
			return "", fmt.Errorf("cannot write %s: it is a symlink; pass the path of a regular file", abs)
		}
		if fi.IsDir() {
			return "", fmt.Errorf("cannot write %s: it is a directory; pass a file name", abs)
		}
		if !fi.Mode().IsRegular() {
			return "", fmt.Errorf("cannot write %s: it is not a regular file (%s); pass the path of a regular file", abs, fileKind(fi.Mode()))
		}
	}
	return real, nil
}

// fileKind names the kind of a file that is not a regular file.
func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "mode " + m.Type().String()
}
