// Package handle keeps server-side values behind handles: short strings a
// tool returns to the model instead of the value itself (a table, an open
// file), which later tools take as ordinary arguments and resolve back to
// the value. It is the MCP 2026-07-28 answer to an implicit context that
// must also work across MCP ("state handles" in server/tools.mdx), and the
// same mechanism serves in-process function calling.
//
// A handle is a kind prefix, an underscore and 22 characters of a
// URL-safe alphabet carrying 128 random bits ("tbl_Qx0…"): opaque and
// unguessable. Values live in a Store (Memory here; a Redis store in its
// own module lets replicas share them), scoped to the caller that created
// them (tool.CallerFrom), with a lifetime after last use and a memory
// bound that drops the least recently used first.
//
// Tools declare handle parameters with the field type Of[T] and are made
// with Tool, which resolves every such field for the caller before the
// tool's function runs; Put stores a value and returns its handle.
package handle

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// randomLen is the length of a handle's random part: 16 bytes, 128 bits,
// in unpadded URL-safe base64.
const randomLen = 22

// Kind describes the values of one Go type kept behind handles.
type Kind struct {
	// Prefix starts every handle of the kind ("tbl"): 1 to 8 lower-case
	// ASCII letters. The handle is Prefix + "_" + its random part.
	Prefix string
	// Noun names one value of the kind for a model ("table").
	Noun string
	// Again tells a model how to get a new value when a handle of the
	// kind has expired ("load the file again").
	Again string
}

// Value is implemented by the Go types kept behind handles: it names
// their kind. It must work on the zero value (a nil pointer too).
type Value interface {
	HandleKind() Kind
}

// Errors a resolution returns, told apart with errors.Is. All of them are
// errors a model can act on: their messages say what to do.
var (
	// ErrMalformed: the string is not a handle at all.
	ErrMalformed = errors.New("not a handle")
	// ErrWrongKind: a handle of another kind than the parameter takes.
	ErrWrongKind = errors.New("handle of the wrong kind")
	// ErrExpired: no value behind the handle for this caller: it expired,
	// was evicted or released, never existed, or belongs to another
	// caller (which reads exactly as if it never existed). The message
	// says which of the first three when the store remembers (Memory
	// does, for its owner), and otherwise that the handle is unknown.
	ErrExpired = errors.New("handle expired")
	// ErrTooLarge: a value larger than the store's whole memory bound.
	ErrTooLarge = errors.New("value larger than the handle store's memory bound")
	// ErrUnavailable: the store cannot be reached now (its server is
	// down); the call may be retried.
	ErrUnavailable = errors.New("handle store unavailable")
	// ErrCorrupt: the store holds something under the handle that is not
	// a value of its kind as this program writes it (a forged or damaged
	// entry in a shared store); loading the value again makes a new one.
	ErrCorrupt = errors.New("handle's stored value is corrupt")
)

// NewID returns a new handle (its id) of kind k.
func NewID(k Kind) string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	buf := make([]byte, 0, len(k.Prefix)+1+randomLen)
	buf = append(buf, k.Prefix...)
	buf = append(buf, '_')
	buf = base64.RawURLEncoding.AppendEncode(buf, b[:])
	return string(buf)
}

// Parse checks that s is a well-formed handle and returns its kind prefix.
func Parse(s string) (prefix string, err error) {
	prefix, random, ok := strings.Cut(s, "_")
	if !ok || !validPrefix(prefix) || len(random) != randomLen {
		return "", fmt.Errorf("%q: %w", clip(s), ErrMalformed)
	}
	for i := 0; i < len(random); i++ {
		if !urlSafe(random[i]) {
			return "", fmt.Errorf("%q: %w", clip(s), ErrMalformed)
		}
	}
	// The last character carries 4 bits and 2 zero bits: only some
	// characters can end a canonical encoding.
	if strings.IndexByte(canonicalLast, random[randomLen-1]) < 0 {
		return "", fmt.Errorf("%q: %w", clip(s), ErrMalformed)
	}
	return prefix, nil
}

// canonicalLast lists the characters whose 6 bits end in two zero bits.
const canonicalLast = "AEIMQUYcgkosw048"

func validPrefix(p string) bool {
	if len(p) == 0 || len(p) > 8 {
		return false
	}
	for i := 0; i < len(p); i++ {
		if p[i] < 'a' || p[i] > 'z' {
			return false
		}
	}
	return true
}

func urlSafe(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_'
}

// clip shortens s for an error message.
func clip(s string) string {
	if len(s) > 40 {
		return s[:37] + "..."
	}
	return s
}

// Error is a handle that did not resolve, with a message written for a
// model: what is wrong and what to do. errors.Is tells its Reason
// (ErrMalformed, ErrWrongKind, ErrExpired).
type Error struct {
	Handle string
	Reason error
	msg    string
}

func (e *Error) Error() string { return e.msg }

// Unwrap returns the reason.
func (e *Error) Unwrap() error { return e.Reason }

// check parses s as a handle of kind k and returns an *Error written for
// a model when it is not one.
func check(s string, k Kind) error {
	prefix, err := Parse(s)
	if err != nil {
		return &Error{Handle: s, Reason: ErrMalformed, msg: fmt.Sprintf(
			"%q is not a %s handle: a %s handle is %s_ followed by %d letters, digits, - or _; pass the handle a tool returned, unchanged",
			clip(s), k.Noun, k.Noun, k.Prefix, randomLen)}
	}
	if prefix != k.Prefix {
		return &Error{Handle: s, Reason: ErrWrongKind, msg: fmt.Sprintf(
			"%s is a %s_ handle, not a %s handle; pass a %s handle (%s_…)", s, prefix, k.Noun, k.Noun, k.Prefix)}
	}
	return nil
}

// expired is the error for a handle that has no value for the caller,
// from err, the store's: why, when the store knows (a Memory remembers
// the handles it dropped); otherwise what may have happened, the same
// for a handle another caller holds as for one never made, so that no
// caller learns of another's handles.
func expired(id string, k Kind, err error) error {
	var gone *goneError
	var msg string
	switch {
	case !errors.As(err, &gone):
		msg = fmt.Sprintf("handle %s is unknown to this server: it may belong to another session or user, the server may have restarted since it was made, or it expired; if you still need the %s, %s", id, k.Noun, again(k))
	case gone.why == droppedExpired:
		msg = fmt.Sprintf("handle %s expired: it was unused for %s; %s", id, duration(gone.ttl), again(k))
	case gone.why == droppedEvicted:
		msg = fmt.Sprintf("handle %s was dropped to make room for newer ones (the server's memory bound); %s", id, again(k))
	default:
		msg = fmt.Sprintf("handle %s was released; %s", id, again(k))
	}
	return &Error{Handle: id, Reason: ErrExpired, msg: msg}
}

// again says how to get a new value of kind k.
func again(k Kind) string {
	if k.Again == "" {
		return "create a new " + k.Noun
	}
	return k.Again
}
