// Package spill keeps large tool results out of a model's context,
// losslessly: a registry middleware (Results.Middleware) keeps a result
// whose text or structured content exceeds a budget behind a result
// handle (res_…) in a handle.Store, scoped to the caller as every handle
// is, and shows the model a preview instead: for text, its size, line
// count, first and last lines; for JSON, its shape (keys, types, array
// lengths) and first items. Built-in tools read the value back in pieces
// (read_result, query_result with a jq expression) or save it to a file
// (save_result), and a handle the model passes as another tool's argument
// is replaced by the value before the call (Results.ResolveArgs), so a
// server that knows nothing of handles receives the whole data.
//
// Images and audio stay attachments whatever their size. An embedded
// resource over the budget, text or binary, is kept whole behind a handle.
//
// # When an argument is taken as a handle
//
// ResolveArgs replaces an argument's value with the value behind a handle
// when all of these hold:
//
//   - a value in the arguments — a top-level argument's, or a field's or
//     an array element's inside one, 16 levels deep at most — is a JSON
//     string that is exactly a result handle: "res_", then 22 characters
//     of the URL-safe base64 alphabet, as handle.New writes them (nothing
//     before or after; a handle inside a longer text is left alone);
//   - the tool called is not one of this package's tools, which take
//     handles themselves (handles of other kinds, such as the data
//     toolset's tbl_…, are never touched);
//   - the schema type the tool's input schema gives that place (through
//     "properties" and "items"; "$ref" and combinators are not followed,
//     which leaves no type) can hold the value: "string" gets the
//     text (JSON as its text, a binary resource as base64), "object" or
//     "array" the JSON value (text that is not JSON is an error), an
//     argument without a type the JSON value when it is JSON, else the
//     text. Any other type (integer, number, boolean, null) is an error
//     saying how to pass a value instead.
//
// A string of that exact form that does not resolve for the caller —
// expired, released, evicted, another caller's, or never made — is an
// error ("handle res_… expired; call the tool again"), the same for each
// of these, so nothing leaks of another caller's handles. It is not
// passed on as it is: 128 random bits do not occur in data by chance, so
// such a string is a handle the model meant to pass, and writing the
// literal handle where the data was meant (a file's content) would lose
// the data silently. Anything else that merely looks like a handle
// ("res_abc", a handle with text around it) passes through unchanged.
//
// The value put in place goes through the argument pipeline as if the
// model had written it: schema validation, defaults, injected values.
package spill

import (
	"encoding/json"
	"sync"
	"time"

	"github.com/toolwire/toolwire/handle"
	"github.com/toolwire/toolwire/tool"
)

// DefaultBudget is the size above which a result is kept behind a handle
// when nothing else is set: 16 KiB, about 4,000 tokens. Below it, the
// preview and a call to read more would cost the model about as much as
// the result itself.
const DefaultBudget = 16 << 10

// DefaultMaxBytes bounds the results Results keeps in the store it makes
// when none is given: 256 MiB, the least recently used dropped first.
const DefaultMaxBytes = 256 << 20

// DefaultQueryTimeout bounds each query_result call: a query that
// builds a huge array ([range(1e9)]) grows by about 50 MB a second
// until it stops.
const DefaultQueryTimeout = 2 * time.Second

// Kind is the handle kind of kept results.
var Kind = handle.Kind{Prefix: "res", Noun: "result", Again: "call the tool that returned it again"}

// Value is a result part kept behind a handle: one content block's text,
// a binary resource, or structured content.
type Value struct {
	// Tool is the name of the tool that returned it.
	Tool string `json:"tool"`
	// Text is the text of a text block or text resource.
	Text string `json:"text,omitempty"`
	// JSON is structured content.
	JSON json.RawMessage `json:"json,omitempty"`
	// Blob is the base64 data of a binary resource.
	Blob string `json:"blob,omitempty"`
	// URI and MimeType describe an embedded resource.
	URI      string `json:"uri,omitempty"`
	MimeType string `json:"mimeType,omitempty"`
}

// HandleKind returns Kind.
func (*Value) HandleKind() handle.Kind { return Kind }

// text is the value as a text: the text, the JSON, or the base64 data.
func (v *Value) text() string {
	switch {
	case v.JSON != nil:
		return string(v.JSON)
	case v.Blob != "":
		return v.Blob
	}
	return v.Text
}

// size is what the value costs the store.
func (v *Value) size() int64 { return int64(len(v.Text) + len(v.JSON) + len(v.Blob)) }

// Results keeps large results behind handles and resolves handles passed
// as arguments. Install it in a registry; its zero value is ready, with a
// store of its own made on first use. Its fields are not to be changed
// once it is in use.
type Results struct {
	// Store keeps the values; nil means a handle.Memory bounded to
	// DefaultMaxBytes, made on first use. Share a store with other
	// tools to share its bound and lifetime.
	Store handle.Store
	// Budget is the size, in bytes, above which a result's text or
	// structured content is kept behind a handle; zero means
	// DefaultBudget, negative keeps every result whole.
	Budget int64
	// BudgetFor, when set, gives the budget of one call's result (per
	// server, per tool): a positive number of bytes, zero for Budget,
	// negative to keep the result whole.
	BudgetFor func(c *tool.Call) int64
	// Dirs are the directories save_result may write into; empty means
	// the working directory.
	Dirs []string
	// QueryTimeout bounds each query_result call; zero means
	// DefaultQueryTimeout.
	QueryTimeout time.Duration
	// MaxOutput bounds what read_result and query_result return, in
	// bytes; zero means the budget.
	MaxOutput int

	once sync.Once
	mem  *handle.Memory // the default store
}

// Install adds the results' tools to reg, its middleware, and its
// argument resolution: every call through reg from now on.
func (r *Results) Install(reg *tool.Registry) error {
	tools, err := r.Tools()
	if err != nil {
		return err
	}
	if err := reg.Add(tools...); err != nil {
		return err
	}
	reg.UseArgs(r.ResolveArgs)
	reg.Use(r.Middleware())
	return nil
}

// store returns the store, making the default one the first time.
func (r *Results) store() handle.Store {
	if r.Store != nil {
		return r.Store
	}
	r.once.Do(func() { r.mem = &handle.Memory{MaxBytes: DefaultMaxBytes} })
	return r.mem
}

// budget is the budget of c's result; negative means none.
func (r *Results) budget(c *tool.Call) int64 {
	if r.BudgetFor != nil {
		if b := r.BudgetFor(c); b != 0 {
			return b
		}
	}
	if r.Budget != 0 {
		return r.Budget
	}
	return DefaultBudget
}

// maxOutput bounds what the reading tools return.
func (r *Results) maxOutput() int {
	switch {
	case r.MaxOutput > 0:
		return r.MaxOutput
	case r.Budget > 0:
		return int(r.Budget)
	}
	return DefaultBudget
}

// ownTool is implemented by this package's tools, which take result
// handles themselves and whose results are never kept.
type ownTool interface{ readsResults() }
