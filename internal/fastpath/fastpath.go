// Package fastpath lets packages of this module reach what package tool
// and package schema keep for their own speed, without making it public
// API: the MCP server reads a tool name from a request without a copy, and
// the tool registry passes arguments on as written once the schema has
// certainly accepted them.
//
// Packages tool and schema set these functions when they are initialised,
// which happens before any package that imports them runs; they are never
// changed after that.
package fastpath

// RegisteredName, given a *tool.Registry, returns the name of its tool
// spelled b as the registry holds it, so that a name read from a request
// becomes a string without allocating; ok is false for a name it does not
// hold.
var RegisteredName func(registry any, b []byte) (name string, ok bool)

// AcceptsJSON, given a *schema.Validator, reports whether raw, one JSON
// value with optional white space around it, certainly satisfies the
// schema: when it returns true, decoding raw succeeds and Validate returns
// nil for the value. False only means that the value must be decoded and
// validated to know. It reads raw in place.
var AcceptsJSON func(validator any, raw []byte) bool

// HasDefaults, given a *schema.Validator, reports whether the schema
// declares any default that ApplyDefaults could fill in.
var HasDefaults func(validator any) bool

// DecodeOwned is jsonrpc.Decode for a buffer the caller hands over, such
// as an HTTP body read for this message alone: the message (a
// *jsonrpc.Message, never nil) keeps sub-slices of data, which must not
// change afterwards. Package jsonrpc sets it.
var DecodeOwned func(data []byte) (msg any, err error)
