package oauth

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/zalando/go-keyring"
)

func TestUserStore(t *testing.T) {
	ctx := context.Background()
	locked := errors.New("failed to unlock correct collection '/org/freedesktop/secrets/aliases/default'")
	tests := []struct {
		name     string
		backend  Backend
		keyring  error // nil: a working keyring (the mock)
		wantFile bool  // grants go to the file
		where    string
		saveErr  string
	}{
		{name: "auto with a keyring", keyring: nil, where: "in the OS keyring"},
		{name: "auto without a keyring", keyring: keyring.ErrUnsupportedPlatform, wantFile: true, where: "as there is no OS keyring here (unsupported platform"},
		{name: "auto with a locked keyring", keyring: locked, saveErr: "the OS keyring refused access"},
		{name: "keyring", backend: BackendKeyring, keyring: nil, where: "in the OS keyring"},
		{name: "keyring without a keyring", backend: BackendKeyring, keyring: keyring.ErrUnsupportedPlatform, saveErr: "there is no OS keyring here"},
		{name: "file", backend: BackendFile, keyring: nil, wantFile: true, where: "readable only by you"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.keyring == nil {
				keyring.MockInit()
			} else {
				keyring.MockInitWithError(tt.keyring)
			}
			dir := t.TempDir()
			s, err := NewUserStore(dir, "toolwire-test", tt.backend)
			if err != nil {
				t.Fatal(err)
			}
			if tt.saveErr != "" {
				err := s.Save(ctx, testGrant("https://mcp.example.com/mcp"))
				if !errors.Is(err, ErrKeyring) || !strings.Contains(err.Error(), tt.saveErr) {
					t.Fatalf("Save: %v, want ErrKeyring saying %q", err, tt.saveErr)
				}
				noSecrets(t, "the error", err.Error())
				if _, err := os.Stat(filepath.Join(dir, tokenFileName)); err == nil {
					t.Error("the tokens went to the file although the keyring is there, or was asked for")
				}
				return
			}
			storeContract(t, s)
			if err := s.Save(ctx, testGrant("https://mcp.example.com/mcp")); err != nil {
				t.Fatal(err)
			}
			where, err := s.Where(ctx)
			if err != nil || !strings.Contains(where, tt.where) {
				t.Errorf("Where: %q, %v; want it to say %q", where, err, tt.where)
			}
			file, _ := os.ReadFile(filepath.Join(dir, tokenFileName))
			if got := strings.Contains(string(file), testAccess); got != tt.wantFile {
				t.Errorf("token in the file: %v, want %v", got, tt.wantFile)
			}
			idx, _ := os.ReadFile(filepath.Join(dir, keyringIndexName))
			noSecrets(t, "the index", string(idx))
		})
	}
}

