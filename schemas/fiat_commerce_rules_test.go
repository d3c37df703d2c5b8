package schemas

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
		{"exactly at expiresAt is expired", 0, 100, exp, RequestExpiryTime},
		{"after expiresAt", 0, 100, exp.Add(time.Second), RequestExpiryTime},
		{"one view left", 99, 100, exp.Add(-time.Hour), ""},
		{"views reached max", 100, 100, exp.Add(-time.Hour), RequestExpiryViews},
		{"views over max", 101, 100, exp.Add(-time.Hour), RequestExpiryViews},
		{"time wins over views", 100, 100, exp, RequestExpiryTime},
		{"max views 1 unviewed", 0, 1, exp.Add(-time.Hour), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := RequestExpiryReason(tt.views, tt.maxViews, exp, tt.now); got != tt.want {
				t.Errorf("RequestExpiryReason(%d, %d, %v) = %q, want %q", tt.views, tt.maxViews, tt.now, got, tt.want)
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
		want            RequestViewResult
	}{
		{"first view counts", RequestStatusOpen, 0, 3, before, RequestViewResult{Views: 1, Status: RequestStatusOpen}},
		{"view before the last", RequestStatusOpen, 1, 3, before, RequestViewResult{Views: 2, Status: RequestStatusOpen}},
		{"view reaching max is served and expires", RequestStatusOpen, 2, 3, before,
			RequestViewResult{Views: 3, Status: RequestStatusExpired, Expired: RequestExpiryViews}},
		{"max views 1: the first view expires it", RequestStatusOpen, 0, 1, before,
			RequestViewResult{Views: 1, Status: RequestStatusExpired, Expired: RequestExpiryViews}},
		{"expired request is gone and not counted", RequestStatusExpired, 3, 3, before,
			RequestViewResult{Views: 3, Status: RequestStatusExpired, Gone: true}},
		{"open past its time expires now and is gone", RequestStatusOpen, 1, 3, exp,
			RequestViewResult{Views: 1, Status: RequestStatusExpired, Expired: RequestExpiryTime, Gone: true}},
		{"paid request is shown, not counted", RequestStatusPaid, 1, 3, before, RequestViewResult{Views: 1, Status: RequestStatusPaid}},
		{"paid request after its time is still shown", RequestStatusPaid, 1, 3, exp.Add(time.Hour), RequestViewResult{Views: 1, Status: RequestStatusPaid}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := RequestView(tt.status, tt.views, tt.maxViews, exp, tt.now); got != tt.want {
				t.Errorf("RequestView = %+v, want %+v", got, tt.want)
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
