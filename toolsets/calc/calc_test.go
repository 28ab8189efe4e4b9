package calc

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/tool"
)

func TestEvaluate(t *testing.T) {
	tests := []struct {
		expr, want, err string
	}{
		{expr: "1 + 2 * 3", want: "7"},
		{expr: "(17.5 * 4) / 3", want: "23.333333333333333333"},
		{expr: "pow(2, 64) / 3", want: "6148914691236517205.3"},
		{expr: "pow(2, 100)", want: "1267650600228229401496703205376"},
		{expr: "2 ^ 3", err: "operator ^ is not supported (at character 3): for a power, use pow(2, 3)"},
		{expr: "2**3", err: `cannot evaluate "2**3": operator ** is not supported (at character 2): for a power, use pow(2, 3)`},
		{expr: "(1+x) ** sqrt(2)", err: "operator ** is not supported (at character 7): for a power, use pow((1+x), sqrt(2))"},
		{expr: "2*3**2", err: "operator ** is not supported (at character 4): for a power, use pow(x, y)"},
		{expr: "2 * *3", err: `"*3" (at character 5) is not supported: calculate takes numbers`},
		{expr: "[]int{1}", err: `"[]int{1}" (at character 1) is not supported`},
		{expr: "0.1 + 0.2", want: "0.3"},
		{expr: "10 % 3", want: "1"},
		{expr: "-4 + 1", want: "-3"},
		{expr: "sqrt(16)", want: "4"},
		{expr: "pow(2, 0.5)", want: "1.4142135623731"},
		{expr: "1 / 0", err: "division by zero"},
		{expr: "foo(1)", err: `unknown function "foo"`},
		{expr: "1 +", err: "cannot parse"},
		{expr: `"a"`, err: "is not a number"},
		{expr: "x", err: `unknown name "x"`},
		{expr: "sqrt(1, 2)", err: "takes 1 argument"},
	}
	for _, tt := range tests {
		got, err := Evaluate(context.Background(), tt.expr)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("Evaluate(%q) error = %v, want it to contain %q", tt.expr, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("Evaluate(%q) = %q, %v; want %q", tt.expr, got, err, tt.want)
		}
	}
}

func TestTimeTools(t *testing.T) {
	var reg tool.Registry
	if err := reg.Add(Tools()...); err != nil {
		t.Fatal(err)
	}
	byName := map[string]func(string) (string, error){}
	for _, tl := range Tools() {
		name := tl.Info().Name
		byName[name] = func(args string) (string, error) {
			res, err := reg.Call(context.Background(), name, json.RawMessage(args))
			if err != nil {
				return "", err
			}
			return res.Content[0].Text, nil
		}
	}
	tests := []struct {
		tool, args, want, err string
	}{
		{tool: "convert_time", args: `{"time":"2026-07-01 12:00","from":"Europe/Paris","to":"Asia/Tokyo"}`, want: "2026-07-01T19:00:00+09:00 (Wednesday"},
		{tool: "convert_time", args: `{"time":"2026-01-15T12:00:00Z","to":"America/New_York"}`, want: "2026-01-15T07:00:00-05:00"},
		{tool: "convert_time", args: `{"time":"noon","to":"UTC"}`, err: `cannot read time "noon"`},
		{tool: "convert_time", args: `{"time":"2026-01-01","to":"Mars/Olympus"}`, err: `unknown time zone "Mars/Olympus"`},
		{tool: "time_between", args: `{"start":"2024-01-15","end":"2026-03-01"}`, want: "2 years, 1 months, 14 days"}, {tool: "time_between", args: `{"start":"2024-01-31","end":"2026-03-01"}`, want: "2 years, 0 months, 29 days"},
		{tool: "time_between", args: `{"start":"2026-03-01","end":"2026-02-28"}`, want: "-0 years, 0 months, 1 days"},
		{tool: "now", args: `{"timezone":"UTC"}`, want: "UTC"},
		{tool: "now", args: `{"tz":"UTC"}`, err: `unknown argument "tz"`},
	}
	for _, tt := range tests {
		got, err := byName[tt.tool](tt.args)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s(%s) error = %v, want %q", tt.tool, tt.args, err, tt.err)
			}
			continue
		}
		if err != nil || !strings.Contains(got, tt.want) {
			t.Errorf("%s(%s) = %q, %v; want it to contain %q", tt.tool, tt.args, got, err, tt.want)
		}
	}
}
