package data

import (
	"strings"
	"testing"
	"time"
)

// filter's value takes a string, a number or a boolean (read as the
// column's type), null for the ops that need none, and nothing else.
func TestFilterValueTypes(t *testing.T) {
	e := newEnv(t, Config{TTL: time.Hour})
	e.write("sales.csv", sales)
	h, _ := e.load("sales.csv")
	for _, c := range []struct {
		column, op string
		value      any
		rows       int64
	}{{"units", "ge", 3, 3}, {"units", "ge", "3", 3}, {"region", "eq", "north", 2}, {"units", "is_missing", nil, 1}} {
		_, fi := tableOf(t, e.must("filter", map[string]any{"table": h, "column": c.column, "op": c.op, "value": c.value}))
		if fi.Rows != c.rows {
			t.Errorf("filter %s %s %v: %d rows, want %d", c.column, c.op, c.value, fi.Rows, c.rows)
		}
	}
	for _, v := range []any{[]any{3}, map[string]any{"n": 3}} {
		_, err := e.call("filter", map[string]any{"table": h, "column": "units", "op": "eq", "value": v})
		if err == nil || !strings.Contains(err.Error(), `argument "value": expected null or boolean or number or string, got `) {
			t.Errorf("value %v: %v, want a type error", v, err)
		}
	}
	if _, err := e.call("filter", map[string]any{"table": h, "column": "units", "op": "eq", "value": nil}); err == nil || err.Error() != "op eq needs a value" {
		t.Errorf("eq with null: %v", err)
	}
}
