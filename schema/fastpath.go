package schema

import "github.com/toolwire/toolwire/internal/fastpath"

func init() {
	fastpath.AcceptsJSON = func(v any, raw []byte) bool { return v.(*Validator).acceptsJSON(raw) }
	fastpath.HasDefaults = func(v any) bool { return v.(*Validator).hasDefaults() }
}
