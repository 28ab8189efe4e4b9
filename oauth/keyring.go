package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"time"

	dbus "github.com/godbus/dbus/v5"
	"github.com/zalando/go-keyring"
)

// ErrKeyring reports that the OS keyring is there but failed: locked, a
// prompt to unlock it dismissed, no default collection, or an item too
// big for it. Errors of a KeyringStore wrap it.
var ErrKeyring = errors.New("the OS keyring failed")

// KeyringStore keeps the secrets of each grant (access and refresh token,
// client secret) in the OS keyring (macOS Keychain, Windows Credential
// Manager, the Secret Service on Linux and BSD) and what may be shown of
// it (issuer, client, subject, expiry, scopes) in an index file, so that
// Load finds the keyring item without asking the keyring what it holds
// and List needs no keyring at all.
//
// An item is named by the authorization server's issuer, the client and
// the resource, under Service.
type KeyringStore struct {
	// Service names the application in the keyring, e.g. "toolwire".
	Service string
	// Index is the index file, written 0600 like a FileStore.
	Index string

	mu sync.Mutex
}

// indexEntry is what the index keeps of a grant: all but its secrets,
// and whether a refresh token is kept.
type indexEntry struct {
	Grant
	Refreshable bool `json:"refreshable,omitempty"`
}

// info is what may be shown of the entry's grant.
func (e *indexEntry) info() GrantInfo {
	gi := e.Grant.Info()
	gi.Refreshable = e.Refreshable
	return gi
}

type indexData struct {
	Version int                    `json:"version"`
	Grants  map[string]*indexEntry `json:"grants"`
}

// keyringSecret is what a keyring item holds.
type keyringSecret struct {
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token,omitempty"`
	ClientSecret string `json:"client_secret,omitempty"`
}

// itemName names the keyring item of a grant.
func itemName(issuer, clientID, resource string) string {
	return url.Values{"issuer": {issuer}, "client_id": {clientID}, "resource": {resource}}.Encode()
}

// Load implements Store. A resource the index does not list is ErrNoGrant
// without a call to the keyring.
func (s *KeyringStore) Load(ctx context.Context, resource string) (*Grant, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	idx, err := s.readIndex()
	if err != nil {
		return nil, err
	}
	e, ok := idx.Grants[resource]
	if !ok {
		return nil, ErrNoGrant
	}
	var raw string
	err = keyringCall(ctx, func() (err error) {
		raw, err = keyring.Get(s.Service, itemName(e.Issuer, e.ClientID, resource))
		return err
	})
	if errors.Is(err, keyring.ErrNotFound) {
		return nil, fmt.Errorf("the OS keyring has no tokens for %s though %s lists them (were they removed from the keyring?): %w", resource, s.Index, ErrNoGrant)
	}
	if err != nil {
		return nil, s.keyringError("reading the tokens for "+resource, err)
	}
	var sec keyringSecret
	if err := json.Unmarshal([]byte(raw), &sec); err != nil {
		return nil, fmt.Errorf("the OS keyring's item for %s is damaged (%s): %w", resource, jsonErrorPlace(err), ErrNoGrant)
	}
	g := e.Grant
	g.AccessToken, g.RefreshToken, g.ClientSecret = sec.AccessToken, sec.RefreshToken, sec.ClientSecret
	return &g, nil
}

// Save implements Store: the secrets go to the keyring, the rest to the
// index. A grant that replaces one of another issuer or client removes
// the old keyring item.
func (s *KeyringStore) Save(ctx context.Context, g *Grant) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	idx, err := s.readIndex()
	if err != nil {
		return err
	}
	b, err := json.Marshal(keyringSecret{AccessToken: g.AccessToken, RefreshToken: g.RefreshToken, ClientSecret: g.ClientSecret})
	if err != nil {
		return fmt.Errorf("oauth: encoding the tokens for %s: %w", g.Resource, err)
	}
	item := itemName(g.Issuer, g.ClientID, g.Resource)
	if err := keyringCall(ctx, func() error { return keyring.Set(s.Service, item, string(b)) }); err != nil {
		if errors.Is(err, keyring.ErrSetDataTooBig) {
			return fmt.Errorf("oauth: the tokens for %s (%d bytes) are too big for the OS keyring: %w; keep them in a file instead", g.Resource, len(b), ErrKeyring)
		}
		return s.keyringError("saving the tokens for "+g.Resource, err)
	}
	if old, ok := idx.Grants[g.Resource]; ok {
		if oldItem := itemName(old.Issuer, old.ClientID, g.Resource); oldItem != item {
			if err := keyringCall(ctx, func() error { return keyring.Delete(s.Service, oldItem) }); err != nil && !errors.Is(err, keyring.ErrNotFound) {
				return s.keyringError("removing the old tokens for "+g.Resource, err)
			}
		}
	}
	e := &indexEntry{Grant: *g, Refreshable: g.RefreshToken != ""}
	e.Scopes = append([]string(nil), g.Scopes...)
	e.AccessToken, e.RefreshToken, e.ClientSecret = "", "", ""
	idx.Grants[g.Resource] = e
	return s.writeIndex(idx)
}

