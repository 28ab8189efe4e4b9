package schema

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// ValidationError reports every way a value failed its schema, in words a
// language model can act on.
type ValidationError struct {
	// Missing lists required properties that are absent, as paths like
	// "model_path" or "opts/depth" (see Problem.Path).
	Missing []string
	// Problems lists every other failure, ordered by path.
	Problems []Problem
}

// Problem is one failure of a value against its schema.
type Problem struct {
	// Path locates the value: a JSON Pointer without its leading "/",
	// such as "count", "opts/depth" or "files/0/name"; "" is the
	// arguments object itself.
	Path string
	// Keyword is the JSON Schema keyword that failed, such as "type",
	// "enum" or "additionalProperties".
	Keyword string
	// Expected says what the schema wants, such as "integer" or
	// `one of "fast", "slow"`.
	Expected string
	// Got says what came, such as `string "ten"`.
	Got string
}

// Error lists the missing arguments, then every problem, separated by
// "; ".
func (e *ValidationError) Error() string {
	var parts []string
	switch len(e.Missing) {
	case 0:
	case 1:
		parts = append(parts, fmt.Sprintf("missing required argument %q", e.Missing[0]))
	default:
		q := make([]string, len(e.Missing))
		for i, m := range e.Missing {
			q[i] = strconv.Quote(m)
		}
		parts = append(parts, "missing required arguments "+strings.Join(q, ", "))
	}
	for _, p := range e.Problems {
		parts = append(parts, p.String())
	}
	if len(parts) == 0 {
		return "invalid arguments"
	}
	return strings.Join(parts, "; ")
}

// String says what is wrong in one sentence, such as
// `argument "count": expected integer, got string "ten"`.
func (p Problem) String() string {
	switch p.Keyword {
	case "additionalProperties":
		return fmt.Sprintf("unknown argument %q (%s)", p.Path, p.Expected)
	case "false":
		if p.Path == "" {
			return "no arguments are allowed"
		}
		return fmt.Sprintf("argument %q is not allowed", p.Path)
	}
	where := "arguments"
	if p.Path != "" {
		where = fmt.Sprintf("argument %q", p.Path)
	}
	return fmt.Sprintf("%s: expected %s, got %s", where, p.Expected, p.Got)
}

// newValidationError turns the library's error tree for value x into a
// *ValidationError.
func newValidationError(v *Validator, x any, err error) error {
	var verr *jsonschema.ValidationError
	if !errors.As(err, &verr) {
		return fmt.Errorf("schema: validate: %w", err)
	}
	c := converter{v: v, x: x}
	c.walk(verr)
	sort.SliceStable(c.missing, func(i, j int) bool { return c.missing[i].parent < c.missing[j].parent })
	out := &ValidationError{}
	for _, m := range c.missing {
		out.Missing = append(out.Missing, join(m.parent, m.name))
	}
	out.Problems = c.problems
	sort.SliceStable(out.Problems, func(i, j int) bool {
		a, b := out.Problems[i], out.Problems[j]
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		return a.Keyword < b.Keyword
	})
	return out
}

type missing struct{ parent, name string }

type converter struct {
	v        *Validator
	x        any
	missing  []missing
	problems []Problem
	printer  *message.Printer
}

// addMissing records required properties absent from the object at path.
func (c *converter) addMissing(path string, names []string) {
	for _, name := range names {
		c.missing = append(c.missing, missing{path, escape(name)})
	}
}

