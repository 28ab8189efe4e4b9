package soak_test

import (
	"context"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/soak"
)

// TestSoak runs the reduced soak the main module's tests (and so CI) run:
// 100 legacy and 100 modern clients, 5,000 calls, one in 50 carrying 256
// KiB each way; under a minute with the race detector on two cores.
// bench/ runs the full one (TestSoak there).
func TestSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("the soak runs for tens of seconds")
	}
	cfg := soak.Config{Legacy: 100, Modern: 100, Calls: 5000, LargeEvery: 50, LargeSize: 256 << 10, Timeout: 50 * time.Second}
	if raceEnabled {
		cfg.RSSSlack = -1 // the race detector's shadow memory is never given back
	}
	rep, err := soak.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(rep)
	if err := rep.Check(cfg); err != nil {
		t.Error(err)
	}
}
