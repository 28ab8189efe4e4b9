package tool

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/jsonvalue"
)

type assignInner struct {
	N int `json:"n"`
	F float32
	S *string `json:"s,omitempty"`
	L []string
}

type assignIn struct {
	Name      string            `json:"name"`
	Count     int8              `json:"count"`
	U         uint16            `json:"u"`
	Ratio     float64           `json:"ratio"`
	On        bool              `json:"on"`
	Ptr       *int              `json:"ptr"`
	Tags      []string          `json:"tags"`
	Nested    assignInner       `json:"nested"`
	NestedPtr *assignInner      `json:"nested_ptr"`
	M         map[string]int    `json:"m"`
	MM        map[string][]bool `json:"mm"`
	Any       any               `json:"any"`
	Raw       json.RawMessage   `json:"raw"`
	When      time.Time         `json:"when"`
	Skip      string            `json:"-"`
	//lint:ignore SA5008 the tag names a field "-", which is what this case tests
	Dash   string    `json:"-,"`
	Bytes  []byte    `json:"bytes"`
	Rec    *assignIn `json:"rec"`
	Plain  string
	Quoted assignQuoted `json:"quoted"`
	Level  assignLevel  `json:"level"`
}

// assignLevel decodes itself (lower-cased), as a string would not: the
// assigner leaves it to encoding/json.
type assignLevel string

func (l *assignLevel) UnmarshalText(b []byte) error {
	*l = assignLevel(strings.ToLower(string(b)))
	return nil
}

// assignQuoted has a ",string" field: the assigner leaves it to
// encoding/json.
type assignQuoted struct {
	N int `json:"n,string"`
}

// agreeAssign checks that whenever the assigner fills an assignIn from the
// generic value of data, encoding/json fills it the same way from the
// value's encoding, and that whenever it fills one straight from data, it
// fills it as from the generic value.
func agreeAssign(t *testing.T, a *assigner, data []byte) {
	t.Helper()
	v, err := jsonvalue.Decode(data)
	var direct assignIn
	if a.assignJSON(reflect.ValueOf(&direct).Elem(), data) {
		if err != nil {
			t.Fatalf("assignJSON(%q) filled a value from what does not decode: %v", data, err)
		}
		var viaValue assignIn
		if !a.assign(reflect.ValueOf(&viaValue).Elem(), v) {
			t.Fatalf("assignJSON(%q) filled a value, assign from the decoded value refuses", data)
		}
		if !reflect.DeepEqual(direct, viaValue) {
			t.Fatalf("assignJSON(%q):\n got %+v\nwant %+v", data, direct, viaValue)
		}
	}
	if err != nil {
		return
	}
	var got assignIn
	if !a.assign(reflect.ValueOf(&got).Elem(), v) {
		return
	}
	b, err := jsonvalue.Append(nil, v)
	if err != nil {
		t.Fatal(err)
	}
	var want assignIn
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatalf("assigned %s, which encoding/json refuses: %v", data, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("assign(%s):\n got %+v\nwant %+v", data, got, want)
	}
}

func FuzzAssign(f *testing.F) {
	for _, s := range []string{
		`{"name":"x","count":-5,"u":7,"ratio":0.25,"on":true,"ptr":3,"tags":["a","b"],"Plain":"p"}`,
		`{"nested":{"n":2,"F":1.5,"s":"x","L":null},"nested_ptr":{"n":-1},"m":{"a":1},"mm":{"k":[true,false]}}`,
		`{"any":{"x":[1,"y",null]},"rec":{"rec":{"name":"deep"}},"-":"dash","Skip":"s"}`,
		`{"count":300}`, `{"count":2.5}`, `{"u":-1}`, `{"ratio":"x"}`, `{"name":null,"ptr":null,"tags":null}`,
		`{"raw":{"a":1}}`, `{"when":"2026-11-21T00:00:00Z"}`, `{"bytes":"aGk="}`, `{"NAME":"x"}`, `{"quoted":{"n":"5"}}`,
		`{"nested":{"F":1e300}}`, `{"count":1e21}`, `{"m":{"a":1.5}}`, `{"extra":1}`, `[]`, `"x"`,
		`{"name":"a\u00e9\n","Plain":"\ud83d\ude00"}`, "{\"name\":\"\xff\"}", `{"nested":{"n":1},"nested":{"F":2}}`,
		`{"ptr":3,"ptr":null}`, `{"m":{"a":1,"a":2}}`, `{"count":1e400}`, ` {"tags":[]} `, `{"tags":["a",]}`, `null`,
	} {
		f.Add([]byte(s))
	}
	a := newAssigner(reflect.TypeFor[assignIn]())
	f.Fuzz(func(t *testing.T, data []byte) {
		agreeAssign(t, a, data)
	})
}