func (c *converter) walk(e *jsonschema.ValidationError) {
	path := pointer(e.InstanceLocation)
	switch k := e.ErrorKind.(type) {
	case *kind.Schema, *kind.Group, *kind.Reference, *kind.AllOf:
		for _, cause := range e.Causes {
			c.walk(cause)
		}
		return
	case *kind.Required:
		c.addMissing(path, k.Missing)
		return
	case *kind.DependentRequired:
		c.addMissing(path, k.Missing)
		return
	case *kind.Dependency:
		c.addMissing(path, k.Missing)
		return
	case *kind.AdditionalProperties:
		allowed := "no arguments are allowed here"
		if s := c.v.byLoc[e.SchemaURL]; s != nil && len(s.Properties) > 0 {
			names := make([]string, 0, len(s.Properties))
			for n := range s.Properties {
				names = append(names, n)
			}
			sort.Strings(names)
			allowed = "known arguments: " + strings.Join(names, ", ")
			if path != "" {
				allowed = fmt.Sprintf("known arguments in %q: %s", path, strings.Join(names, ", "))
			}
		}
		props := slices.Clone(k.Properties)
		sort.Strings(props)
		for _, name := range props {
			c.problems = append(c.problems, Problem{
				Path:     join(path, escape(name)),
				Keyword:  "additionalProperties",
				Expected: allowed,
				Got:      describe(valueAt(c.x, append(slices.Clone(e.InstanceLocation), name))),
			})
		}
		return
	}
	got := valueAt(c.x, e.InstanceLocation)
	p := Problem{Path: path, Got: describe(got)}
	if kp := e.ErrorKind.KeywordPath(); len(kp) > 0 {
		p.Keyword = kp[0]
	}
	switch k := e.ErrorKind.(type) {
	case *kind.FalseSchema:
		p.Keyword = "false"
		p.Expected = "nothing"
	case *kind.Type:
		p.Expected = strings.Join(k.Want, " or ")
	case *kind.Enum:
		p.Expected = oneOf(k.Want)
	case *kind.Const:
		p.Expected = display(k.Want)
	case *kind.Format:
		p.Expected = formatHint(k.Want)
	case *kind.MinLength:
		p.Expected = fmt.Sprintf("a string of at least %s", plural(k.Want, "character"))
		p.Got += fmt.Sprintf(" (%s)", plural(k.Got, "character"))
	case *kind.MaxLength:
		p.Expected = fmt.Sprintf("a string of at most %s", plural(k.Want, "character"))
		p.Got += fmt.Sprintf(" (%s)", plural(k.Got, "character"))
	case *kind.Pattern:
		p.Expected = "a string matching the regular expression " + k.Want
	case *kind.Minimum:
		p.Expected = "a number >= " + ratString(k.Want)
	case *kind.Maximum:
		p.Expected = "a number <= " + ratString(k.Want)
	case *kind.ExclusiveMinimum:
		p.Expected = "a number > " + ratString(k.Want)
	case *kind.ExclusiveMaximum:
		p.Expected = "a number < " + ratString(k.Want)
	case *kind.MultipleOf:
		p.Expected = "a multiple of " + ratString(k.Want)
	case *kind.MinItems:
		p.Expected = "an array of at least " + plural(k.Want, "item")
	case *kind.MaxItems:
		p.Expected = "an array of at most " + plural(k.Want, "item")
	case *kind.UniqueItems:
		p.Expected = "an array of distinct items"
		p.Got += fmt.Sprintf(" (items %d and %d are equal)", k.Duplicates[0], k.Duplicates[1])
	case *kind.MinProperties:
		p.Expected = "an object with at least " + plural(k.Want, "property")
	case *kind.MaxProperties:
		p.Expected = "an object with at most " + plural(k.Want, "property")
	case *kind.AnyOf:
		p.Expected = alternatives(e)
	case *kind.OneOf:
		if len(k.Subschemas) > 1 {
			p.Expected = "a value matching exactly one of the allowed forms"
			p.Got += fmt.Sprintf(" (matches forms %d and %d)", k.Subschemas[0]+1, k.Subschemas[1]+1)
		} else {
			p.Expected = alternatives(e)
		}
	case *kind.Not:
		p.Expected = "a value other than this one"
	case *kind.PropertyNames:
		p.Expected = "valid argument names"
		p.Got = fmt.Sprintf("the name %q", k.Property)
	case *kind.ContentEncoding:
		p.Expected = fmt.Sprintf("a %s-encoded string", k.Want)
	default:
		if c.printer == nil {
			c.printer = message.NewPrinter(language.English)
		}
		p.Expected = "a value that passes: " + e.ErrorKind.LocalizedString(c.printer)
	}
	c.problems = append(c.problems, p)
}

