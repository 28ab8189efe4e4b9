package handle

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/toolwire/toolwire/tool"
)

// Of is a handle to a value of type T, for a tool's input and output
// structs. In an input it is a string parameter (its schema says which
// kind of handle), and a tool made with Tool receives it resolved: Value
// returns the value for the calling caller. In an output it is written as
// the handle string.
type Of[T Value] struct {
	// ID is the handle.
	ID    string
	value T
}

// Value returns the value behind the handle, once resolved (by Tool, or
// as returned by Put).
func (h Of[T]) Value() T { return h.value }

// String returns the handle.
func (h Of[T]) String() string { return h.ID }

// MarshalJSON writes the handle as a JSON string.
func (h Of[T]) MarshalJSON() ([]byte, error) { return json.Marshal(h.ID) }

// UnmarshalJSON reads a handle from a JSON string; whether it is a
// handle of the right kind, and the caller's, is for resolution to say.
func (h *Of[T]) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("a %s handle is a string", kindOf[T]().Noun)
	}
	*h = Of[T]{ID: s}
	return nil
}

// JSONSchema describes the parameter to a model: a string, the handle of
// a kind of value.
func (Of[T]) JSONSchema() json.RawMessage {
	k := kindOf[T]()
	b, _ := json.Marshal(map[string]string{ // a map of strings always encodes
		"type":        "string",
		"description": fmt.Sprintf("A %s handle (%s_…) returned by another tool", k.Noun, k.Prefix),
	})
	return b
}

// resolve fills h's value for the caller in ctx.
func (h *Of[T]) resolve(ctx context.Context, s Store) error {
	v, err := Resolve[T](ctx, s, h.ID)
	if err != nil {
		return err
	}
	h.value = v
	return nil
}

// creates reports the kind of the handles a field of this type hands out.
func (Of[T]) creates() Kind { return kindOf[T]() }

func kindOf[T Value]() Kind {
	var zero T
	return zero.HandleKind()
}

// owner is the store owner of the caller ctx carries: anonymous callers
// share "", where handles are bearer tokens.
func owner(ctx context.Context) string {
	c, _ := tool.CallerFrom(ctx)
	return c.ID
}

// Put keeps v in s for the caller in ctx and returns its handle. size is
// what v costs the store's memory bound.
func Put[T Value](ctx context.Context, s Store, v T, size int64) (Of[T], error) {
	k := kindOf[T]()
	id := NewID(k)
	if err := s.Put(ctx, Entry{ID: id, Owner: owner(ctx), Value: v, Size: size}); err != nil {
		if errors.Is(err, ErrTooLarge) {
			return Of[T]{}, fmt.Errorf("the %s is too large to keep (%w); work on a smaller part of it", k.Noun, err)
		}
		return Of[T]{}, fmt.Errorf("keeping the %s: %w", k.Noun, err)
	}
	return Of[T]{ID: id, value: v}, nil
}

// Resolve returns the value of kind T behind handle id for the caller in
// ctx. A malformed handle, a handle of another kind, and a handle with no
// value for the caller are *Error values written for a model.
func Resolve[T Value](ctx context.Context, s Store, id string) (T, error) {
	var zero T
	k := kindOf[T]()
	if err := check(id, k); err != nil {
		return zero, err
	}
	e, err := s.Get(ctx, owner(ctx), id)
	if errors.Is(err, ErrExpired) {
		return zero, expired(id, k, err)
	}
	if errors.Is(err, ErrCorrupt) {
		return zero, fmt.Errorf("resolving %s: %w; %s", id, err, again(k))
	}
	if err != nil {
		return zero, fmt.Errorf("resolving %s: %w", id, err)
	}
	switch v := e.Value.(type) {
	case T:
		return v, nil
	case json.RawMessage:
		var t T
		if err := json.Unmarshal(v, &t); err != nil {
			return zero, fmt.Errorf("resolving %s: %w: it does not decode as a %s (%v); %s", id, ErrCorrupt, k.Noun, err, again(k))
		}
		return t, nil
	}
	return zero, fmt.Errorf("resolving %s: %w: the store holds a %T, not a %s; %s", id, ErrCorrupt, e.Value, k.Noun, again(k))
}

