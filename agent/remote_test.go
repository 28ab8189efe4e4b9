package agent_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/agent"
	"github.com/toolwire/toolwire/host"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/model"
	"github.com/toolwire/toolwire/tool"
)

// TestRemoteToolsLikeLocal: an agent whose tools an MCP server gives (in
// memory, through a host: no process) shows the model what it shows for
// the same tools in-process, results and errors alike.
func TestRemoteToolsLikeLocal(t *testing.T) {
	srv := &mcp.Server{Info: mcp.Implementation{Name: "calc", Version: "1"}}
	if err := srv.AddTools(divide()); err != nil {
		t.Fatal(err)
	}
	noPrefix := ""
	h := &host.Host{Config: &host.Config{Path: "mem.json", Servers: map[string]*host.ServerConfig{
		"calc": {Name: "calc", Prefix: &noPrefix, Transport: &mcp.InMemoryTransport{Server: srv}},
	}}}
	t.Cleanup(func() { h.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var remote, local tool.Registry
	if err := h.Sync(ctx, &remote); err != nil {
		t.Fatal(err)
	}
	if err := local.Add(divide()); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args    string
		text    string
		isError bool
	}{
		{`{"a":6,"b":3}`, "2", false},
		{`{"a":1,"b":0}`, "division by zero: use a non-zero b", true},
		{`{"a":1,"b":"x"}`, `argument "b": expected number`, true},
	}
	run := func(reg *tool.Registry, args string) model.ToolResult {
		s := &script{answers: []model.Message{calls("divide", args), answer("done")}}
		res, err := (&agent.Agent{Model: s, Tools: reg}).Run(ctx, []model.Message{{Role: model.RoleUser, Text: "divide"}})
		if err != nil {
			t.Fatal(err)
		}
		return res.Messages[2].ToolResults[0]
	}
	for _, tt := range tests {
		got, want := run(&remote, tt.args), run(&local, tt.args)
		if got.Text != want.Text || got.IsError != want.IsError {
			t.Errorf("%s: remote %+v, local %+v", tt.args, got, want)
		}
		if got.IsError != tt.isError || !strings.Contains(got.Text, tt.text) {
			t.Errorf("%s: %+v, want %q (error %v)", tt.args, got, tt.text, tt.isError)
		}
	}
}
