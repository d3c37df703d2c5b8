package ratelimit

import (
	"testing"
	"time"
)

func TestTake(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 10, 0, 15, 0, time.UTC)
	clock := func() time.Time { return now }
	l := New(Limits{Read: 3, Write: 0, Auth: 1}, clock)

	tests := []struct {
		name      string
		class     Class
		key       string
		advance   time.Duration
		allowed   bool
		remaining int
		reset     int
	}{
		{"first read", Read, "a", 0, true, 2, 45},
		{"second read", Read, "a", 0, true, 1, 45},
		{"other ip has its own budget", Read, "b", 0, true, 2, 45},
		{"third read", Read, "a", 0, true, 0, 45},
		{"fourth read refused", Read, "a", 0, false, 0, 45},
		{"auth is a separate class", Auth, "a", 0, true, 0, 45},
		{"auth over budget", Auth, "a", 0, false, 0, 45},
		{"disabled class always allows", Write, "a", 0, true, 0, 0},
		{"new window resets", Read, "a", time.Minute, true, 2, 45},
	}
	for _, tt := range tests {
		now = now.Add(tt.advance)
		ok, _, rem, reset := l.Take(tt.class, tt.key)
		if ok != tt.allowed || rem != tt.remaining || reset != tt.reset {
			t.Fatalf("%s: got allowed=%v remaining=%d reset=%d", tt.name, ok, rem, reset)
		}
	}
}
