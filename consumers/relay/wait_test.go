package relay

import (
	"testing"
	"time"
)

// TestNextWait: an idle relay polls every idle; under load a publish starts
// gather after the previous one started, and a backlog is sent at once.
func TestNextWait(t *testing.T) {
	r := &Relay{batch: 500, idle: 20 * time.Millisecond, gather: 50 * time.Millisecond}
	for _, c := range []struct {
		n    int
		took time.Duration
		want time.Duration
	}{
		{0, time.Millisecond, 20 * time.Millisecond},
		{12, 10 * time.Millisecond, 40 * time.Millisecond},
		{12, 70 * time.Millisecond, -20 * time.Millisecond},
		{12, -time.Second, 50 * time.Millisecond},
		{500, time.Millisecond, 0},
		{1200, time.Millisecond, 0},
	} {
		if got := r.nextWait(c.n, c.took); got != c.want {
			t.Errorf("nextWait(%d, %v) = %v, want %v", c.n, c.took, got, c.want)
		}
	}
}
