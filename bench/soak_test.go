package bench

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/soak"
)

// TestSoak is the full soak of toolwire's HTTP server (the main module runs
// a reduced one in CI): 1,000 legacy sessions and 1,000 stateless
// 2026-07-28 clients at once, 100,000 calls, one in 50 carrying 256 KiB
// each way, within 5 minutes. It runs when MCPBENCH_SOAK=1:
//
//	MCPBENCH_SOAK=1 go test -run TestSoak -v
func TestSoak(t *testing.T) {
	if os.Getenv("MCPBENCH_SOAK") != "1" {
		t.Skip("set MCPBENCH_SOAK=1 to run the full soak")
	}
	cfg := soak.Config{Legacy: 1000, Modern: 1000, Calls: 100_000, LargeEvery: 50, LargeSize: 256 << 10, Timeout: 5 * time.Minute}
	rep, err := soak.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(rep)
	if err := rep.Check(cfg); err != nil {
		t.Error(err)
	}
}