// TestAssignFills shows the direct way is taken for the usual shapes, and
// refused for what it leaves to encoding/json; from the generic value and
// straight from JSON alike.
func TestAssignFills(t *testing.T) {
	a := newAssigner(reflect.TypeFor[assignIn]())
	for in, want := range map[string]bool{
		`{"name":"x","count":3,"tags":["a"],"nested":{"n":1},"m":{"a":1},"any":[1],"rec":{"name":"y"}}`: true,
		`{"name":"x","Plain":"p","ptr":null}`: true,
		`{"raw":{}}`:                          false, // json.RawMessage unmarshals itself
		`{"when":"2026-11-21"}`:               false, // so does time.Time
		`{"level":"HIGH"}`:                    false, // and assignLevel, a string otherwise
		`{"NAME":"x"}`:                        false, // encoding/json matches it to Name, without regard to case
		`{"count":2.5}`:                       false, // encoding/json refuses it: let it say so
		`{"quoted":{"n":"1"}}`:                false,
		`{"bytes":"aGk="}`:                    false,
	} {
		v, err := jsonvalue.Decode([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		var got assignIn
		if ok := a.assign(reflect.ValueOf(&got).Elem(), v); ok != want {
			t.Errorf("assign(%s) = %v, want %v", in, ok, want)
		}
		got = assignIn{}
		if ok := a.assignJSON(reflect.ValueOf(&got).Elem(), []byte(in)); ok != want {
			t.Errorf("assignJSON(%s) = %v, want %v", in, ok, want)
		}
		agreeAssign(t, a, []byte(in))
	}
}

// TestAssignJSON shows what the direct way from JSON makes of what only
// JSON text has: escapes, repeated keys, white space, numbers out of
// range, syntax errors.
func TestAssignJSON(t *testing.T) {
	a := newAssigner(reflect.TypeFor[assignIn]())
	s := "x"
	for in, want := range map[string]*assignIn{
		`{"name":"a\u00e9\n\"","Plain":"\ud83d\ude00"}`:       {Name: "aé\n\"", Plain: "😀"},
		"{\"name\":\"a\xffb\"}":                               {Name: "a\uFFFDb"},
		" {\"count\" : -3 ,\n\"u\":1e2}\t":                    {Count: -3, U: 100},
		`{"nested":{"n":1,"s":"x"},"nested":{"F":2}}`:         {Nested: assignInner{F: 2}}, // the last one counts
		`{"ptr":3,"ptr":null,"tags":["a"],"tags":[]}`:         {Tags: []string{}},
		`{"nested_ptr":{"s":"x","L":["a","b"]}}`:              {NestedPtr: &assignInner{S: &s, L: []string{"a", "b"}}},
		`{"m":{"a":1,"\u0061":2,"b":3},"any":[1,{"k":null}]}`: {M: map[string]int{"a": 2, "b": 3}, Any: []any{1.0, map[string]any{"k": nil}}},
		`null`:                     {},
		`{"count":1e400}`:          nil, // does not decode
		`{"any":[1e400]}`:          nil,
		`{"name":"x"} {}`:          nil,
		`{"name":"x",}`:            nil,
		`{"name":"\x"}`:            nil,
		`{"count":"1"}`:            nil,
		`{"nested":{"n":1},"x":1}`: nil,
		``:                         nil,
	} {
		var got assignIn
		ok := a.assignJSON(reflect.ValueOf(&got).Elem(), []byte(in))
		if ok != (want != nil) || ok && !reflect.DeepEqual(got, *want) {
			t.Errorf("assignJSON(%q) = %v, %+v; want %+v", in, ok, got, want)
		}
		agreeAssign(t, a, []byte(in))
	}
}
