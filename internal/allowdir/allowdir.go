// Package allowdir confines the files a model names to allowed
// directories: a path is taken from the first directory when relative,
// must lie inside one of them, and may not reach out of them through a
// symbolic link; only regular files are read or written (a FIFO or a
// device could block for ever). The data toolset and package spill's
// save_result follow these rules, so --allow-dir means one thing.
package allowdir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Dirs are allowed directories: absolute, symlinks resolved (see Open).
type Dirs []string

// Open makes Dirs of dirs, which must exist; none means the working
// directory.
func Open(dirs []string) (Dirs, error) {
	if len(dirs) == 0 {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("the working directory: %w", err)
		}
		dirs = []string{wd}
	}
	out := make(Dirs, 0, len(dirs))
	for _, d := range dirs {
		real, err := RealDir(d)
		if err != nil {
			return nil, fmt.Errorf("allowed directory: %w", err)
		}
		out = append(out, real)
	}
	return out, nil
}

// RealDir returns the absolute path of the directory d, symlinks
// resolved.
func RealDir(d string) (string, error) {
	abs, err := filepath.Abs(d)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		return "", fmt.Errorf("%s: %w", d, err)
	}
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("%s is not a directory", d)
	}
	return abs, nil
}

// Within reports whether the absolute, clean path p is one of the allowed
// directories or inside one.
func (d Dirs) Within(p string) bool {
	for _, dir := range d {
		if p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// Absolute makes a path a model passed absolute and clean: a relative
// path is taken from the first allowed directory.
func (d Dirs) Absolute(p string) (string, error) {
	if strings.TrimSpace(p) == "" {
		return "", errors.New("the path is empty: pass the path of a file, relative to " + d[0])
	}
	if strings.ContainsRune(p, 0) {
		return "", fmt.Errorf("the path %q contains a NUL byte", p)
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(d[0], p)
	}
	return filepath.Clean(p), nil
}

func (d Dirs) outside(p string) error {
	return fmt.Errorf("%s is outside the directories this server may use (%s): pass a path inside them", p, strings.Join(d, ", "))
}

// Readable returns the real path of an existing file a model asked to
// read, refusing paths outside the allowed directories and symlinks that
// lead out of them.
func (d Dirs) Readable(p string) (string, os.FileInfo, error) {
	abs, err := d.Absolute(p)
	if err != nil {
		return "", nil, err
	}
	if !d.Within(abs) {
		return "", nil, d.outside(abs)
	}
	real, err := filepath.EvalSymlinks(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil, fmt.Errorf("there is no file %s: check the name (relative paths start at %s)", abs, d[0])
	}
	if err != nil {
		return "", nil, fmt.Errorf("cannot read %s: %w", abs, err)
	}
	if !d.Within(real) {
		return "", nil, fmt.Errorf("%s is a symlink to %s, outside the directories this server may use (%s): pass a file inside them",
			abs, real, strings.Join(d, ", "))
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

// Writable returns the real path of a file a model asked to write: its
// directory must exist inside the allowed directories, and an existing
// file there must not be a symlink leading out, nor a directory.
func (d Dirs) Writable(p string) (string, error) {
	abs, err := d.Absolute(p)
	if err != nil {
		return "", err
	}
	if !d.Within(abs) {
		return "", d.outside(abs)
	}
	dir, err := filepath.EvalSymlinks(filepath.Dir(abs))
	if err != nil {
		return "", fmt.Errorf("cannot write %s: its directory %s does not exist: save into an existing directory", abs, filepath.Dir(abs))
	}
	if !d.Within(dir) {
		return "", fmt.Errorf("cannot write %s: its directory is a symlink to %s, outside the directories this server may use (%s)",
			abs, dir, strings.Join(d, ", "))
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
