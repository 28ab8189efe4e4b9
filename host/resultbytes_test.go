package host

import (
	"context"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/tool"
)

// TestMaxResultBytes: the key's two forms, its bad values, and the
// budget a server's tool gets from it.
func TestMaxResultBytes(t *testing.T) {
	none := func(string) (string, bool) { return "", false }
	for _, tc := range []struct {
		value      string
		ping, wthr int64
		err        string
	}{
		{`65536`, 65536, 65536, ""},
		{`-1`, -1, -1, ""},
		{`{"*": 1000, "weather": 2000}`, 1000, 2000, ""},
		{`{"weather": -1}`, 0, -1, ""},
		{`0`, 0, 0, "want a positive number of bytes, or -1"},
		{`-5`, 0, 0, "want a positive number of bytes, or -1"},
		{`"16k"`, 0, 0, "want a number of bytes, or an object"},
		{`{"weather": 0}`, 0, 0, `maxResultBytes "weather": 0: want a positive number`},
	} {
		t.Run(tc.value, func(t *testing.T) {
			cfg, err := ParseConfig("test.json", []byte(`{"mcpServers": {"fake": {"command": "x", "maxResultBytes": `+tc.value+`}}}`), none)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(cfg.Warnings) > 0 {
				t.Errorf("warnings: %v", cfg.Warnings)
			}
			sc := cfg.Servers["fake"]
			sc.Command, sc.Transport = "", &mcp.InMemoryTransport{Server: newFakeServer("")}
			h := &Host{Config: cfg}
			defer h.Close()
			tools, err := h.Tools(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if got := cfg.ResultBudget(find(t, tools, "fake__ping")); got != tc.ping {
				t.Errorf("ping's budget = %d, want %d", got, tc.ping)
			}
			if got := cfg.ResultBudget(find(t, tools, "fake__weather")); got != tc.wthr {
				t.Errorf("weather's budget = %d, want %d", got, tc.wthr)
			}
		})
	}
	local := tool.NewFunc(tool.Info{Name: "local"}, nil)
	if got := (&Config{}).ResultBudget(local); got != 0 {
		t.Errorf("a tool of no server: budget %d", got)
	}
}
