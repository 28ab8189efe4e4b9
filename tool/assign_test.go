package tool

import (
	"encoding/json"
	"reflect"
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
	Dash      string            `json:"-,"`
	Bytes     []byte            `json:"bytes"`
	Rec       *assignIn         `json:"rec"`
	Plain     string
	Quoted    assignQuoted `json:"quoted"`
}

// assignQuoted has a ",string" field: the assigner leaves it to
// encoding/json.
type assignQuoted struct {
	N int `json:"n,string"`
}

// agreeAssign checks that whenever the assigner fills an assignIn from the
// generic value of data, encoding/json fills it the same way from the
// value's encoding.
func agreeAssign(t *testing.T, a *assigner, data []byte) {
	t.Helper()
	v, err := jsonvalue.Decode(data)
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
	} {
		f.Add([]byte(s))
	}
	a := newAssigner(reflect.TypeFor[assignIn]())
	f.Fuzz(func(t *testing.T, data []byte) {
		agreeAssign(t, a, data)
	})
}

// TestAssignFills shows the direct way is taken for the usual shapes, and
// refused for what it leaves to encoding/json.
func TestAssignFills(t *testing.T) {
	a := newAssigner(reflect.TypeFor[assignIn]())
	for in, want := range map[string]bool{
		`{"name":"x","count":3,"tags":["a"],"nested":{"n":1},"m":{"a":1},"any":[1],"rec":{"name":"y"}}`: true,
		`{"name":"x","Plain":"p","ptr":null}`: true,
		`{"raw":{}}`:                          false, // json.RawMessage unmarshals itself
		`{"when":"2026-11-21"}`:               false, // so does time.Time
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
		agreeAssign(t, a, []byte(in))
	}
}
