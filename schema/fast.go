package schema

import (
	"encoding/json"
	"math"
	"math/big"
	"strconv"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// fastNode is an allocation-free check for a schema made only of common
// keywords. It is sound but not complete: it accepts only values the
// library accepts, and may reject values the library would accept (a
// json.Number, say), which then go to the library. Its combinators are
// monotone (allOf, anyOf), so a false rejection inside never turns into a
// false acceptance outside; not, oneOf and if/then/else are not monotone
// and make the schema ineligible.
type fastNode struct {
	reject   bool // the false schema
	types    uint8
	hasEnum  bool
	enum     []any // string, float64, bool or nil
	format   func(any) error
	min      float64
	max      float64
	exMin    float64
	exMax    float64
	limits   uint8 // which of min, max, exMin, exMax apply
	minLen   int   // -1 when absent, like the other counts
	maxLen   int
	pattern  jsonschema.Regexp
	minItems int
	maxItems int
	items    *fastNode
	props    map[string]*fastNode
	required []string
	minProps int
	maxProps int
	addl     uint8 // addlAllow, addlReject or addlSchema
	addlNode *fastNode
	allOf    []*fastNode // includes the $ref target
	anyOf    []*fastNode
}

const (
	tNull uint8 = 1 << iota
	tBoolean
	tNumber
	tInteger
	tString
	tArray
	tObject
)

const (
	limMin uint8 = 1 << iota
	limMax
	limExMin
	limExMax
)

const (
	addlAllow uint8 = iota
	addlReject
	addlSchema
)

// buildFast returns the fast check for root, or nil when some reachable
// schema uses a keyword the check does not implement.
func buildFast(root *jsonschema.Schema) *fastNode {
	b := fastBuilder{memo: map[*jsonschema.Schema]*fastNode{}, ok: true}
	n := b.node(root)
	if !b.ok || b.sameValueCycle() {
		return nil
	}
	return n
}

// newFastNode returns a node without keywords: it accepts any value.
func newFastNode() *fastNode {
	return &fastNode{minLen: -1, maxLen: -1, minItems: -1, maxItems: -1, minProps: -1, maxProps: -1}
}

type fastBuilder struct {
	memo map[*jsonschema.Schema]*fastNode
	ok   bool
}

func (b *fastBuilder) fail() *fastNode {
	b.ok = false
	return &fastNode{}
}

func (b *fastBuilder) node(s *jsonschema.Schema) *fastNode {
	if n, ok := b.memo[s]; ok {
		return n
	}
	n := newFastNode()
	b.memo[s] = n
	if s.Bool != nil {
		n.reject = !*s.Bool
		return n
	}
	if s.DraftVersion < 2019 || s.RecursiveRef != nil || s.DynamicRef != nil ||
		s.Not != nil || len(s.OneOf) > 0 || s.If != nil || s.Then != nil || s.Else != nil ||
		s.PropertyNames != nil || len(s.PatternProperties) > 0 || len(s.Dependencies) > 0 ||
		len(s.DependentRequired) > 0 || len(s.DependentSchemas) > 0 || s.UnevaluatedProperties != nil ||
		s.UniqueItems || s.Contains != nil || s.MinContains != nil || s.MaxContains != nil ||
		s.Items != nil || s.AdditionalItems != nil || len(s.PrefixItems) > 0 || s.UnevaluatedItems != nil ||
		s.ContentEncoding != nil || s.ContentMediaType != nil || s.ContentSchema != nil ||
		s.MultipleOf != nil || len(s.Extensions) > 0 {
		return b.fail()
	}
	if s.Types != nil {
		for _, t := range s.Types.ToStrings() {
			switch t {
			case "null":
				n.types |= tNull
			case "boolean":
				n.types |= tBoolean
			case "number":
				n.types |= tNumber
			case "integer":
				n.types |= tInteger
			case "string":
				n.types |= tString
			case "array":
				n.types |= tArray
			case "object":
				n.types |= tObject
			}
		}
	}
	if s.Enum != nil {
		n.hasEnum = true
		for _, v := range s.Enum.Values {
			sv, ok := scalar(v)
			if !ok {
				return b.fail()
			}
			n.enum = append(n.enum, sv)
		}
	}
	if s.Const != nil {
		sv, ok := scalar(*s.Const)
		if !ok {
			return b.fail()
		}
		if n.hasEnum { // both: keep the enum values equal to the const
			var keep []any
			for _, e := range n.enum {
				if e == sv {
					keep = append(keep, e)
				}
			}
			n.enum = keep
		} else {
			n.hasEnum, n.enum = true, []any{sv}
		}
	}
	if s.Format != nil {
		n.format = s.Format.Validate
	}
	for _, l := range []struct {
		r   *big.Rat
		dst *float64
		bit uint8
	}{{s.Minimum, &n.min, limMin}, {s.Maximum, &n.max, limMax}, {s.ExclusiveMinimum, &n.exMin, limExMin}, {s.ExclusiveMaximum, &n.exMax, limExMax}} {
		if l.r == nil {
			continue
		}
		f, ok := canonicalFloat(l.r)
		if !ok {
			return b.fail()
		}
		*l.dst = f
		n.limits |= l.bit
	}
	n.minLen, n.maxLen = count1(s.MinLength), count1(s.MaxLength)
	n.pattern = s.Pattern
	n.minItems, n.maxItems = count1(s.MinItems), count1(s.MaxItems)
	n.minProps, n.maxProps = count1(s.MinProperties), count1(s.MaxProperties)
	if s.Items2020 != nil {
		n.items = b.node(s.Items2020)
	}
	if len(s.Properties) > 0 {
		n.props = make(map[string]*fastNode, len(s.Properties))
		for name, ps := range s.Properties {
			n.props[name] = b.node(ps)
		}
	}
	n.required = s.Required
	switch a := s.AdditionalProperties.(type) {
	case bool:
		if !a {
			n.addl = addlReject
		}
	case *jsonschema.Schema:
		n.addl, n.addlNode = addlSchema, b.node(a)
	}
	if s.Ref != nil {
		n.allOf = append(n.allOf, b.node(s.Ref))
	}
	for _, c := range s.AllOf {
		n.allOf = append(n.allOf, b.node(c))
	}
	for _, c := range s.AnyOf {
		n.anyOf = append(n.anyOf, b.node(c))
	}
	return n
}

// sameValueCycle reports whether $ref, allOf and anyOf lead from a schema
// back to itself without descending into the value, which the library
// reports as an error and the fast check would loop on.
func (b *fastBuilder) sameValueCycle() bool {
	state := map[*jsonschema.Schema]int{}
	cycle := false
	var visit func(s *jsonschema.Schema)
	visit = func(s *jsonschema.Schema) {
		switch state[s] {
		case 1:
			cycle = true
			return
		case 2:
			return
		}
		state[s] = 1
		var next []*jsonschema.Schema
		if s.Ref != nil {
			next = append(next, s.Ref)
		}
		next = append(next, s.AllOf...)
		next = append(next, s.AnyOf...)
		for _, c := range next {
			visit(c)
		}
		state[s] = 2
	}
	for s := range b.memo {
		visit(s)
	}
	return cycle
}

func count1(p *int) int {
	if p == nil {
		return -1
	}
	return *p
}

// scalar converts a schema value (decoded with UseNumber) for comparison
// with decoded instances; composite values and numbers that the fast
// check could not compare exactly are refused.
func scalar(v any) (any, bool) {
	switch v := v.(type) {
	case nil, bool, string:
		return v, true
	case json.Number:
		r, ok := new(big.Rat).SetString(v.String())
		if !ok {
			return nil, false
		}
		f, ok := canonicalFloat(r)
		return f, ok
	}
	return nil, false
}

// canonicalFloat converts r to a float64 when r is exactly the shortest
// decimal of that float. The library compares the shortest decimal of an
// instance number with r as rationals; for such r that is the same as
// comparing the two floats.
func canonicalFloat(r *big.Rat) (float64, bool) {
	f, _ := r.Float64()
	if math.IsInf(f, 0) {
		return 0, false
	}
	back, ok := new(big.Rat).SetString(strconv.FormatFloat(f, 'g', -1, 64))
	if !ok || back.Cmp(r) != 0 {
		return 0, false
	}
	return f, true
}

// accepts reports whether x certainly satisfies the schema.
func (n *fastNode) accepts(x any) bool {
	if n.reject {
		return false
	}
	switch v := x.(type) {
	case nil:
		if !n.allows(tNull, false) || !n.inEnum(x) || n.format != nil && n.format(x) != nil {
			return false
		}
	case bool:
		if !n.allows(tBoolean, false) || !n.inEnum(x) || n.format != nil && n.format(x) != nil {
			return false
		}
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) || !n.allows(tNumber, v == math.Trunc(v)) || !n.inEnum(x) ||
			n.format != nil && n.format(x) != nil || !n.acceptsNumber(v) {
			return false
		}
	case string:
		if !n.allows(tString, false) || !n.inEnum(x) || n.format != nil && n.format(x) != nil || !n.acceptsString(v) {
			return false
		}
	case []any:
		if !n.allows(tArray, false) || !n.inEnum(x) || n.format != nil && n.format(x) != nil ||
			!within(len(v), n.minItems, n.maxItems) {
			return false
		}
		if n.items != nil {
			for _, e := range v {
				if !n.items.accepts(e) {
					return false
				}
			}
		}
	case map[string]any:
		if !n.allows(tObject, false) || !n.inEnum(x) || n.format != nil && n.format(x) != nil ||
			!within(len(v), n.minProps, n.maxProps) {
			return false
		}
		for _, r := range n.required {
			if _, ok := v[r]; !ok {
				return false
			}
		}
		for k, e := range v {
			if p, ok := n.member(k); !ok || p != nil && !p.accepts(e) {
				return false
			}
		}
	default:
		return false // json.Number and Go values: the library decides
	}
	return n.acceptsSubschemas(func(c *fastNode) bool { return c.accepts(x) })
}

