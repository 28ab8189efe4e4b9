package schema

import (
	"encoding/json"
	"sort"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// ApplyDefaults fills in defaults from the schema: every property that is
// absent from an object, or null where its schema does not allow null,
// gets the property's "default". It descends into nested objects and into
// the objects inside arrays that are present in m, following "$ref" and
// "allOf"; it does not create objects that are absent and have no default
// of their own. Numbers are filled in as float64, as encoding/json
// decodes them, and objects and arrays as fresh copies.
//
// The work is planned when the schema is compiled, so a call costs map
// look-ups along the defaults that exist and no allocation beyond the
// values it inserts. ApplyDefaults does not validate; call Validate after
// it.
func (v *Validator) ApplyDefaults(m map[string]any) {
	if v.defaults == nil || v.defaults.obj == nil || m == nil {
		return
	}
	v.defaults.obj.apply(m)
}

// hasDefaults reports whether the schema declares any default that
// ApplyDefaults could fill in (for package tool, through
// fastpath.HasDefaults).
func (v *Validator) hasDefaults() bool { return v.defaults != nil && v.defaults.obj != nil }

// valuePlan says which defaults to fill inside one value.
type valuePlan struct {
	obj   *objectPlan // when the value is an object
	items *valuePlan  // for each item when the value is an array
}

type objectPlan struct {
	fills  []fill
	nested []nestedPlan
}

type fill struct {
	name   string
	value  any
	clone  bool // value is an object or array: copy it on each use
	onNull bool // a null value counts as absent
}

type nestedPlan struct {
	name string
	plan *valuePlan
}

func (p *objectPlan) apply(m map[string]any) {
	for i := range p.fills {
		f := &p.fills[i]
		cur, ok := m[f.name]
		if ok && (cur != nil || !f.onNull) {
			continue
		}
		if f.clone {
			m[f.name] = cloneValue(f.value)
		} else {
			m[f.name] = f.value
		}
	}
	for i := range p.nested {
		if x, ok := m[p.nested[i].name]; ok {
			p.nested[i].plan.apply(x)
		}
	}
}

func (p *valuePlan) apply(x any) {
	switch x := x.(type) {
	case map[string]any:
		if p.obj != nil {
			p.obj.apply(x)
		}
	case []any:
		if p.items != nil {
			for _, e := range x {
				p.items.apply(e)
			}
		}
	}
}

// buildPlan plans the defaults for root; it returns nil when there are
// none.
func buildPlan(root *jsonschema.Schema) *valuePlan {
	b := planBuilder{memo: map[*jsonschema.Schema]*valuePlan{}}
	p := b.plan(root)
	b.prune()
	if !b.useful[p] {
		return nil
	}
	return p
}

type planBuilder struct {
	memo   map[*jsonschema.Schema]*valuePlan
	all    []*valuePlan
	useful map[*valuePlan]bool
}

// group lists s and the schemas that apply to the same value through
// $ref and allOf.
func group(s *jsonschema.Schema) []*jsonschema.Schema {
	var out []*jsonschema.Schema
	seen := map[*jsonschema.Schema]bool{}
	var add func(*jsonschema.Schema)
	add = func(s *jsonschema.Schema) {
		if s == nil || seen[s] {
			return
		}
		seen[s] = true
		out = append(out, s)
		add(s.Ref)
		for _, c := range s.AllOf {
			add(c)
		}
	}
	add(s)
	return out
}

func (b *planBuilder) plan(s *jsonschema.Schema) *valuePlan {
	if p, ok := b.memo[s]; ok {
		return p
	}
	p := &valuePlan{}
	b.memo[s] = p
	b.all = append(b.all, p)
	g := group(s)
	obj := &objectPlan{}
	seen := map[string]bool{}
	for _, m := range g {
		names := make([]string, 0, len(m.Properties))
		for name := range m.Properties {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			if seen[name] {
				continue
			}
			seen[name] = true
			ps := m.Properties[name]
			if d := firstDefault(ps); d != nil {
				value := stdValue(*d)
				_, isMap := value.(map[string]any)
				_, isSlice := value.([]any)
				obj.fills = append(obj.fills, fill{
					name:   name,
					value:  value,
					clone:  isMap || isSlice,
					onNull: ps.Validate(nil) != nil,
				})
			}
			obj.nested = append(obj.nested, nestedPlan{name: name, plan: b.plan(ps)})
		}
	}
	p.obj = obj
	for _, m := range g {
		if m.Items2020 != nil {
			p.items = b.plan(m.Items2020)
			break
		}
	}
	return p
}

func firstDefault(s *jsonschema.Schema) *any {
	for _, m := range group(s) {
		if m.Default != nil {
			return m.Default
		}
	}
	return nil
}

// prune keeps only the parts of plans that lead to a default.
func (b *planBuilder) prune() {
	b.useful = map[*valuePlan]bool{}
	for changed := true; changed; {
		changed = false
		for _, p := range b.all {
			if b.useful[p] {
				continue
			}
			u := p.items != nil && b.useful[p.items]
			if p.obj != nil {
				u = u || len(p.obj.fills) > 0
				for _, n := range p.obj.nested {
					u = u || b.useful[n.plan]
				}
			}
			if u {
				b.useful[p] = true
				changed = true
			}
		}
	}
	for _, p := range b.all {
		if p.items != nil && !b.useful[p.items] {
			p.items = nil
		}
		if p.obj == nil {
			continue
		}
		kept := p.obj.nested[:0]
		for _, n := range p.obj.nested {
			if b.useful[n.plan] {
				kept = append(kept, n)
			}
		}
		p.obj.nested = kept
		if len(p.obj.fills) == 0 && len(p.obj.nested) == 0 {
			p.obj = nil
		}
	}
}

// stdValue converts a value decoded with UseNumber into the form
// encoding/json gives by default.
func stdValue(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return v
	}
	return out
}

func cloneValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, e := range v {
			m[k] = cloneValue(e)
		}
		return m
	case []any:
		s := make([]any, len(v))
		for i, e := range v {
			s[i] = cloneValue(e)
		}
		return s
	}
	return v
}
