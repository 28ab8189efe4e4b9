package handle

import (
	"context"
	"errors"
	"testing"
)

// A Memory remembers the last maxGone entries it dropped, and no more:
// a handle dropped before them reads as unknown.
func TestMemoryForgetsOldDrops(t *testing.T) {
	ctx := context.Background()
	var m Memory
	ids := make([]string, maxGone+1)
	for i := range ids {
		ids[i] = NewID(Kind{Prefix: "tbl"})
		if err := m.Put(ctx, Entry{ID: ids[i], Owner: "a", Size: 1}); err != nil {
			t.Fatal(err)
		}
		if err := m.Release(ctx, "a", ids[i]); err != nil {
			t.Fatal(err)
		}
	}
	if len(m.gone) != maxGone || len(m.goneRing) != maxGone {
		t.Fatalf("remembers %d drops (ring %d), want %d", len(m.gone), len(m.goneRing), maxGone)
	}
	var gone *goneError
	if _, err := m.Get(ctx, "a", ids[0]); !errors.Is(err, ErrExpired) || errors.As(err, &gone) {
		t.Errorf("the oldest drop: %v, want an unknown handle", err)
	}
	if _, err := m.Get(ctx, "a", ids[maxGone]); !errors.As(err, &gone) || gone.why != droppedReleased {
		t.Errorf("the last drop: %v, want released", err)
	}
}