// Release drops the value behind handle id for the caller in ctx; errors
// as Resolve's.
func Release[T Value](ctx context.Context, s Store, id string) error {
	k := kindOf[T]()
	if err := check(id, k); err != nil {
		return err
	}
	err := s.Release(ctx, owner(ctx), id)
	if errors.Is(err, ErrExpired) {
		return expired(id, k, err)
	}
	if err != nil {
		return fmt.Errorf("releasing %s: %w", id, err)
	}
	return nil
}

// TTLNote is the sentence a tool that creates values of kind k adds to
// its description, as the MCP specification asks: how long they live.
func TTLNote(k Kind, s Store) string {
	noun := strings.ToUpper(k.Noun[:1]) + k.Noun[1:] + "s"
	text := fmt.Sprintf("%s expire after %s unused", noun, duration(s.EntryTTL()))
	if m, ok := s.(*Memory); ok && m.MaxBytes > 0 {
		text += ", or sooner when the server needs the room (least recently used first)"
	}
	return text + "."
}

// duration writes d for a reader: "30 minutes", "2 hours", "90 seconds".
func duration(d time.Duration) string {
	switch {
	case d%time.Hour == 0:
		return plural(int64(d/time.Hour), "hour")
	case d%time.Minute == 0:
		return plural(int64(d/time.Minute), "minute")
	case d%time.Second == 0:
		return plural(int64(d/time.Second), "second")
	}
	return d.String()
}

func plural(n int64, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return fmt.Sprintf("%d %ss", n, unit)
}

// resolver is a handle field a Tool resolves before its function runs.
type resolver interface {
	resolve(ctx context.Context, s Store) error
}

// creator is a handle field type in a tool's output.
type creator interface{ creates() Kind }

var (
	resolverType = reflect.TypeFor[resolver]()
	creatorType  = reflect.TypeFor[creator]()
)

// Tool makes a typed tool (tool.New) whose handle fields are resolved in
// s for the calling caller before fn runs: fields of In of type Of[T],
// []Of[T] or map[string]Of[T]. A handle that does not resolve is an error
// the model sees and can act on, and fn does not run. When Out (a struct)
// has Of[T] fields, the lifetime of their kinds is added to the
// description (see TTLNote).
//
// The tool behaves the same called in-process through a tool.Registry and
// over MCP: both give it the caller in ctx.
func Tool[In, Out any](s Store, name, description string, fn func(ctx context.Context, in In) (Out, error)) (*tool.Typed[In, Out], error) {
	for _, k := range createdKinds(reflect.TypeFor[Out]()) {
		description = strings.TrimSpace(description) + " " + TTLNote(k, s)
	}
	return tool.New(name, description, func(ctx context.Context, in In) (Out, error) {
		if err := resolveAll(ctx, s, reflect.ValueOf(&in).Elem()); err != nil {
			var zero Out
			return zero, err
		}
		return fn(ctx, in)
	})
}

// createdKinds lists the kinds of the Of fields of struct type t.
func createdKinds(t reflect.Type) []Kind {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	var kinds []Kind
	seen := map[string]bool{}
	for i := range t.NumField() {
		ft := t.Field(i).Type
		if ft.Implements(creatorType) {
			k := reflect.Zero(ft).Interface().(creator).creates()
			if !seen[k.Prefix] {
				seen[k.Prefix] = true
				kinds = append(kinds, k)
			}
		}
	}
	return kinds
}

// resolveAll resolves the handle fields of the struct v.
func resolveAll(ctx context.Context, s Store, v reflect.Value) error {
	for i := range v.NumField() {
		f := v.Field(i)
		if !v.Type().Field(i).IsExported() {
			continue
		}
		switch {
		case reflect.PointerTo(f.Type()).Implements(resolverType):
			if err := f.Addr().Interface().(resolver).resolve(ctx, s); err != nil {
				return err
			}
		case f.Kind() == reflect.Slice && reflect.PointerTo(f.Type().Elem()).Implements(resolverType):
			for j := range f.Len() {
				if err := f.Index(j).Addr().Interface().(resolver).resolve(ctx, s); err != nil {
					return err
				}
			}
		case f.Kind() == reflect.Map && reflect.PointerTo(f.Type().Elem()).Implements(resolverType):
			iter := f.MapRange()
			for iter.Next() {
				e := reflect.New(f.Type().Elem())
				e.Elem().Set(iter.Value())
				if err := e.Interface().(resolver).resolve(ctx, s); err != nil {
					return err
				}
				f.SetMapIndex(iter.Key(), e.Elem())
			}
		}
	}
	return nil
}
