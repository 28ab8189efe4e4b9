package schema

import (
	"reflect"
	"sort"
	"strings"
	"unicode"
)

// field is one JSON member of a struct, as encoding/json sees it.
type field struct {
	name      string
	tagged    bool // name came from a json tag
	index     []int
	typ       reflect.Type
	sf        reflect.StructField
	omitEmpty bool // omitempty or omitzero
	asString  bool // the ",string" option
	viaPtr    bool // promoted through an embedded pointer, so it may be absent
}

// structFields lists the JSON members of struct type t in encoding/json's
// order, applying its rules for embedded structs: fields of untagged
// embedded structs are promoted, a shallower field hides deeper ones with
// the same name, and at equal depth a tagged field wins; if that leaves a
// tie, the name is dropped altogether.
func structFields(t reflect.Type) []field {
	type level struct {
		typ    reflect.Type
		index  []int
		viaPtr bool
	}
	current := []level{}
	next := []level{{typ: t}}
	var count map[reflect.Type]int
	nextCount := map[reflect.Type]int{}
	visited := map[reflect.Type]bool{}
	var fields []field

	for len(next) > 0 {
		current, next = next, current[:0]
		count, nextCount = nextCount, map[reflect.Type]int{}
		for _, lv := range current {
			if visited[lv.typ] {
				continue
			}
			visited[lv.typ] = true
			for i := range lv.typ.NumField() {
				sf := lv.typ.Field(i)
				if sf.Anonymous {
					ft := sf.Type
					if ft.Kind() == reflect.Pointer {
						ft = ft.Elem()
					}
					if !sf.IsExported() && ft.Kind() != reflect.Struct {
						continue
					}
				} else if !sf.IsExported() {
					continue
				}
				tag := sf.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, opts, _ := strings.Cut(tag, ",")
				if !validName(name) {
					name = ""
				}
				index := make([]int, len(lv.index)+1)
				copy(index, lv.index)
				index[len(lv.index)] = i

				ft := sf.Type
				if ft.Name() == "" && ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if name != "" || !sf.Anonymous || ft.Kind() != reflect.Struct {
					f := field{
						name:      name,
						tagged:    name != "",
						index:     index,
						typ:       sf.Type,
						sf:        sf,
						omitEmpty: hasOption(opts, "omitempty") || hasOption(opts, "omitzero"),
						asString:  hasOption(opts, "string"),
						viaPtr:    lv.viaPtr,
					}
					if f.name == "" {
						f.name = sf.Name
					}
					fields = append(fields, f)
					if count[lv.typ] > 1 {
						// The embedding struct appears twice at this depth,
						// so this field annihilates with its twin.
						fields = append(fields, f)
					}
					continue
				}
				nextCount[ft]++
				if nextCount[ft] == 1 {
					next = append(next, level{typ: ft, index: index, viaPtr: lv.viaPtr || sf.Type.Kind() == reflect.Pointer})
				}
			}
		}
	}

	sort.SliceStable(fields, func(i, j int) bool {
		a, b := fields[i], fields[j]
		if a.name != b.name {
			return a.name < b.name
		}
		if len(a.index) != len(b.index) {
			return len(a.index) < len(b.index)
		}
		if a.tagged != b.tagged {
			return a.tagged
		}
		return indexLess(a.index, b.index)
	})
	out := fields[:0:0]
	for i := 0; i < len(fields); {
		j := i + 1
		for j < len(fields) && fields[j].name == fields[i].name {
			j++
		}
		if f, ok := dominant(fields[i:j]); ok {
			out = append(out, f)
		}
		i = j
	}
	sort.Slice(out, func(i, j int) bool { return indexLess(out[i].index, out[j].index) })
	return out
}

// dominant picks the field that wins among fields sharing a name, sorted
// by depth and taggedness.
func dominant(fs []field) (field, bool) {
	if len(fs) > 1 && len(fs[0].index) == len(fs[1].index) && fs[0].tagged == fs[1].tagged {
		return field{}, false
	}
	return fs[0], true
}

func indexLess(a, b []int) bool {
	for k := range min(len(a), len(b)) {
		if a[k] != b[k] {
			return a[k] < b[k]
		}
	}
	return len(a) < len(b)
}

func hasOption(opts, want string) bool {
	for opts != "" {
		var o string
		o, opts, _ = strings.Cut(opts, ",")
		if o == want {
			return true
		}
	}
	return false
}

// validName reports whether encoding/json accepts s as a tag name.
func validName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			return false
		}
	}
	return true
}
