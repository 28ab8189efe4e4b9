package oauth

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	dbus "github.com/godbus/dbus/v5"
	"github.com/zalando/go-keyring"
)

// The keyring tests use go-keyring's MockInit and MockInitWithError: the
// library's own test double for the OS service, which cannot run here
// (the Secret Service needs a desktop session, the Keychain and the
// Credential Manager other systems). They replace the library's global
// provider, so these tests do not run in parallel.

func TestKeyringStore(t *testing.T) {
	keyring.MockInit()
	dir := t.TempDir()
	s := &KeyringStore{Service: "toolwire-test", Index: filepath.Join(dir, "keyring-index.json")}
	storeContract(t, s)

	// The secrets are in the keyring, under the issuer, client and
	// resource; the index holds none of them.
	ctx := context.Background()
	g := testGrant("https://mcp.example.com/mcp")
	if err := s.Save(ctx, g); err != nil {
		t.Fatal(err)
	}
	item, err := keyring.Get("toolwire-test", itemName(g.Issuer, g.ClientID, g.Resource))
	if err != nil {
		t.Fatalf("no keyring item for the grant: %v", err)
	}
	for _, sec := range []string{testAccess, testRefresh, testClientSecret} {
		if !strings.Contains(item, sec) {
			t.Errorf("the keyring item lacks a secret")
		}
	}
	idx, err := os.ReadFile(s.Index)
	if err != nil {
		t.Fatal(err)
	}
	noSecrets(t, "the index", string(idx))
	for _, want := range []string{"alice", "https://as.example.com", "client-1", "mcp:write", "2030-01-02T03:04:05Z"} {
		if !bytes.Contains(idx, []byte(want)) {
			t.Errorf("the index lacks %q:\n%s", want, idx)
		}
	}
	if fi, _ := os.Stat(s.Index); fi.Mode().Perm() != 0o600 {
		t.Errorf("index mode %#o, want 0600", fi.Mode().Perm())
	}

	// A grant from another authorization server replaces the old item.
	moved := testGrant(g.Resource)
	moved.Issuer = "https://as2.example.com"
	if err := s.Save(ctx, moved); err != nil {
		t.Fatal(err)
	}
	if _, err := keyring.Get("toolwire-test", itemName(g.Issuer, g.ClientID, g.Resource)); !errors.Is(err, keyring.ErrNotFound) {
		t.Errorf("the old issuer's item is still in the keyring: %v", err)
	}
	if got, err := s.Load(ctx, g.Resource); err != nil || got.Issuer != moved.Issuer {
		t.Errorf("Load after the move: %v %+v", err, got)
	}

	// An item removed from the keyring behind the index's back: a login
	// is needed, and the error says why.
	if err := keyring.Delete("toolwire-test", itemName(moved.Issuer, moved.ClientID, moved.Resource)); err != nil {
		t.Fatal(err)
	}
	_, err = s.Load(ctx, g.Resource)
	if !errors.Is(err, ErrNoGrant) || !strings.Contains(err.Error(), "removed from the keyring") {
		t.Errorf("Load of an item gone from the keyring: %v", err)
	}
}

// TestKeyringFailures: a keyring that fails is an error wrapping
// ErrKeyring that says what to do and holds no secret; a resource the
// index does not list never reaches the keyring.
func TestKeyringFailures(t *testing.T) {
	ctx := context.Background()
	locked := errors.New("failed to unlock correct collection '/org/freedesktop/secrets/aliases/default'")
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"locked", locked, "unlock the OS keyring"},
		{"dismissed", dbus.Error{Name: "org.freedesktop.Secret.Error.IsLocked", Body: []any{"Cannot get secret of a locked object"}}, "unlock the OS keyring"},
		{"no collection", dbus.Error{Name: "org.freedesktop.Secret.Error.NoSuchObject", Body: []any{"No such object path"}}, "unlock the OS keyring"},
		{"too big", keyring.ErrSetDataTooBig, "too big for the OS keyring"},
		{"gone", keyring.ErrUnsupportedPlatform, "does not answer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			keyring.MockInit()
			s := &KeyringStore{Service: "toolwire-test", Index: filepath.Join(t.TempDir(), "keyring-index.json")}
			r := "https://mcp.example.com/mcp"
			if err := s.Save(ctx, testGrant(r)); err != nil {
				t.Fatal(err)
			}
			keyring.MockInitWithError(tt.err)
			if _, err := s.Load(ctx, "https://unlisted.example.com"); !errors.Is(err, ErrNoGrant) {
				t.Errorf("Load of an unlisted resource called the keyring: %v", err)
			}
			ops := map[string]func() error{
				"Save":   func() error { return s.Save(ctx, testGrant(r)) },
				"Load":   func() error { _, err := s.Load(ctx, r); return err },
				"Delete": func() error { return s.Delete(ctx, r) },
			}
			for op, f := range ops {
				if tt.name == "too big" && op != "Save" {
					continue
				}
				err := f()
				if !errors.Is(err, ErrKeyring) || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("%s: %v, want ErrKeyring saying %q", op, err, tt.want)
				}
				if err != nil {
					noSecrets(t, op+"'s error", err.Error())
				}
			}
			if l, err := s.List(ctx); err != nil || len(l) != 1 {
				t.Errorf("List needs no keyring: %v %v", l, err)
			}
		})
	}
}