// TestUserStoreDecidesOnce: the first Save decides where grants go, and
// Where keeps saying it though the keyring comes back; grants saved in
// either place are found, listed and deleted.
func TestUserStoreDecidesOnce(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	keyring.MockInit()
	inKeyring, _ := NewUserStore(dir, "toolwire-test", BackendAuto)
	if err := inKeyring.Save(ctx, testGrant("https://k.example.com")); err != nil {
		t.Fatal(err)
	}

	keyring.MockInitWithError(keyring.ErrUnsupportedPlatform)
	s, _ := NewUserStore(dir, "toolwire-test", BackendAuto)
	if err := s.Save(ctx, testGrant("https://f.example.com")); err != nil {
		t.Fatal(err)
	}
	first, _ := s.Where(ctx)
	keyring.MockInit()
	if again, _ := s.Where(ctx); again != first || !strings.Contains(first, tokenFileName) {
		t.Errorf("Where said %q, then %q", first, again)
	}
	l, err := s.List(ctx)
	if err != nil || len(l) != 2 || l[0].Resource != "https://f.example.com" || l[1].Resource != "https://k.example.com" {
		t.Fatalf("List: %+v %v", l, err)
	}
	// The keyring's grant was saved in the mock that is gone: a login is
	// needed; the file's is there.
	if _, err := s.Load(ctx, "https://k.example.com"); !errors.Is(err, ErrNoGrant) {
		t.Errorf("Load of the keyring's grant: %v", err)
	}
	if g, err := s.Load(ctx, "https://f.example.com"); err != nil || g.AccessToken != testAccess {
		t.Errorf("Load of the file's grant: %v", err)
	}
	for _, r := range []string{"https://k.example.com", "https://f.example.com"} {
		if err := s.Delete(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if l, _ := s.List(ctx); len(l) != 0 {
		t.Errorf("List after Delete: %+v", l)
	}
}

// TestUserStoreFallbackForgetsIndex: a login saved to the file while the
// keyring does not answer replaces the keyring's entry, so that Load finds
// it instead of asking the missing keyring.
func TestUserStoreFallbackForgetsIndex(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	keyring.MockInit()
	k, _ := NewUserStore(dir, "toolwire-test", BackendAuto)
	r := "https://mcp.example.com/mcp"
	if err := k.Save(ctx, testGrant(r)); err != nil {
		t.Fatal(err)
	}
	keyring.MockInitWithError(keyring.ErrUnsupportedPlatform)
	f, _ := NewUserStore(dir, "toolwire-test", BackendAuto)
	if _, err := f.Load(ctx, r); !errors.Is(err, ErrKeyring) || !strings.Contains(err.Error(), "does not answer") {
		t.Errorf("Load of a keyring grant without the keyring: %v", err)
	}
	g := testGrant(r)
	g.Subject = "fresh"
	if err := f.Save(ctx, g); err != nil {
		t.Fatal(err)
	}
	if got, err := f.Load(ctx, r); err != nil || got.Subject != "fresh" {
		t.Errorf("Load after the fallback Save: %v %+v", err, got)
	}
}

func TestNewUserStoreBadBackend(t *testing.T) {
	if _, err := NewUserStore(t.TempDir(), "x", "vault"); err == nil || !strings.Contains(err.Error(), "use keyring or file") {
		t.Errorf("NewUserStore(vault): %v", err)
	}
}

// fullGrant is a grant with every field set, each string field to a value
// of its own: a field a store forgets shows as a difference.
func fullGrant(t *testing.T) *Grant {
	g := testGrant("https://mcp.example.com/mcp")
	v := reflect.ValueOf(g).Elem()
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		if f.Kind() == reflect.String && f.String() == "" {
			f.SetString("value-of-" + v.Type().Field(i).Name)
		}
		if f.IsZero() {
			t.Fatalf("fullGrant leaves %s unset: teach it the field's type", v.Type().Field(i).Name)
		}
	}
	return g
}

// TestStoresKeepEveryField: every store gives back every field of a
// grant, and the keyring's index holds none of its secrets.
func TestStoresKeepEveryField(t *testing.T) {
	ctx := context.Background()
	keyring.MockInit()
	dir := t.TempDir()
	us, _ := NewUserStore(filepath.Join(dir, "user"), "toolwire-test", BackendAuto)
	stores := map[string]Store{
		"file":    &FileStore{Path: filepath.Join(dir, "tokens.json")},
		"keyring": &KeyringStore{Service: "toolwire-test", Index: filepath.Join(dir, "index.json")},
		"user":    us,
	}
	for name, s := range stores {
		want := fullGrant(t)
		if err := s.Save(ctx, want); err != nil {
			t.Fatal(err)
		}
		got, err := s.Load(ctx, want.Resource)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: Load gave %+v (%v), want %+v", name, got, err, want)
		}
	}
	idx, _ := os.ReadFile(filepath.Join(dir, "index.json"))
	noSecrets(t, "the index", string(idx))
}

// BenchmarkUserStoreLoadMiss is what a server without a login costs the
// host, once per process: a Load that finds nothing, with both files
// present and a few logins in them.
func BenchmarkUserStoreLoadMiss(b *testing.B) {
	ctx := context.Background()
	keyring.MockInit()
	dir := b.TempDir()
	k, _ := NewUserStore(dir, "toolwire-test", BackendKeyring)
	f, _ := NewUserStore(dir, "toolwire-test", BackendFile)
	for i := range 5 {
		_ = k.Save(ctx, testGrant(fmt.Sprintf("https://k%d.example.com/mcp", i)))
		_ = f.Save(ctx, testGrant(fmt.Sprintf("https://f%d.example.com/mcp", i)))
	}
	s, _ := NewUserStore(dir, "toolwire-test", BackendAuto)
	b.ResetTimer()
	for b.Loop() {
		if _, err := s.Load(ctx, "https://none.example.com/mcp"); !errors.Is(err, ErrNoGrant) {
			b.Fatal(err)
		}
	}
}

// TestUserStoreCreated: the Save that creates the token file says so,
// once; a Save to the keyring, or to a file already there, does not.
func TestUserStoreCreated(t *testing.T) {
	ctx := context.Background()
	keyring.MockInitWithError(keyring.ErrUnsupportedPlatform)
	s, _ := NewUserStore(t.TempDir(), "toolwire-test", BackendAuto)
	if s.Created() {
		t.Error("Created before any Save")
	}
	for i, want := range []bool{true, false, false} {
		if err := s.Save(ctx, testGrant(fmt.Sprintf("https://%d.example.com", i))); err != nil {
			t.Fatal(err)
		}
		if got := s.Created(); got != want {
			t.Errorf("Save %d: Created %v, want %v", i+1, got, want)
		}
	}
	keyring.MockInit()
	k, _ := NewUserStore(t.TempDir(), "toolwire-test", BackendAuto)
	if err := k.Save(ctx, testGrant("https://k.example.com")); err != nil || k.Created() {
		t.Errorf("a Save to the keyring: %v, Created %v", err, k.Created())
	}
}