// allows reports whether the type keyword admits a value of type t (one
// of the t constants); isInt says whether a number is integral, which
// "integer" admits.
func (n *fastNode) allows(t uint8, isInt bool) bool {
	return n.types == 0 || n.types&t != 0 || n.types&tInteger != 0 && t == tNumber && isInt
}

// inEnum reports whether x, a decoded value, is one of the enum's values,
// or there is no enum. An array or object is never one: they are not
// comparable with the scalars the enum holds.
func (n *fastNode) inEnum(x any) bool {
	if !n.hasEnum {
		return true
	}
	for _, e := range n.enum {
		if e == x {
			return true
		}
	}
	return false
}

// acceptsString checks the keywords for strings: lengths, in runes, and
// the pattern.
func (n *fastNode) acceptsString(s string) bool {
	if n.minLen >= 0 || n.maxLen >= 0 {
		if !within(utf8.RuneCountInString(s), n.minLen, n.maxLen) {
			return false
		}
	}
	return n.pattern == nil || n.pattern.MatchString(s)
}

// acceptsNumber checks the keywords for numbers: the limits.
func (n *fastNode) acceptsNumber(f float64) bool {
	return n.limits == 0 ||
		!((n.limits&limMin != 0 && f < n.min) || (n.limits&limMax != 0 && f > n.max) ||
			(n.limits&limExMin != 0 && f <= n.exMin) || (n.limits&limExMax != 0 && f >= n.exMax))
}

