package schema

import (
	"bytes"
	"encoding/json"
	"flag"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden.json from the current output")

type scalars struct {
	B   bool    `json:"b"`
	I   int     `json:"i"`
	I8  int8    `json:"i8"`
	I64 int64   `json:"i64"`
	U   uint    `json:"u"`
	U16 uint16  `json:"u16"`
	F32 float32 `json:"f32"`
	F64 float64 `json:"f64"`
	S   string  `json:"s"`
	Any any     `json:"any"`
}

type optionality struct {
	Plain   string  `json:"plain"`
	Ptr     *string `json:"ptr"`
	Omit    string  `json:"omit,omitempty"`
	Zero    int     `json:"zero,omitzero"`
	Skipped string  `json:"-"`
	//lint:ignore SA5008 the tag names a field "-", which is what this case tests
	Dash  string `json:"-,"`
	NoTag int
	//lint:ignore U1000 an unexported field the schema must leave out
	unexposed int
	Forced    *int   `json:"forced" jsonschema:"required"`
	Relaxed   string `json:"relaxed" jsonschema:"optional"`
	Defaulted int    `json:"defaulted" jsonschema:"default=3"`
}

type Base struct {
	ID   string `json:"id" description:"Identifier."`
	Name string `json:"name"`
}

type Audit struct {
	Name    string    `json:"audit_name"`
	Created time.Time `json:"created"`
}

type inner struct {
	Hidden string `json:"hidden"`
}

type embedded struct {
	Base
	*Audit
	inner         // unexported but a struct: its fields are promoted
	Name   string `json:"name"` // shallower, hides Base.Name
	Tagged Base   `json:"tagged"`
}

type conflictA struct {
	X int
}

type conflictB struct {
	X string
}

type conflict struct {
	conflictA
	conflictB     // X is ambiguous and dropped, as encoding/json does
	Y         int `json:"y"`
}

type level struct {
	Value int `json:"value"`
}

type specials struct {
	When     time.Time         `json:"when"`
	Wait     time.Duration     `json:"wait"`
	Num      json.Number       `json:"num"`
	Raw      json.RawMessage   `json:"raw"`
	Data     []byte            `json:"data"`
	Triple   [3]int            `json:"triple"`
	IP       net.IP            `json:"ip"`
	Counted  int               `json:"counted,string"`
	Flag     bool              `json:"flag,string"`
	Color    color             `json:"color"`
	OptTime  *time.Time        `json:"opt_time,omitempty"`
	Levels   []level           `json:"levels"`
	Matrix   [][]float64       `json:"matrix"`
	Labels   map[string]string `json:"labels"`
	ByID     map[int]level     `json:"by_id"`
	Anything map[string]any    `json:"anything"`
}

// color provides its own schema.
type color string

func (color) JSONSchema() json.RawMessage {
	return json.RawMessage(`{"type": "string", "enum": ["red", "green", "blue"], "description": "A primary colour."}`)
}

type tagged struct {
	Path    string   `json:"path" description:"Path of the file, relative to the workspace; commas, \"quotes\" and <tags> are fine."`
	Count   int      `json:"count" jsonschema:"default=10,minimum=0,maximum=100"`
	Ratio   float64  `json:"ratio,omitempty" jsonschema:"exclusiveMinimum=0,exclusiveMaximum=1,example=0.5"`
	Mode    string   `json:"mode" jsonschema:"enum=fast|slow,default=fast"`
	Code    string   `json:"code,omitempty" jsonschema:"pattern='^[A-Z]{2,3}$',example=ABC,example=DE"`
	Note    string   `json:"note,omitempty" jsonschema:"minLength=1,maxLength=280,default='Hello, it''s me'"`
	Email   string   `json:"email,omitempty" jsonschema:"format=email"`
	Tags    []string `json:"tags,omitempty" jsonschema:"enum=red|green,maxItems=3,minItems=1,default='[\"red\"]'"`
	Sizes   []int    `json:"sizes,omitempty" jsonschema:"minimum=1"`
	Level   *int     `json:"level" jsonschema:"enum=1|2|3"`
	Enabled bool     `json:"enabled" jsonschema:"default=true"`
}

type omission struct {
	Query    string    `json:"query"`
	Executor chan bool `json:"executor" fill:"host"` // no JSON form, but omitted
	Storage  any       `json:"storage,omitempty" fill:"host"`
	Limit    int       `json:"limit,omitempty"`
}

// fillTag is an Options.Omit: fields tagged fill:"host".
func fillTag(f reflect.StructField) bool { return f.Tag.Get("fill") == "host" }

type Tree struct {
	Name     string  `json:"name"`
	Children []*Tree `json:"children,omitempty"`
}

type Node struct {
	Value int   `json:"value"`
	Next  *Node `json:"next,omitempty"`
}

type list struct {
	Head  *Node  `json:"head" description:"First node."`
	Nodes []Node `json:"nodes"`
}

type Expr struct {
	Op   string `json:"op"`
	Args []Arg  `json:"args,omitempty"`
}

type Arg struct {
	Literal *float64 `json:"literal,omitempty"`
	Expr    *Expr    `json:"expr,omitempty"`
}

type program struct {
	Main Expr `json:"main"`
}

type GenList[T any] struct {
	Val  T           `json:"val"`
	Next *GenList[T] `json:"next,omitempty"`
}

type generic struct {
	Ints    GenList[int]    `json:"ints"`
	Strings GenList[string] `json:"strings"`
}

type nested struct {
	Opts struct {
		Depth  int  `json:"depth" jsonschema:"default=1"`
		Follow bool `json:"follow,omitempty"`
		Filter struct {
			Include []string `json:"include,omitempty"`
		} `json:"filter"`
	} `json:"opts"`
	Items []struct {
		Name string `json:"name"`
		Qty  int    `json:"qty" jsonschema:"default=1,minimum=1"`
	} `json:"items"`
}

func TestForGolden(t *testing.T) {
	tests := []struct {
		name    string
		typ     reflect.Type
		omitted []string
	}{
		{"scalars", reflect.TypeFor[scalars](), nil},
		{"optionality", reflect.TypeFor[optionality](), nil},
		{"embedded", reflect.TypeFor[embedded](), nil},
		{"conflict", reflect.TypeFor[conflict](), nil},
		{"special", reflect.TypeFor[specials](), nil},
		{"tagged", reflect.TypeFor[tagged](), nil},
		{"omitted", reflect.TypeFor[omission](), []string{"executor", "storage"}},
		{"recursive_root", reflect.TypeFor[Tree](), nil},
		{"recursive_def", reflect.TypeFor[list](), nil},
		{"recursive_mutual", reflect.TypeFor[program](), nil},
		{"nested", reflect.TypeFor[nested](), nil},
		{"recursive_generic", reflect.TypeFor[generic](), nil},
		{"recursive_same_name", sameName(), nil},
		{"pointer_root", reflect.TypeFor[*Base](), nil},
		{"slice_root", reflect.TypeFor[[]string](), nil},
		{"empty_struct", reflect.TypeFor[struct{}](), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			info, err := ForType(tt.typ, Options{Omit: fillTag})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(info.Omitted, tt.omitted) {
				t.Errorf("Omitted = %q, want %q", info.Omitted, tt.omitted)
			}
			again, err := ForType(tt.typ, Options{Omit: fillTag})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(info.Schema, again.Schema) {
				t.Errorf("inference is not deterministic:\n%s\n%s", info.Schema, again.Schema)
			}
			// The schema compiles as draft 2020-12 (Compile checks it
			// against the meta-schema) also when $schema says so.
			var doc map[string]any
			if err := json.Unmarshal(info.Schema, &doc); err != nil {
				t.Fatal(err)
			}
			if _, ok := doc["$schema"]; ok {
				t.Error("inferred schema has $schema")
			}
			doc["$schema"] = "https://json-schema.org/draft/2020-12/schema"
			withDraft, _ := json.Marshal(doc)
			if _, err := Compile(withDraft); err != nil {
				t.Errorf("does not compile as 2020-12: %v", err)
			}

			var pretty bytes.Buffer
			if err := json.Indent(&pretty, info.Schema, "", "  "); err != nil {
				t.Fatal(err)
			}
			pretty.WriteByte('\n')
			golden := filepath.Join("testdata", tt.name+".golden.json")
			if *update {
				if err := os.WriteFile(golden, pretty.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./schema -run TestForGolden -update)", err)
			}
			if !bytes.Equal(pretty.Bytes(), want) {
				t.Errorf("schema differs from %s (rerun with -update if intended):\ngot:\n%s", golden, pretty.Bytes())
			}
		})
	}
}

