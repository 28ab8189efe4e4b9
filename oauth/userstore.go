package oauth

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/zalando/go-keyring"
)

// GrantInfo is what may be shown of a stored grant: no secrets.
type GrantInfo struct {
	// Resource is the MCP server's canonical URL.
	Resource string `json:"resource"`
	// Issuer is the authorization server; ClientID the client it knows.
	Issuer   string `json:"issuer,omitempty"`
	ClientID string `json:"client_id,omitempty"`
	// Subject is the user the tokens were issued to, when known.
	Subject string `json:"subject,omitempty"`
	// Expiry is when the access token expires; zero means unknown.
	Expiry time.Time `json:"expiry,omitzero"`
	// Scopes are the scopes granted.
	Scopes []string `json:"scopes,omitempty"`
	// Refreshable says a refresh token is kept: the grant outlives Expiry.
	Refreshable bool `json:"refreshable,omitempty"`
}

// Info returns what may be shown of g.
func (g *Grant) Info() GrantInfo {
	return GrantInfo{
		Resource: g.Resource, Issuer: g.Issuer, ClientID: g.ClientID, Subject: g.Subject,
		Expiry: g.Expiry, Scopes: append([]string(nil), g.Scopes...), Refreshable: g.RefreshToken != "",
	}
}

// Backend names where a UserStore keeps tokens.
type Backend string

// The backends of a UserStore.
const (
	// BackendAuto is the OS keyring where there is one, else the file.
	BackendAuto Backend = ""
	// BackendKeyring is the OS keyring only (KeyringStore).
	BackendKeyring Backend = "keyring"
	// BackendFile is the file only (FileStore).
	BackendFile Backend = "file"
)

// The files of a UserStore in its directory.
const (
	tokenFileName    = "tokens.json"
	keyringIndexName = "keyring-index.json"
)

// keyringProbe is the item a UserStore asks the keyring for, to learn
// whether there is one; it is never stored.
const keyringProbe = "probe"

// UserStore is the store of one user's grants on one machine: the OS
// keyring (a KeyringStore, its index in Dir) where there is one, else a
// file only the user may read (a FileStore in Dir). Which one is decided
// by the first Save, which asks the keyring; Load, Delete and List look
// in both, without calling the keyring for a resource its index does not
// list, so that a server without a login costs two small file reads.
//
// Where says which backend it picked, for the caller to tell the user.
type UserStore struct {
	backend Backend
	service string
	kr      *KeyringStore
	file    *FileStore

	mu      sync.Mutex
	chosen  Backend
	why     string // why the file, when auto chose it
	created bool   // a Save created the token file
}

// NewUserStore returns the store kept in dir: the keyring index and the
// token file go there; service names the application in the keyring.
func NewUserStore(dir, service string, backend Backend) (*UserStore, error) {
	switch backend {
	case BackendAuto, BackendKeyring, BackendFile:
	default:
		return nil, fmt.Errorf("oauth: unknown token store %q: use keyring or file (or nothing: the keyring where there is one)", backend)
	}
	return &UserStore{
		backend: backend, service: service,
		kr:   &KeyringStore{Service: service, Index: filepath.Join(dir, keyringIndexName)},
		file: &FileStore{Path: filepath.Join(dir, tokenFileName)},
	}, nil
}

// choose decides, once, where Save puts grants.
func (s *UserStore) choose(ctx context.Context) (Backend, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.chosen != "" {
		return s.chosen, nil
	}
	if s.backend == BackendFile {
		s.chosen = BackendFile
		return s.chosen, nil
	}
	err := keyringCall(ctx, func() error {
		_, err := keyring.Get(s.service, keyringProbe)
		return err
	})
	switch {
	case err == nil || errors.Is(err, keyring.ErrNotFound):
		s.chosen = BackendKeyring
	case keyringUnavailable(err) && s.backend == BackendAuto:
		s.chosen, s.why = BackendFile, err.Error()
	case keyringUnavailable(err):
		return "", fmt.Errorf("oauth: there is no OS keyring here (%v): keep the tokens in a file instead: %w", err, ErrKeyring)
	default:
		return "", fmt.Errorf("oauth: the OS keyring refused access (%v): unlock it and try again, or keep the tokens in a file: %w", err, ErrKeyring)
	}
	return s.chosen, nil
}

