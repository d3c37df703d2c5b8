package fiat

import (
	"testing"
	"time"
)

func TestExpiryReason(t *testing.T) {
	t.Parallel()
	exp := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name            string
		views, maxViews int
		now             time.Time
		want            string
	}{
		{"fresh", 0, 100, exp.Add(-time.Hour), ""},
		{"one microsecond before expiry", 0, 100, exp.Add(-time.Microsecond), ""},
		{"exactly at expiresAt is expired", 0, 100, exp, ExpiryTime},
		{"after expiresAt", 0, 100, exp.Add(time.Second), ExpiryTime},
		{"one view left", 99, 100, exp.Add(-time.Hour), ""},
		{"views reached max", 100, 100, exp.Add(-time.Hour), ExpiryViews},
		{"views over max", 101, 100, exp.Add(-time.Hour), ExpiryViews},
		{"time wins over views", 100, 100, exp, ExpiryTime},
		{"max views 1 unviewed", 0, 1, exp.Add(-time.Hour), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := ExpiryReason(tt.views, tt.maxViews, exp, tt.now); got != tt.want {
				t.Errorf("ExpiryReason(%d, %d, %v) = %q, want %q", tt.views, tt.maxViews, tt.now, got, tt.want)
			}
		})
	}
}

func TestView(t *testing.T) {
	t.Parallel()
	exp := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	before := exp.Add(-time.Minute)
	tests := []struct {
		name            string
		status          string
		views, maxViews int
		now             time.Time
		want            ViewResult
	}{
		{"first view counts", RequestOpen, 0, 3, before, ViewResult{Views: 1, Status: RequestOpen}},
		{"view before the last", RequestOpen, 1, 3, before, ViewResult{Views: 2, Status: RequestOpen}},
		{"view reaching max is served and expires", RequestOpen, 2, 3, before,
			ViewResult{Views: 3, Status: RequestExpired, Expired: ExpiryViews}},
		{"max views 1: the first view expires it", RequestOpen, 0, 1, before,
			ViewResult{Views: 1, Status: RequestExpired, Expired: ExpiryViews}},
		{"expired request is gone and not counted", RequestExpired, 3, 3, before,
			ViewResult{Views: 3, Status: RequestExpired, Gone: true}},
		{"open past its time expires now and is gone", RequestOpen, 1, 3, exp,
			ViewResult{Views: 1, Status: RequestExpired, Expired: ExpiryTime, Gone: true}},
		{"paid request is shown, not counted", RequestPaid, 1, 3, before, ViewResult{Views: 1, Status: RequestPaid}},
		{"paid request after its time is still shown", RequestPaid, 1, 3, exp.Add(time.Hour), ViewResult{Views: 1, Status: RequestPaid}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := View(tt.status, tt.views, tt.maxViews, exp, tt.now); got != tt.want {
				t.Errorf("View = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestChargeFee(t *testing.T) {
	t.Parallel()
	tests := []struct{ amount, want int64 }{{1, 1}, {999, 1}, {1000, 1}, {1001, 2}, {250_000, 250}}
	for _, tt := range tests {
		if got := ChargeFee(tt.amount); got != tt.want {
			t.Errorf("ChargeFee(%d) = %d, want %d", tt.amount, got, tt.want)
		}
		if got := ChargeFee(tt.amount); got > tt.amount {
			t.Errorf("ChargeFee(%d) = %d exceeds the amount", tt.amount, got)
		}
	}
}