// Delete implements Store: it removes the keyring item and the index
// entry.
func (s *KeyringStore) Delete(ctx context.Context, resource string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	idx, err := s.readIndex()
	if err != nil {
		return err
	}
	e, ok := idx.Grants[resource]
	if !ok {
		return nil
	}
	item := itemName(e.Issuer, e.ClientID, resource)
	if err := keyringCall(ctx, func() error { return keyring.Delete(s.Service, item) }); err != nil && !errors.Is(err, keyring.ErrNotFound) {
		return s.keyringError("removing the tokens for "+resource, err)
	}
	delete(idx.Grants, resource)
	return s.writeIndex(idx)
}

// List returns what the index holds, sorted by resource; it does not call
// the keyring.
func (s *KeyringStore) List(_ context.Context) ([]GrantInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	idx, err := s.readIndex()
	if err != nil {
		return nil, err
	}
	out := make([]GrantInfo, 0, len(idx.Grants))
	for _, e := range idx.Grants {
		out = append(out, e.info())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Resource < out[j].Resource })
	return out, nil
}

// forget removes the index entry of resource, leaving the keyring alone:
// for a grant saved elsewhere while the keyring does not answer.
func (s *KeyringStore) forget(resource string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	idx, err := s.readIndex()
	if err != nil {
		return err
	}
	if _, ok := idx.Grants[resource]; !ok {
		return nil
	}
	delete(idx.Grants, resource)
	return s.writeIndex(idx)
}

func (s *KeyringStore) readIndex() (*indexData, error) {
	idx := &indexData{Version: 1, Grants: map[string]*indexEntry{}}
	b, err := readPrivateFile(s.Index)
	if errors.Is(err, fs.ErrNotExist) {
		return idx, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, idx); err != nil {
		return nil, fmt.Errorf("oauth: the keyring's index %s is damaged (%s): delete it and log in again", s.Index, jsonErrorPlace(err))
	}
	if idx.Grants == nil {
		idx.Grants = map[string]*indexEntry{}
	}
	for r, e := range idx.Grants {
		if e == nil {
			delete(idx.Grants, r)
			continue
		}
		e.Resource = r
	}
	return idx, nil
}

func (s *KeyringStore) writeIndex(idx *indexData) error {
	b, err := json.MarshalIndent(idx, "", "  ")
	if err != nil {
		return fmt.Errorf("oauth: encoding %s: %w", s.Index, err)
	}
	return writeFileAtomic(s.Index, append(b, '\n'))
}

// keyringError explains a keyring failure. The keyring's errors never
// hold the secret itself.
func (s *KeyringStore) keyringError(doing string, err error) error {
	if keyringUnavailable(err) {
		return fmt.Errorf("oauth: %s: the OS keyring does not answer (%v), though %s lists tokens kept there: start or unlock it (a desktop session does), or keep the tokens in a file: %w", doing, err, s.Index, ErrKeyring)
	}
	return fmt.Errorf("oauth: %s: %v: unlock the OS keyring and try again: %w", doing, err, ErrKeyring)
}

// keyringTimeout bounds a keyring call when ctx has no deadline: the
// Secret Service can wait forever on a prompt to unlock.
const keyringTimeout = 2 * time.Minute

// keyringCall runs f (a call to the keyring, which takes no context) and
// gives up when ctx ends; f then finishes in the background.
func keyringCall(ctx context.Context, f func() error) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, keyringTimeout)
		defer cancel()
	}
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("no answer from the OS keyring (waiting for it to be unlocked?): %w", ctx.Err())
	}
}

// keyringUnavailable tells "there is no keyring here" (an unsupported
// platform; no D-Bus session bus; no Secret Service on it) from a keyring
// that is there and refused (locked, dismissed, no collection).
func keyringUnavailable(err error) bool {
	if errors.Is(err, keyring.ErrUnsupportedPlatform) {
		return true
	}
	var de dbus.Error
	if errors.As(err, &de) {
		return de.Name == "org.freedesktop.DBus.Error.ServiceUnknown"
	}
	// Connecting to the session bus failed: no address, no daemon, no
	// dbus-launch to start one.
	var oe *net.OpError
	var ee *exec.Error
	return errors.As(err, &oe) || errors.As(err, &ee) || strings.HasPrefix(err.Error(), "dbus: ")
}
