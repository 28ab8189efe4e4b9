package mcp_test

import (
	"context"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/toolsets/calc"
)

func TestClientSmokeStdio(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "toolwire")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/toolwire").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, v := range []string{"", mcp.Version20251125, mcp.Version20241105} {
		c := &mcp.Client{Info: mcp.Implementation{Name: "t", Version: "1"}, ProtocolVersion: v}
		s, err := c.Connect(ctx, &mcp.CommandTransport{Command: bin, Args: []string{"serve"}, Stderr: os.Stderr})
		if err != nil {
			t.Fatal(err)
		}
		tools, err := s.ListTools(ctx)
		if err != nil {
			t.Fatal(err)
		}
		res, err := s.CallTool(ctx, "calculate", []byte(`{"expression":"6*7"}`))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("version=%s tools=%d result=%s", s.ProtocolVersion(), len(tools), res.Content[0].Text)
		if res.Content[0].Text != "42" {
			t.Fatalf("got %q", res.Content[0].Text)
		}
		s.Close()
	}
}

func TestClientToolsFreshness(t *testing.T) {
	srv := &mcp.Server{Info: mcp.Implementation{Name: "s", Version: "1"}, ListTTL: 150 * time.Millisecond}
	if err := srv.AddTools(calc.Tools()...); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(&mcp.HTTPHandler{Server: srv})
	defer ts.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := (&mcp.Client{Info: mcp.Implementation{Name: "c", Version: "1"}}).Connect(ctx, &mcp.HTTPTransport{URL: ts.URL})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.ToolsFresh() {
		t.Error("fresh before any tools/list")
	}
	if _, err := s.ListTools(ctx); err != nil {
		t.Fatal(err)
	}
	if !s.ToolsFresh() {
		t.Error("not fresh right after tools/list")
	}
	time.Sleep(200 * time.Millisecond)
	if s.ToolsFresh() {
		t.Error("still fresh after the server's ttlMs ran out")
	}
}
