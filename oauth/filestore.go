package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
)

// FileStore keeps grants, secrets included, in one JSON file that only the
// user may read (mode 0600, in a directory created 0700). It is written
// atomically (a temporary file renamed over the old one), and a file that
// others may read or write is refused with the chmod to run. Use it where
// there is no OS keyring (KeyringStore); UserStore picks between the two.
type FileStore struct {
	// Path is the file; it and its directory are created on the first
	// Save.
	Path string

	mu sync.Mutex
}

// fileData is the file's content.
type fileData struct {
	Version int               `json:"version"`
	Grants  map[string]*Grant `json:"grants"`
}

// maxStoreFile bounds what a store reads from its files.
const maxStoreFile = 16 << 20

// Load implements Store.
func (s *FileStore) Load(_ context.Context, resource string) (*Grant, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, err := s.read()
	if err != nil {
		return nil, err
	}
	g, ok := d.Grants[resource]
	if !ok {
		return nil, ErrNoGrant
	}
	return g, nil
}

// Save implements Store.
func (s *FileStore) Save(_ context.Context, g *Grant) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, err := s.read()
	if err != nil {
		return err
	}
	c := *g
	c.Scopes = append([]string(nil), g.Scopes...)
	d.Grants[g.Resource] = &c
	return s.write(d)
}

// Delete implements Store.
func (s *FileStore) Delete(_ context.Context, resource string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, err := s.read()
	if err != nil {
		return err
	}
	if _, ok := d.Grants[resource]; !ok {
		return nil
	}
	delete(d.Grants, resource)
	return s.write(d)
}

// List returns what the file holds, without secrets, sorted by resource.
func (s *FileStore) List(_ context.Context) ([]GrantInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, err := s.read()
	if err != nil {
		return nil, err
	}
	out := make([]GrantInfo, 0, len(d.Grants))
	for _, g := range d.Grants {
		out = append(out, g.Info())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Resource < out[j].Resource })
	return out, nil
}

// read reads the file; a missing file holds no grants.
func (s *FileStore) read() (*fileData, error) {
	d := &fileData{Version: 1, Grants: map[string]*Grant{}}
	b, err := readPrivateFile(s.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return d, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, d); err != nil {
		// The syntax error's text could quote the file: name its place only.
		return nil, fmt.Errorf("oauth: the token file %s is damaged (%s): delete it and log in again", s.Path, jsonErrorPlace(err))
	}
	if d.Grants == nil {
		d.Grants = map[string]*Grant{}
	}
	for r, g := range d.Grants {
		if g == nil {
			delete(d.Grants, r)
			continue
		}
		g.Resource = r
	}
	return d, nil
}

func (s *FileStore) write(d *fileData) error {
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return fmt.Errorf("oauth: encoding the token file: %w", err)
	}
	return writeFileAtomic(s.Path, append(b, '\n'))
}

// jsonErrorPlace says where JSON is broken, without quoting it.
func jsonErrorPlace(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Sprintf("not valid JSON at byte %d", syn.Offset)
	case errors.As(err, &typ):
		// Value may quote a number: leave it out.
		return fmt.Sprintf("%s is not a %s", typ.Field, typ.Type)
	}
	return "not valid JSON"
}

// checkPrivate refuses a file that others may read or write. Windows has
// no such mode bits: there the user's profile directory protects it.
func checkPrivate(path string, mode fs.FileMode) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	if !mode.IsRegular() {
		return fmt.Errorf("oauth: %s is not a regular file: move it away and log in again", path)
	}
	if perm := mode.Perm(); perm&0o077 != 0 {
		return fmt.Errorf("oauth: %s may be read or written by others (mode %#o), so its tokens may have leaked: run chmod 600 %s, and log in again if others could have read it", path, perm, path)
	}
	return nil
}

// readPrivateFile reads a file that only the user may read: checkPrivate
// holds on the open file, so a swap between the check and the read is
// no way around it.
func readPrivateFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if err := checkPrivate(path, fi.Mode()); err != nil {
		return nil, err
	}
	b, err := io.ReadAll(io.LimitReader(f, maxStoreFile+1))
	if err != nil {
		return nil, fmt.Errorf("oauth: reading %s: %w", path, err)
	}
	if len(b) > maxStoreFile {
		return nil, fmt.Errorf("oauth: %s is larger than %d MiB, which no token file is: move it away and log in again", path, maxStoreFile>>20)
	}
	return b, nil
}

// writeFileAtomic replaces path with data: a reader sees the old file or
// the new one, never a part. The file is created 0600, its directory 0700
// when it does not exist.
func writeFileAtomic(path string, data []byte) (err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("oauth: creating the directory for %s: %w", path, err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp") // mode 0600
	if err != nil {
		return fmt.Errorf("oauth: writing %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err := f.Chmod(0o600); err != nil && runtime.GOOS != "windows" {
		return fmt.Errorf("oauth: writing %s: %w", path, err)
	}
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("oauth: writing %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("oauth: writing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("oauth: writing %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("oauth: writing %s: %w", path, err)
	}
	return nil
}
