package host

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/mcp"
)

func TestResourcesAndPrompts(t *testing.T) {
	h := &Host{Config: everythingConfig(t)}
	t.Cleanup(func() { h.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	res, err := h.Resources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var uri string
	for _, r := range res {
		if r.Server != "everything" {
			t.Errorf("resource %s from server %q", r.URI, r.Server)
		}
		if strings.HasSuffix(r.URI, "architecture.md") {
			uri = r.URI
		}
	}
	if uri == "" {
		t.Fatalf("no architecture.md among %d resources", len(res))
	}
	read, err := h.ReadResource(ctx, uri, "")
	if err != nil || len(read.Contents) == 0 || !strings.Contains(read.Contents[0].Text, "Architecture") {
		t.Errorf("ReadResource(%s) = %+v, %v", uri, read, err)
	}
	if _, err := h.ReadResource(ctx, uri, "nosuch"); err == nil || !strings.Contains(err.Error(), `no server named "nosuch"`) {
		t.Errorf("ReadResource on an unknown server: %v", err)
	}

	prompts, err := h.Prompts(ctx, "everything")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, p := range prompts {
		found = found || p.Name == "everything__args-prompt" && p.RemoteName == "args-prompt"
	}
	if !found {
		t.Errorf("no everything__args-prompt among %+v", prompts)
	}
	got, err := h.GetPrompt(ctx, "everything__args-prompt", map[string]string{"city": "Paris"})
	if err != nil || len(got.Messages) == 0 || !strings.Contains(got.Messages[0].Content.Text, "Paris") {
		t.Errorf("GetPrompt = %+v, %v", got, err)
	}
	tests := []struct {
		name string
		args map[string]string
		want string
	}{
		{"everything__args-prompt", nil, "missing required argument(s) city"},
		{"everything__args-promt", nil, "did you mean everything__args-prompt?"},
	}
	for _, tt := range tests {
		if _, err := h.GetPrompt(ctx, tt.name, tt.args); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("GetPrompt(%s) = %v; want %q", tt.name, err, tt.want)
		}
	}
	var nf *NotFoundError
	if _, err := h.GetPrompt(ctx, "other__x", nil); !errors.As(err, &nf) || nf.Kind != "prompt" {
		t.Errorf("GetPrompt(other__x) = %v; want a NotFoundError", err)
	}
}

// TestResourcesOfEachServer: Resources and Prompts gather every page of
// each server that offers them, at once, skip servers that do not, and
// report a server that fails as a *ServerError naming it.
func TestResourcesOfEachServer(t *testing.T) {
	withItems := &mcp.Server{Info: mcp.Implementation{Name: "a", Version: "1"}, PageSize: 1}
	for _, n := range []string{"x", "y", "z"} {
		if err := withItems.AddResource(mcp.Resource{URI: "mem:///" + n, Name: n}, nil); err != nil {
			t.Fatal(err)
		}
		if err := withItems.AddPrompt(mcp.Prompt{Name: n}, nil); err != nil {
			t.Fatal(err)
		}
	}
	h := memHost(t, map[string]*mcp.Server{"a": withItems}, map[string]*ServerConfig{
		"a": {},
		"b": {Transport: pipeTransport{dottedServer}}, // tools only: resources/list would fail
		"c": {Command: "definitely-not-a-command-xyz"},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, rerr := h.Resources(ctx)
	prompts, perr := h.Prompts(ctx)
	var uris, names []string
	for _, r := range res {
		uris = append(uris, r.Server+" "+r.URI)
	}
	for _, p := range prompts {
		names = append(names, p.Server+" "+p.Name)
	}
	tests := []struct {
		what string
		got  []string
		err  error
		want string
	}{
		{"resources", uris, rerr, "[a mem:///x a mem:///y a mem:///z]"},
		{"prompts", names, perr, "[a a__x a a__y a a__z]"},
	}
	for _, tt := range tests {
		if fmt.Sprint(tt.got) != tt.want {
			t.Errorf("%s = %v, want %s", tt.what, tt.got, tt.want)
		}
		var se *ServerError
		if !errors.As(tt.err, &se) || se.Server != "c" || !strings.Contains(tt.err.Error(), "definitely-not-a-command-xyz") {
			t.Errorf("%s error = %v; want a *ServerError for server c", tt.what, tt.err)
		}
	}
}