// within reports whether k is within the counts lo and hi, either of which
// is -1 when absent.
func within(k, lo, hi int) bool {
	return (lo < 0 || k >= lo) && (hi < 0 || k <= hi)
}

// member returns the schema of the object member named key: its property
// schema or the additionalProperties schema, nil when no keyword
// constrains it; ok is false when no member of that name is allowed.
func (n *fastNode) member(key string) (p *fastNode, ok bool) {
	if p, ok := n.props[key]; ok {
		return p, true
	}
	switch n.addl {
	case addlReject:
		return nil, false
	case addlSchema:
		return n.addlNode, true
	}
	return nil, true
}

// hasSubschemas reports whether n has allOf or anyOf subschemas (a $ref
// among them).
func (n *fastNode) hasSubschemas() bool { return len(n.allOf)+len(n.anyOf) > 0 }

// acceptsSubschemas checks allOf and anyOf, where accepts says whether a
// subschema accepts the value.
func (n *fastNode) acceptsSubschemas(accepts func(c *fastNode) bool) bool {
	for _, c := range n.allOf {
		if !accepts(c) {
			return false
		}
	}
	if len(n.anyOf) > 0 {
		for _, c := range n.anyOf {
			if accepts(c) {
				return true
			}
		}
		return false
	}
	return true
}
