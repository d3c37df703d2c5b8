package fiat

import (
	"testing"
	"time"
)

// TestStampsNeverGoBack: a batch that overlapped the one before it loaded
// (and read the clock) first, yet decides after it; its commands are still
// stamped after that batch's, so newest-first lists keep the order in which
// commands were applied.
func TestStampsNeverGoBack(t *testing.T) {
	h := &Handler{}
	t0 := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	if got := h.stamps(t0, 3); !got.Equal(t0) {
		t.Fatalf("first batch starts at %s, want %s", got, t0)
	}
	early := t0.Add(-5 * time.Millisecond) // loaded while the first decided
	if got, want := h.stamps(early, 2), t0.Add(3*time.Microsecond); !got.Equal(want) {
		t.Fatalf("overlapped batch starts at %s, want %s (after the first batch's last stamp)", got, want)
	}
	later := t0.Add(time.Second)
	if got := h.stamps(later, 1); !got.Equal(later) {
		t.Fatalf("a later batch starts at %s, want its own clock %s", got, later)
	}
}
