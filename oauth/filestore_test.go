package oauth

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
)

// Secrets the tests store: none may appear in an error or an index.
const (
	testAccess       = "at-SECRET-1f0c"
	testRefresh      = "rt-SECRET-9a2e"
	testClientSecret = "cs-SECRET-77d1"
)

func testGrant(resource string) *Grant {
	return &Grant{
		Resource: resource, Issuer: "https://as.example.com", ClientID: "client-1", ClientSecret: testClientSecret,
		AccessToken: testAccess, RefreshToken: testRefresh, TokenType: "Bearer",
		Expiry: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC), Scopes: []string{"mcp:read", "mcp:write"}, Subject: "alice",
	}
}

// noSecrets fails if s holds a test secret.
func noSecrets(t *testing.T, what, s string) {
	t.Helper()
	for _, sec := range []string{testAccess, testRefresh, testClientSecret} {
		if strings.Contains(s, sec) {
			t.Errorf("%s holds a secret (%s):\n%s", what, sec, s)
		}
	}
}

// listingStore is a Store that lists its grants.
type listingStore interface {
	Store
	List(context.Context) ([]GrantInfo, error)
}

// storeContract checks what every Store must do.
func storeContract(t *testing.T, s listingStore) {
	ctx := context.Background()
	const r1, r2 = "https://mcp.example.com/mcp", "https://other.example.com/mcp"
	if _, err := s.Load(ctx, r1); !errors.Is(err, ErrNoGrant) {
		t.Fatalf("Load of an empty store: %v, want ErrNoGrant", err)
	}
	if err := s.Delete(ctx, r1); err != nil {
		t.Fatalf("Delete of what is not there: %v", err)
	}
	want := testGrant(r1)
	if err := s.Save(ctx, want); err != nil {
		t.Fatal(err)
	}
	g2 := testGrant(r2)
	g2.Subject, g2.RefreshToken = "bob", ""
	if err := s.Save(ctx, g2); err != nil {
		t.Fatal(err)
	}
	got, err := s.Load(ctx, r1)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Load gave\n%+v\nwant\n%+v", got, want)
	}
	list, err := s.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wantList := []GrantInfo{want.Info(), g2.Info()}
	if !reflect.DeepEqual(list, wantList) {
		t.Errorf("List gave\n%+v\nwant\n%+v", list, wantList)
	}
	if !list[0].Refreshable || list[1].Refreshable {
		t.Errorf("Refreshable: %v %v, want true false", list[0].Refreshable, list[1].Refreshable)
	}
	// A new grant replaces the old.
	newer := testGrant(r1)
	newer.AccessToken, newer.Subject = testAccess+"-2", "alice2"
	if err := s.Save(ctx, newer); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Load(ctx, r1); got == nil || got.AccessToken != newer.AccessToken || got.Subject != "alice2" {
		t.Errorf("after a second Save, Load gave %+v", got)
	}
	if err := s.Delete(ctx, r1); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load(ctx, r1); !errors.Is(err, ErrNoGrant) {
		t.Errorf("Load after Delete: %v, want ErrNoGrant", err)
	}
	if got, err := s.Load(ctx, r2); err != nil || got.Subject != "bob" {
		t.Errorf("Delete removed another grant: %v %+v", err, got)
	}
}

func TestFileStore(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "conf", "toolwire")
	s := &FileStore{Path: filepath.Join(dir, "tokens.json")}
	storeContract(t, s)
	if runtime.GOOS == "windows" {
		return
	}
	fi, err := os.Stat(s.Path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("token file mode %#o, want 0600", fi.Mode().Perm())
	}
	di, _ := os.Stat(dir)
	if di.Mode().Perm() != 0o700 {
		t.Errorf("directory mode %#o, want 0700", di.Mode().Perm())
	}
}