// Where says where Save keeps tokens, to tell the user: "in the OS
// keyring", or "in FILE, readable only by you" and why.
func (s *UserStore) Where(ctx context.Context) (string, error) {
	b, err := s.choose(ctx)
	if err != nil {
		return "", err
	}
	if b == BackendKeyring {
		return "in the OS keyring", nil
	}
	msg := fmt.Sprintf("in %s, readable only by you", s.file.Path)
	if s.why != "" {
		msg += fmt.Sprintf(", as there is no OS keyring here (%s)", s.why)
	}
	return msg, nil
}

// Created says, once, whether a Save created the token file: then the
// caller tells the user where the tokens went (Where), as this happens
// once per machine, not once per command.
func (s *UserStore) Created() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.created
	s.created = false
	return c
}

// Load implements Store: the keyring's grant if its index lists the
// resource, else the file's.
func (s *UserStore) Load(ctx context.Context, resource string) (*Grant, error) {
	var krErr error
	if s.backend != BackendFile {
		g, err := s.kr.Load(ctx, resource)
		if !errors.Is(err, ErrNoGrant) {
			return g, err
		}
		krErr = err
	}
	if s.backend != BackendKeyring {
		g, err := s.file.Load(ctx, resource)
		if !errors.Is(err, ErrNoGrant) || krErr == nil {
			return g, err
		}
	}
	return nil, krErr
}

// Save implements Store. The first Save decides where grants go (see
// Where); the grant is then removed from the other place.
func (s *UserStore) Save(ctx context.Context, g *Grant) error {
	b, err := s.choose(ctx)
	if err != nil {
		return err
	}
	if b == BackendKeyring {
		if err := s.kr.Save(ctx, g); err != nil {
			return err
		}
		if s.backend == BackendAuto {
			return s.file.Delete(ctx, g.Resource)
		}
		return nil
	}
	_, statErr := os.Stat(s.file.Path)
	if err := s.file.Save(ctx, g); err != nil {
		return err
	}
	if errors.Is(statErr, fs.ErrNotExist) {
		s.mu.Lock()
		s.created = true
		s.mu.Unlock()
	}
	if s.backend == BackendAuto {
		// No keyring to remove its item from: forget it in the index, so
		// that Load finds the file's grant.
		return s.kr.forget(g.Resource)
	}
	return nil
}

// Delete implements Store: it removes the grant from both places.
func (s *UserStore) Delete(ctx context.Context, resource string) error {
	var errs []error
	if s.backend != BackendFile {
		errs = append(errs, s.kr.Delete(ctx, resource))
	}
	if s.backend != BackendKeyring {
		errs = append(errs, s.file.Delete(ctx, resource))
	}
	return errors.Join(errs...)
}

// List returns what both places hold, without secrets and without calling
// the keyring, sorted by resource.
func (s *UserStore) List(ctx context.Context) ([]GrantInfo, error) {
	var out []GrantInfo
	seen := map[string]bool{}
	if s.backend != BackendFile {
		l, err := s.kr.List(ctx)
		if err != nil {
			return nil, err
		}
		for _, gi := range l {
			seen[gi.Resource] = true
			out = append(out, gi)
		}
	}
	if s.backend != BackendKeyring {
		l, err := s.file.List(ctx)
		if err != nil {
			return nil, err
		}
		for _, gi := range l {
			if !seen[gi.Resource] {
				out = append(out, gi)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Resource < out[j].Resource })
	return out, nil
}
