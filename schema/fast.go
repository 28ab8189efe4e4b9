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
	n := &fastNode{minLen: -1, maxLen: -1, minItems: -1, maxItems: -1, minProps: -1, maxProps: -1}
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
	var t uint8
	isInt := false
	switch v := x.(type) {
	case nil:
		t = tNull
	case bool:
		t = tBoolean
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
		t = tNumber
		isInt = v == math.Trunc(v)
	case string:
		t = tString
	case []any:
		t = tArray
	case map[string]any:
		t = tObject
	default:
		return false // json.Number and Go values: the library decides
	}
	if n.types != 0 && n.types&t == 0 && (n.types&tInteger == 0 || t != tNumber || !isInt) {
		return false
	}
	if n.hasEnum {
		found := false
		for _, e := range n.enum {
			if e == x {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	if n.format != nil && n.format(x) != nil {
		return false
	}
	switch v := x.(type) {
	case string:
		if n.minLen >= 0 || n.maxLen >= 0 {
			k := utf8.RuneCountInString(v)
			if (n.minLen >= 0 && k < n.minLen) || (n.maxLen >= 0 && k > n.maxLen) {
				return false
			}
		}
		if n.pattern != nil && !n.pattern.MatchString(v) {
			return false
		}
	case float64:
		if n.limits != 0 {
			if (n.limits&limMin != 0 && v < n.min) || (n.limits&limMax != 0 && v > n.max) ||
				(n.limits&limExMin != 0 && v <= n.exMin) || (n.limits&limExMax != 0 && v >= n.exMax) {
				return false
			}
		}
	case []any:
		if (n.minItems >= 0 && len(v) < n.minItems) || (n.maxItems >= 0 && len(v) > n.maxItems) {
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
		if (n.minProps >= 0 && len(v) < n.minProps) || (n.maxProps >= 0 && len(v) > n.maxProps) {
			return false
		}
		for _, r := range n.required {
			if _, ok := v[r]; !ok {
				return false
			}
		}
		for k, e := range v {
			if p, ok := n.props[k]; ok {
				if !p.accepts(e) {
					return false
				}
				continue
			}
			switch n.addl {
			case addlReject:
				return false
			case addlSchema:
				if !n.addlNode.accepts(e) {
					return false
				}
			}
		}
	}
	for _, c := range n.allOf {
		if !c.accepts(x) {
			return false
		}
	}
	if len(n.anyOf) > 0 {
		for _, c := range n.anyOf {
			if c.accepts(x) {
				return true
			}
		}
		return false
	}
	return true
}
