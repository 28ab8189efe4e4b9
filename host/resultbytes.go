package host

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/toolwire/toolwire/tool"
)

// ResultBytes is a server's "maxResultBytes": the size, in bytes, above
// which a tool's result is kept behind a handle and the model shown a
// preview (package spill). It is a number for every tool of the server,
// or an object by tool name (as the server names it) with "*" for the
// others: {"*": 65536, "read_text_file": 1048576}. -1 keeps a tool's
// results whole.
type ResultBytes struct {
	// All applies to the tools not in Tools; 0 means the host's default.
	All int64
	// Tools holds the budgets of single tools.
	Tools map[string]int64
}

// UnmarshalJSON reads a number or an object of numbers.
func (rb *ResultBytes) UnmarshalJSON(b []byte) error {
	*rb = ResultBytes{}
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '{' {
		var m map[string]int64
		if err := json.Unmarshal(b, &m); err != nil {
			return fmt.Errorf("maxResultBytes: want a number of bytes, or an object of numbers by tool name: %w", err)
		}
		for name, n := range m {
			if err := checkResultBytes(n); err != nil {
				return fmt.Errorf("maxResultBytes %q: %w", name, err)
			}
		}
		rb.All, rb.Tools = m["*"], m
		delete(rb.Tools, "*")
		return nil
	}
	if err := json.Unmarshal(b, &rb.All); err != nil {
		return fmt.Errorf("maxResultBytes: want a number of bytes, or an object of numbers by tool name, not %s", b)
	}
	return checkResultBytes(rb.All)
}

// MarshalJSON writes a number, or the object when tools have budgets of
// their own.
func (rb ResultBytes) MarshalJSON() ([]byte, error) {
	if len(rb.Tools) == 0 {
		return json.Marshal(rb.All)
	}
	m := make(map[string]int64, len(rb.Tools)+1)
	for k, v := range rb.Tools {
		m[k] = v
	}
	if rb.All != 0 {
		m["*"] = rb.All
	}
	return json.Marshal(m)
}

func checkResultBytes(n int64) error {
	if n <= 0 && n != -1 {
		return fmt.Errorf("%d: want a positive number of bytes, or -1 to keep results whole", n)
	}
	return nil
}

// For returns the budget of the tool the server names name: 0 when the
// configuration sets none.
func (rb *ResultBytes) For(name string) int64 {
	if rb == nil {
		return 0
	}
	if n, ok := rb.Tools[name]; ok {
		return n
	}
	return rb.All
}

// ResultBudget returns the budget the configuration gives the results of
// t (its server's "maxResultBytes"): 0 when t is no configured server's
// tool or its server sets none. It is spill.Results.BudgetFor's answer
// for a host's tools.
func (c *Config) ResultBudget(t tool.Tool) int64 {
	rt, ok := t.(*RemoteTool)
	if !ok {
		return 0
	}
	sc := c.Servers[rt.Server()]
	if sc == nil {
		return 0
	}
	return sc.MaxResultBytes.For(rt.RemoteName())
}
