package toolsets

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/tool"
)

// config is the options type of the test toolsets.
type config struct{ Size int }

// fake is a toolset that counts its Close calls.
type fake struct {
	options  config
	closed   int
	closeErr error
}

func (f *fake) Tools() []tool.Tool { return nil }
func (f *fake) Close() error       { f.closed++; return f.closeErr }

// TestOpen: Open finds a toolset by name, gives it its options (nil for
// the zero value, another type refused) and says which names it knows.
func TestOpen(t *testing.T) {
	errBroken := errors.New("disk full")
	var r registry
	var last *fake
	r.register("sized", opener(func(_ context.Context, c config) (Toolset, error) {
		last = &fake{options: c}
		return last, nil
	}))
	r.register("broken", opener(func(context.Context, config) (Toolset, error) { return nil, errBroken }))
	r.register("alpha", opener(func(context.Context, struct{}) (Toolset, error) { return &fake{}, nil }))

	tests := []struct {
		name     string
		toolset  string
		options  any
		want     config
		wantErr  []string // words the error must hold
		wantIsEr error
	}{
		{name: "options given", toolset: "sized", options: config{Size: 3}, want: config{Size: 3}},
		{name: "nil options: the zero value", toolset: "sized", options: nil, want: config{}},
		{name: "options of another type", toolset: "sized", options: &config{Size: 3},
			wantErr: []string{"toolset sized", "toolsets.config", "*toolsets.config"}},
		{name: "unknown name lists the known ones", toolset: "calc",
			wantErr: []string{`unknown toolset "calc"`, "alpha, broken, sized"}},
		{name: "the opener's error, wrapped", toolset: "broken", wantErr: []string{"toolset broken", "disk full"}, wantIsEr: errBroken},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			last = nil
			ts, err := r.open(context.Background(), tt.toolset, tt.options)
			if tt.wantErr != nil {
				if err == nil {
					t.Fatalf("opened %v, want an error", ts)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not say %q", err, w)
					}
				}
				if tt.wantIsEr != nil && !errors.Is(err, tt.wantIsEr) {
					t.Errorf("error %q does not wrap %q", err, tt.wantIsEr)
				}
				if ts != nil {
					t.Errorf("a failed Open returned the toolset %v", ts)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if last == nil || last.options != tt.want {
				t.Errorf("the toolset was opened with %+v, want %+v", last, tt.want)
			}
		})
	}
}

// TestOpenNothingRegistered: with no toolset registered, the error says
// how to register one.
func TestOpenNothingRegistered(t *testing.T) {
	var r registry
	_, err := r.open(context.Background(), "calc", nil)
	if err == nil || !strings.Contains(err.Error(), "import a toolset's package") {
		t.Errorf("error %v, want one that says to import a toolset's package", err)
	}
}

// TestRegisterPanics: a name registered twice, an empty name and a nil
// function are mistakes in how the program was built, refused at once.
func TestRegisterPanics(t *testing.T) {
	open := opener(func(context.Context, config) (Toolset, error) { return &fake{}, nil })
	tests := []struct {
		name      string
		register  func(*registry)
		wantPanic string
	}{
		{name: "twice", register: func(r *registry) { r.register("x", open); r.register("x", open) }, wantPanic: "twice for toolset x"},
		{name: "empty name", register: func(r *registry) { r.register("", open) }, wantPanic: "empty name"},
		{name: "nil function", register: func(r *registry) {
			r.register("x", opener[config](nil))
		}, wantPanic: "nil open function"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				p := recover()
				if s, _ := p.(string); !strings.Contains(s, tt.wantPanic) {
					t.Errorf("panic %v, want one that says %q", p, tt.wantPanic)
				}
			}()
			tt.register(&registry{})
		})
	}
}

// TestCloseOnce: closing an opened toolset again does not close it again,
// and returns the first Close's error.
func TestCloseOnce(t *testing.T) {
	errClose := errors.New("still busy")
	for _, tt := range []struct {
		name string
		err  error
	}{{"closes cleanly", nil}, {"fails to close", errClose}} {
		t.Run(tt.name, func(t *testing.T) {
			f := &fake{closeErr: tt.err}
			var r registry
			r.register("f", opener(func(context.Context, config) (Toolset, error) { return f, nil }))
			ts, err := r.open(context.Background(), "f", nil)
			if err != nil {
				t.Fatal(err)
			}
			for i := range 3 {
				if err := ts.Close(); !errors.Is(err, tt.err) || (tt.err == nil && err != nil) {
					t.Errorf("Close #%d: %v, want %v", i+1, err, tt.err)
				}
			}
			if f.closed != 1 {
				t.Errorf("the toolset was closed %d times, want once", f.closed)
			}
		})
	}
}

// TestNames: the registered names, sorted.
func TestNames(t *testing.T) {
	var r registry
	if got := r.names(); len(got) != 0 {
		t.Errorf("names of an empty registry: %v", got)
	}
	for _, n := range []string{"data", "calc", "web"} {
		r.register(n, opener(func(context.Context, config) (Toolset, error) { return &fake{}, nil }))
	}
	if got, want := r.names(), []string{"calc", "data", "web"}; !slices.Equal(got, want) {
		t.Errorf("names %v, want %v", got, want)
	}
}