// sameName returns a struct holding two different recursive types that
// are both called Node.
func sameName() reflect.Type {
	type Node struct {
		Label string `json:"label"`
		Next  *Node  `json:"next,omitempty"`
	}
	return reflect.TypeFor[struct {
		A *Node          `json:"a"`
		B *GenListOuter  `json:"b"`
		C *outerNodeType `json:"c"`
	}]()
}

type GenListOuter = GenList[bool]

type outerNodeType = Node

func TestForGeneric(t *testing.T) {
	a, err := For[Base]()
	if err != nil {
		t.Fatal(err)
	}
	b, err := ForType(reflect.TypeFor[Base](), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Schema, b.Schema) {
		t.Errorf("For and ForType differ:\n%s\n%s", a.Schema, b.Schema)
	}
	if !bytes.Equal(a.Validator.Schema(), a.Schema) {
		t.Error("Validator.Schema differs from Info.Schema")
	}
}

type (
	badChan struct {
		C chan int `json:"c"`
	}
	badFunc struct {
		F func() `json:"f"`
	}
	badComplex struct {
		C complex128 `json:"c"`
	}
	badMapKey struct {
		M map[[2]int]string `json:"m"`
	}
	badFacetKey struct {
		S string `json:"s" jsonschema:"minimun=1"`
	}
	badFacetType struct {
		S string `json:"s" jsonschema:"minimum=1"`
	}
	badItemsOnScalar struct {
		N int `json:"n" jsonschema:"maxItems=2"`
	}
	badDefault struct {
		N int `json:"n" jsonschema:"default=ten"`
	}
	badDefaultEnum struct {
		S string `json:"s" jsonschema:"enum=a|b,default=c"`
	}
	badQuote struct {
		S string `json:"s" jsonschema:"pattern='^a"`
	}
	badBoth struct {
		S string `json:"s" jsonschema:"required,optional"`
	}
	badCount struct {
		S string `json:"s" jsonschema:"maxLength=-1"`
	}
	badNestedOmit struct {
		Inner struct {
			X any `json:"x" fill:"host"`
		} `json:"inner"`
	}
	badPattern struct {
		S string `json:"s" jsonschema:"pattern='(unclosed'"`
	}
)