// TestKeyringCallBounded: a keyring call that never returns (a prompt to
// unlock nobody answers) ends with the context.
func TestKeyringCallBounded(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	block := make(chan struct{})
	defer close(block)
	start := time.Now()
	err := keyringCall(ctx, func() error {
		select {
		case <-block:
		case <-time.After(3 * time.Second):
		}
		return nil
	})
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 2*time.Second {
		t.Fatalf("keyringCall: %v after %v", err, time.Since(start))
	}
}

func TestKeyringUnavailable(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{keyring.ErrUnsupportedPlatform, true},
		{fmt.Errorf("wrapped: %w", keyring.ErrUnsupportedPlatform), true},
		{&exec.Error{Name: "dbus-launch", Err: exec.ErrNotFound}, true},
		{&net.OpError{Op: "dial", Net: "unix", Err: os.ErrNotExist}, true},
		{errors.New("dbus: couldn't determine address of session bus"), true},
		{dbus.Error{Name: "org.freedesktop.DBus.Error.ServiceUnknown", Body: []any{"The name org.freedesktop.secrets was not provided by any .service files"}}, true},
		{dbus.Error{Name: "org.freedesktop.Secret.Error.IsLocked"}, false},
		{dbus.Error{Name: "org.freedesktop.Secret.Error.NoSuchObject"}, false},
		{errors.New("failed to unlock correct collection '/x'"), false},
		{keyring.ErrNotFound, false},
		{keyring.ErrSetDataTooBig, false},
	}
	for _, tt := range tests {
		if got := keyringUnavailable(tt.err); got != tt.want {
			t.Errorf("keyringUnavailable(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}

// TestKeyringRealDBus asks the real Secret Service client (no mock, in a
// child process, as the mock replaces the library's provider for good)
// where there is none: a D-Bus session bus without a Secret Service on
// it, and no bus at all. Both must read as "no keyring here", so that a
// UserStore falls back to its file.
func TestKeyringRealDBus(t *testing.T) {
	if os.Getenv("TOOLWIRE_TEST_KEYRING_PROBE") != "" {
		_, err := keyring.Get("toolwire-test", keyringProbe)
		fmt.Printf("unavailable=%v err=%v\n", keyringUnavailable(err), err)
		return
	}
	if _, err := exec.LookPath("dbus-daemon"); err != nil || !hasSecretServiceProvider() {
		t.Skip("needs dbus-daemon, on a system where go-keyring uses the Secret Service")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sock := filepath.Join(t.TempDir(), "bus")
	daemon := exec.CommandContext(ctx, "dbus-daemon", "--session", "--nofork", "--address=unix:path="+sock)
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = daemon.Process.Kill(); _ = daemon.Wait() }()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(sock); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("dbus-daemon did not start")
		}
	}
	for name, addr := range map[string]string{
		"bus without a Secret Service": "unix:path=" + sock,
		"no bus":                       "unix:path=" + filepath.Join(t.TempDir(), "none"),
	} {
		t.Run(name, func(t *testing.T) {
			child := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestKeyringRealDBus$")
			child.Env = append(os.Environ(), "TOOLWIRE_TEST_KEYRING_PROBE=1", "DBUS_SESSION_BUS_ADDRESS="+addr)
			out, err := child.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "unavailable=true") {
				t.Errorf("the real client's error does not read as unavailable (%v):\n%s", err, out)
			}
		})
	}
}

// hasSecretServiceProvider says whether go-keyring talks to the Secret
// Service on this system.
func hasSecretServiceProvider() bool {
	switch runtime.GOOS {
	case "linux", "freebsd", "openbsd", "netbsd", "dragonfly":
		return true
	}
	return false
}
