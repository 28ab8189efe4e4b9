package host

import (
	"strings"
	"testing"

	"github.com/toolwire/toolwire/tool"
)

// TestRemoteNameRoundTrip: a remote tool named files.read/v2, which model
// providers reject, is listed under a safe name and called by it, and the
// server receives its own name.
func TestRemoteNameRoundTrip(t *testing.T) {
	h := memHost(t, nil, map[string]*ServerConfig{"fake": {Transport: pipeTransport{dottedServer}}})
	reg := registry(t, h)
	tools := reg.Tools()
	if len(tools) != 1 {
		t.Fatalf("tools %v", toolNames(reg))
	}
	name := tools[0].Info().Name
	if err := tool.CheckName(name); err != nil || !strings.HasPrefix(name, "fake__files_read_v2_") {
		t.Fatalf("safe name %q: %v", name, err)
	}
	if rt := tools[0].(*RemoteTool); rt.RemoteName() != "files.read/v2" {
		t.Errorf("RemoteName = %q", rt.RemoteName())
	}
	res := call(t, reg, name, `{"path": "/tmp/x"}`)
	if res.IsError || res.Content[0].Text != "files.read/v2 read /tmp/x" {
		t.Errorf("result %+v; want the server to get its own name", res)
	}
	if again := tool.SafeName("fake__files.read/v2"); again != name {
		t.Errorf("SafeName is not deterministic: %q, then %q", name, again)
	}
	if other := tool.SafeName("fake__files_read/v2"); other == name {
		t.Errorf("two names map to %q", name)
	}
}

// TestPrefixMustBeSafe: a prefix with a character providers reject is a
// configuration error that says what to use.
func TestPrefixMustBeSafe(t *testing.T) {
	_, err := ParseConfig("c.json", []byte(`{"mcpServers": {"a": {"command": "x", "prefix": "my.tools"}}}`), func(string) (string, bool) { return "", false })
	if err == nil || !strings.Contains(err.Error(), "letters, digits, '_' and '-'") {
		t.Errorf("error %v; want one naming the characters a prefix may hold", err)
	}
	cfg, err := ParseConfig("c.json", []byte(`{"mcpServers": {"my.server": {"command": "x"}}}`), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	if p := cfg.Servers["my.server"].ToolPrefix(); p != "my_server__" {
		t.Errorf("prefix of server my.server = %q, want my_server__", p)
	}
}