// alternatives says what an anyOf or oneOf wanted: the types, when every
// alternative failed on its type.
func alternatives(e *jsonschema.ValidationError) string {
	var types []string
	for _, cause := range e.Causes {
		for cause != nil {
			if _, ok := cause.ErrorKind.(*kind.Reference); ok && len(cause.Causes) == 1 {
				cause = cause.Causes[0]
				continue
			}
			break
		}
		if cause == nil {
			return "a value matching one of the allowed forms"
		}
		t, ok := cause.ErrorKind.(*kind.Type)
		if !ok {
			return "a value matching one of the allowed forms"
		}
		for _, w := range t.Want {
			if !slices.Contains(types, w) {
				types = append(types, w)
			}
		}
	}
	if len(types) == 0 {
		return "a value matching one of the allowed forms"
	}
	return strings.Join(types, " or ")
}

// formatHint describes a string format with an example.
func formatHint(name string) string {
	switch name {
	case "date-time":
		return `a date-time string in RFC 3339 form, such as "2025-01-31T09:30:00Z"`
	case "date":
		return `a date string such as "2025-01-31"`
	case "time":
		return `a time string such as "09:30:00Z"`
	case "duration":
		return `an ISO 8601 duration such as "PT5M"`
	case "email":
		return `an email address such as "ada@example.com"`
	case "uri":
		return `an absolute URI such as "https://example.com/a"`
	case "uuid":
		return `a UUID such as "123e4567-e89b-12d3-a456-426614174000"`
	case "ipv4":
		return `an IPv4 address such as "192.0.2.1"`
	case "ipv6":
		return `an IPv6 address such as "2001:db8::1"`
	case "hostname":
		return `a host name such as "example.com"`
	}
	return fmt.Sprintf("a string in %q format", name)
}

func oneOf(vals []any) string {
	if len(vals) == 1 {
		return display(vals[0])
	}
	s := make([]string, len(vals))
	for i, v := range vals {
		s[i] = display(v)
	}
	return "one of " + strings.Join(s, ", ")
}

// display writes a value from a schema as JSON.
func display(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// describe says what a value from the model is, briefly.
func describe(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean " + strconv.FormatBool(v)
	case float64:
		return "number " + strconv.FormatFloat(v, 'g', -1, 64)
	case json.Number:
		return "number " + v.String()
	case string:
		const max = 60
		if utf8.RuneCountInString(v) > max {
			r := []rune(v)
			return "string " + strconv.Quote(string(r[:max])) + "…"
		}
		return "string " + strconv.Quote(v)
	case []any:
		return "an array of " + plural(len(v), "item")
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("a Go %T", v)
}

func plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	if unit == "property" {
		unit = "properties"
	} else {
		unit += "s"
	}
	return strconv.Itoa(n) + " " + unit
}

func ratString(r *big.Rat) string {
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// valueAt finds the value at an instance location.
func valueAt(x any, loc []string) any {
	for _, tok := range loc {
		switch c := x.(type) {
		case map[string]any:
			x = c[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil
			}
			x = c[i]
		default:
			return nil
		}
	}
	return x
}

// pointer writes an instance location as a JSON Pointer without the
// leading "/".
func pointer(loc []string) string {
	s := make([]string, len(loc))
	for i, tok := range loc {
		s[i] = escape(tok)
	}
	return strings.Join(s, "/")
}

func escape(tok string) string {
	if !strings.ContainsAny(tok, "~/") {
		return tok
	}
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(tok)
}

func join(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "/" + name
}
