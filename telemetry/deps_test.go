package telemetry_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestCoreUsesTheAPIOnly: the core packages depend on the OpenTelemetry
// API, never on its SDK, exporters or gRPC, which only the CLI needs.
func TestCoreUsesTheAPIOnly(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "../agent", "../model/...", "../tool", "../mcp", "../host", "../jsonrpc", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	api := false
	for _, p := range strings.Fields(string(out)) {
		if strings.HasPrefix(p, "go.opentelemetry.io/otel/sdk") || strings.HasPrefix(p, "go.opentelemetry.io/otel/exporters") || strings.HasPrefix(p, "google.golang.org/grpc") {
			t.Errorf("a core package depends on %s", p)
		}
		api = api || p == "go.opentelemetry.io/otel/trace"
	}
	if !api {
		t.Error("no core package depends on go.opentelemetry.io/otel/trace: is this test listing the right packages?")
	}
}
