package calc

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/tool"
)

// hangLimit is how long a bounded evaluation may take before a test calls
// it hung (the unbounded ones took a minute of CPU and more).
const hangLimit = 30 * time.Second

// evaluateWithin runs Evaluate on its own goroutine and fails the test
// when it has not returned within hangLimit.
func evaluateWithin(t *testing.T, ctx context.Context, expr string) (string, error) {
	t.Helper()
	type outcome struct {
		v   string
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		v, err := Evaluate(ctx, expr)
		done <- outcome{v, err}
	}()
	select {
	case o := <-done:
		return o.v, o.err
	case <-time.After(hangLimit):
		t.Fatalf("Evaluate(%.60q) still running after %v: no cost bound", expr, hangLimit)
		return "", nil
	}
}

// slowExpression is an expression within every size bound that takes a
// while to evaluate: many large exact powers.
func slowExpression() string {
	var b strings.Builder
	for b.Len() < MaxExpressionLength-20 {
		b.WriteString("pow(3,41000)*0+")
	}
	b.WriteString("1")
	return b.String()
}

// TestCostBound checks that expressions past calculate's size bound are
// refused with an error naming the bound, before they cost much, and
// that the largest numbers within it still work.
func TestCostBound(t *testing.T) {
	tests := []struct {
		name, expr, want, err string
	}{
		// From issue 20: 55 s of CPU and a 16.7 MB answer, and worse.
		{name: "power of a large power", expr: "pow(pow(10,4096),2048)", err: "pow(…, 2048) would have about 8"},
		{name: "larger power of a large power", expr: "pow(pow(10,4096),4096)", err: "pow(…, 4096) would have about 16"},
		{name: "huge exponent", expr: "pow(2, 1000000000000)", err: "within 20000 digits"},
		{name: "exponent past int64", expr: "pow(7, 100000000000000000000)", err: "within 20000 digits"},
		{name: "product past the bound", expr: "pow(10, 19999) * pow(10, 19999)", err: "about 3999"},
		{name: "sum of products growing", expr: "pow(10,15000)*pow(10,15000)+1", err: "within 20000 digits"},
		{name: "float literal with a huge exponent", expr: "1e10000000 + 1", err: "within 20000 digits"},
		{name: "float literal past the bound", expr: "1e100000", err: "within 20000 digits"},
		{name: "tiny float literal", expr: "1e-10000000 * 3", err: "within 20000 digits"},
		{name: "hex float with a huge exponent", expr: "0x1p100000000", err: "within 20000 digits"},
		{name: "literal out of range", expr: "1e1000000000", err: "out of range"},
		{name: "long integer literal", expr: strings.Repeat("9", 20001), err: "within 20000 digits"},
		{name: "expression too long", expr: strings.Repeat("1+", MaxExpressionLength/2) + "1", err: "up to 100000 bytes"},
		// Within the bound: exact, as before, and larger than before.
		{name: "largest power of ten", expr: "pow(10, 19999) / pow(10, 19998)", want: "10"},
		{name: "power past the old exact limit", expr: "pow(2, 5000) - pow(2, 5000) + pow(-1, 1000000000000)", want: "1"},
		{name: "power of one with a huge exponent", expr: "pow(1, 100000000000000000000)", want: "1"},
		{name: "power of zero", expr: "pow(0, 100000000000000000000) + pow(0, 0)", want: "1"},
		{name: "negative exponent", expr: "pow(2, -3)", want: "0.125"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := evaluateWithin(t, context.Background(), tt.expr)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Evaluate(%.60q) = %.60q, %v; want an error containing %q", tt.expr, got, err, tt.err)
				}
				if len(err.Error()) > 600 {
					t.Errorf("error message of %d bytes: %.100q…", len(err.Error()), err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("Evaluate(%.60q) = %.60q, %v; want %q", tt.expr, got, err, tt.want)
			}
		})
	}
}

// TestCalculateCancelled checks that a calculation stops when its call is
// cancelled (the client cancels or disconnects): the goroutine running
// the call returns with the cancellation, not with a result.
func TestCalculateCancelled(t *testing.T) {
	var reg tool.Registry
	if err := reg.Add(calculate(TimeBudget)); err != nil {
		t.Fatal(err)
	}
	args, err := json.Marshal(calculateArgs{Expression: slowExpression()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		res, err := reg.Call(ctx, "calculate", args)
		if err == nil && res != nil && !res.IsError {
			err = errors.New("finished with a result: " + res.Content[0].Text)
		}
		done <- err
	}()
	time.Sleep(20 * time.Millisecond) // let it start; not a measurement
	cancel()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "cancel") {
			t.Fatalf("cancelled calculate ended with %v; want the cancellation", err)
		}
	case <-time.After(hangLimit):
		t.Fatalf("calculate still running %v after its call was cancelled", hangLimit)
	}
}

// TestCalculateTimeBudget checks that a calculation stops at its time
// budget with an error naming it.
func TestCalculateTimeBudget(t *testing.T) {
	var reg tool.Registry
	if err := reg.Add(calculate(time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	args, err := json.Marshal(calculateArgs{Expression: slowExpression()})
	if err != nil {
		t.Fatal(err)
	}
	res, err := reg.Call(context.Background(), "calculate", args)
	var text string
	if res != nil && len(res.Content) > 0 {
		text = res.Content[0].Text
	}
	if err == nil || !strings.Contains(err.Error(), "time budget of 1ms") {
		t.Fatalf("calculate over its time budget = %.80q, %v; want an error naming the budget", text, err)
	}
}