func TestForErrors(t *testing.T) {
	tests := []struct {
		typ  reflect.Type
		want string
	}{
		{reflect.TypeFor[badChan](), "badChan.C: type chan int has no JSON form"},
		{reflect.TypeFor[badFunc](), "type func() has no JSON form"},
		{reflect.TypeFor[badComplex](), "type complex128 has no JSON form"},
		{reflect.TypeFor[badMapKey](), "map key type [2]int has no JSON form"},
		{reflect.TypeFor[badFacetKey](), "jsonschema tag minimun: unknown key"},
		{reflect.TypeFor[badFacetType](), "jsonschema tag minimum: needs a number field, not a field of type string"},
		{reflect.TypeFor[badItemsOnScalar](), "jsonschema tag maxItems: needs a slice or array field"},
		{reflect.TypeFor[badDefault](), `"ten" is not a JSON value`},
		{reflect.TypeFor[badDefaultEnum](), "the default at /properties/s does not satisfy its schema"},
		{reflect.TypeFor[badQuote](), "unterminated quote"},
		{reflect.TypeFor[badBoth](), "both required and optional"},
		{reflect.TypeFor[badCount](), `"-1" is not a non-negative integer`},
		{reflect.TypeFor[badNestedOmit](), "badNestedOmit.Inner.X: only top-level fields may be left out of the schema"},
		{reflect.TypeFor[badPattern](), "compile"},
	}
	for _, tt := range tests {
		t.Run(tt.typ.Name(), func(t *testing.T) {
			_, err := ForType(tt.typ, Options{Omit: fillTag})
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
		})
	}
	if _, err := ForType(nil, Options{}); err == nil {
		t.Error("ForType(nil, Options{}): no error")
	}
}

func TestParseFacets(t *testing.T) {
	tests := []struct {
		tag  string
		want []facet
		err  bool
	}{
		{"", nil, false},
		{"minimum=0", []facet{{"minimum", "0", true}}, false},
		{"required", []facet{{"required", "", false}}, false},
		{"default=10, minimum=0 ,optional", []facet{{"default", "10", true}, {"minimum", "0 ", true}, {"optional", "", false}}, false},
		{"pattern='^[a-z]{1,3}$',format=email", []facet{{"pattern", "^[a-z]{1,3}$", true}, {"format", "email", true}}, false},
		{"default='it''s, ok'", []facet{{"default", "it's, ok", true}}, false},
		{"default=''", []facet{{"default", "", true}}, false},
		{"enum=a|b|c", []facet{{"enum", "a|b|c", true}}, false},
		{"default='a'b", nil, true},
		{"default='a", nil, true},
		{"=1", nil, true},
	}
	for _, tt := range tests {
		got, err := parseFacets(tt.tag)
		if (err != nil) != tt.err {
			t.Errorf("parseFacets(%q) error = %v, want error %v", tt.tag, err, tt.err)
			continue
		}
		if !tt.err && !slices.Equal(got, tt.want) {
			t.Errorf("parseFacets(%q) = %+v, want %+v", tt.tag, got, tt.want)
		}
	}
}
