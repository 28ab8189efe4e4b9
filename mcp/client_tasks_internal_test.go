package mcp

import (
	"testing"
	"time"
)

func TestPollInterval(t *testing.T) {
	for _, tc := range []struct {
		serverMs int64
		last     time.Duration
		want     time.Duration
	}{
		{0, 0, time.Second},                                   // none given: a second
		{200, 0, 200 * time.Millisecond},                      // the server's
		{1, 0, taskPollMin},                                   // never faster than the floor
		{200, 400 * time.Millisecond, 600 * time.Millisecond}, // backing off
		{200, 9 * time.Second, taskPollMax},                   // up to the ceiling
		{60_000, 0, time.Minute},                              // a server asking for less is heeded
	} {
		if got := pollInterval(tc.serverMs, tc.last); got != tc.want {
			t.Errorf("pollInterval(%d, %v) = %v, want %v", tc.serverMs, tc.last, got, tc.want)
		}
	}
}