// TestFileStoreRefusesWideMode: a token file others may read or write is
// not read, and the error says what to run; it never quotes the file.
func TestFileStoreRefusesWideMode(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no mode bits on Windows")
	}
	ctx := context.Background()
	for _, mode := range []os.FileMode{0o644, 0o640, 0o604, 0o620, 0o660, 0o606, 0o666} {
		t.Run(mode.String(), func(t *testing.T) {
			s := &FileStore{Path: filepath.Join(t.TempDir(), "tokens.json")}
			if err := s.Save(ctx, testGrant("https://mcp.example.com/mcp")); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(s.Path, mode); err != nil {
				t.Fatal(err)
			}
			for _, op := range []struct {
				name string
				f    func() error
			}{
				{"Load", func() error { _, err := s.Load(ctx, "https://mcp.example.com/mcp"); return err }},
				{"List", func() error { _, err := s.List(ctx); return err }},
				{"Save", func() error { return s.Save(ctx, testGrant("https://x.example.com")) }},
			} {
				err := op.f()
				if err == nil {
					t.Fatalf("%s read a file of mode %v", op.name, mode)
				}
				if !strings.Contains(err.Error(), "chmod 600 "+s.Path) {
					t.Errorf("%s: the error does not say to run chmod 600: %v", op.name, err)
				}
				noSecrets(t, op.name+"'s error", err.Error())
			}
		})
	}
}

// TestFileStoreAtomic: a Save replaces the file (a new inode, renamed
// over the old one) and leaves no temporary file; a Save that cannot
// write leaves the old file whole.
func TestFileStoreAtomic(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("rename semantics and modes differ on Windows")
	}
	ctx := context.Background()
	dir := t.TempDir()
	s := &FileStore{Path: filepath.Join(dir, "tokens.json")}
	if err := s.Save(ctx, testGrant("https://a.example.com")); err != nil {
		t.Fatal(err)
	}
	before, err := os.Stat(s.Path)
	if err != nil {
		t.Fatal(err)
	}
	old, _ := os.ReadFile(s.Path)
	if err := s.Save(ctx, testGrant("https://b.example.com")); err != nil {
		t.Fatal(err)
	}
	after, err := os.Stat(s.Path)
	if err != nil {
		t.Fatal(err)
	}
	if os.SameFile(before, after) {
		t.Error("Save rewrote the file in place instead of renaming a new one over it")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("the directory holds %d files, want the token file only: %v", len(entries), entries)
	}

	// A directory that cannot be written: the Save fails, the file stays.
	now, _ := os.ReadFile(s.Path)
	if err := os.Chmod(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(dir, 0o700)
	if os.Getuid() == 0 {
		t.Skip("root writes anywhere")
	}
	if err := s.Save(ctx, testGrant("https://c.example.com")); err == nil {
		t.Fatal("Save into a read-only directory succeeded")
	} else {
		noSecrets(t, "the error", err.Error())
	}
	if got, _ := os.ReadFile(s.Path); string(got) != string(now) || string(got) == string(old) {
		t.Errorf("a failed Save changed the file")
	}
}

// TestFileStoreDamaged: a damaged file is an error that says what to do
// and does not quote the file.
func TestFileStoreDamaged(t *testing.T) {
	ctx := context.Background()
	for name, body := range map[string]string{
		"truncated":  `{"version":1,"grants":{"https://a":{"access_token":"` + testAccess,
		"wrong type": `{"version":1,"grants":{"https://a":{"access_token":["` + testAccess + `"]}}}`,
		"garbage":    testAccess,
		"bad time":   `{"version":1,"grants":{"https://a":{"expiry":"` + testAccess + `"}}}`,
		"bad key":    `{"version":1,"grants":{"https://a":{"expiry":"2030-01-01T00:00:00Z","scopes":{"` + testAccess + `":1}}}}`,
	} {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "tokens.json")
			if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := (&FileStore{Path: p}).Load(ctx, "https://a")
			if err == nil || !strings.Contains(err.Error(), "delete it and log in again") {
				t.Fatalf("Load of a damaged file: %v", err)
			}
			noSecrets(t, "the error", err.Error())
		})
	}
}
