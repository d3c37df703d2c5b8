package mask

import (
	"testing"
	"time"

	"github.com/fintech/platform/schemas"
)

func TestDecide(t *testing.T) {
	t.Parallel()
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	active := MaskState{Kind: schemas.MaskKindRecurring, Status: schemas.MaskStatusActive,
		SpendLimitCents: 10_000, RemainingCents: 10_000, ExpiresAt: now.Add(time.Hour)}
	seen := History{MerchantSeen: true}
	req := ChargeRequest{AmountCents: 100, Merchant: "Shop", MerchantCategory: "books"}
	mask := func(f func(*MaskState)) MaskState { m := active; f(&m); return m }
	charge := func(f func(*ChargeRequest)) ChargeRequest { r := req; f(&r); return r }

	tests := []struct {
		name   string
		mask   MaskState
		hist   History
		req    ChargeRequest
		reason string // "" = authorized
		score  int
		flag   bool
	}{
		{"authorized", active, seen, req, "", 5, false},
		{"revoked", mask(func(m *MaskState) { m.Status = schemas.MaskStatusRevoked }), seen, req, schemas.DeclineMaskRevoked, 5, false},
		{"expires exactly now", mask(func(m *MaskState) { m.ExpiresAt = now }), seen, req, schemas.DeclineMaskExpired, 5, false},
		{"expired", mask(func(m *MaskState) { m.ExpiresAt = now.Add(-time.Second) }), seen, req, schemas.DeclineMaskExpired, 5, false},
		{"expires in a nanosecond", mask(func(m *MaskState) { m.ExpiresAt = now.Add(1) }), seen, req, "", 5, false},
		{"single-use, fresh", mask(func(m *MaskState) { m.Kind = schemas.MaskKindSingleUse }), History{}, req, "", 5, false},
		{"single-use, consumed", mask(func(m *MaskState) { m.Kind, m.Consumed = schemas.MaskKindSingleUse, true }), History{}, req,
			schemas.DeclineSingleUseConsumed, 5, false},
		{"merchant-locked, same merchant in other case", mask(func(m *MaskState) {
			m.Kind, m.LockedToMerchant = schemas.MaskKindMerchantLocked, "shop"
		}), History{}, req, "", 5, false},
		{"merchant-locked, other merchant", mask(func(m *MaskState) {
			m.Kind, m.LockedToMerchant = schemas.MaskKindMerchantLocked, "Other"
		}), History{}, req, schemas.DeclineMerchantLocked, 5, false},
		{"category-locked, same category", mask(func(m *MaskState) {
			m.Kind, m.LockedToCategory = schemas.MaskKindCategoryLocked, "Books"
		}), History{}, req, "", 5, false},
		{"category-locked, other category", mask(func(m *MaskState) {
			m.Kind, m.LockedToCategory = schemas.MaskKindCategoryLocked, "games"
		}), History{}, req, schemas.DeclineCategoryLocked, 5, false},
		{"category-locked, no category", mask(func(m *MaskState) {
			m.Kind, m.LockedToCategory = schemas.MaskKindCategoryLocked, "games"
		}), History{}, charge(func(r *ChargeRequest) { r.MerchantCategory = "" }), schemas.DeclineCategoryLocked, 5, false},
		{"amount exactly the remaining balance", mask(func(m *MaskState) { m.RemainingCents = 100 }), seen, req, "", 20, false},
		{"amount one cent over the remaining balance", mask(func(m *MaskState) { m.RemainingCents = 99 }), seen, req,
			schemas.DeclineLimitExceeded, 20, false},
		{"score 70 flags but authorizes", mask(func(m *MaskState) { m.RemainingCents = 100 }),
			History{MerchantSeen: true, RecentAuthorized: 3, RecentDecline: true}, req, "", 70, true},
		{"score 75 flags but authorizes", active, History{MerchantSeen: true, RecentAuthorized: 3},
			charge(func(r *ChargeRequest) { r.AmountCents = 9_000 }), "", 75, true},
		{"score 80 declines", active, History{MerchantSeen: true, RecentAuthorized: 3, RecentDecline: true},
			charge(func(r *ChargeRequest) { r.AmountCents = 5_000 }), schemas.DeclineRiskDeclined, 80, true},
		{"score 65 neither flags nor declines", mask(func(m *MaskState) { m.RemainingCents = 100 }),
			History{RecentAuthorized: 3}, req, "", 65, false},
		{"score 100 declines", active, History{RecentAuthorized: 3, RecentDecline: true},
			charge(func(r *ChargeRequest) { r.AmountCents = 10_000 }), schemas.DeclineRiskDeclined, 100, true},
		// Precedence: the first failing check is the reason.
		{"revoked before expired", mask(func(m *MaskState) {
			m.Status, m.ExpiresAt = schemas.MaskStatusRevoked, now.Add(-time.Hour)
		}), seen, req, schemas.DeclineMaskRevoked, 5, false},
		{"expired before consumed", mask(func(m *MaskState) {
			m.Kind, m.Consumed, m.ExpiresAt = schemas.MaskKindSingleUse, true, now
		}), seen, req, schemas.DeclineMaskExpired, 5, false},
		{"lock before limit", mask(func(m *MaskState) {
			m.Kind, m.LockedToMerchant, m.RemainingCents = schemas.MaskKindMerchantLocked, "Other", 0
		}), seen, req, schemas.DeclineMerchantLocked, 20, false},
		{"limit before risk, flagged", mask(func(m *MaskState) { m.RemainingCents = 0 }),
			History{MerchantSeen: true, RecentAuthorized: 3, RecentDecline: true},
			charge(func(r *ChargeRequest) { r.AmountCents = 5_000 }), schemas.DeclineLimitExceeded, 95, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := Decide(tt.mask, tt.hist, tt.req, now)
			if d.Authorized != (tt.reason == "") || d.Reason != tt.reason || d.Score != tt.score || d.Flag != tt.flag {
				t.Fatalf("Decide = authorized %v reason %q score %d flag %v; want reason %q score %d flag %v",
					d.Authorized, d.Reason, d.Score, d.Flag, tt.reason, tt.score, tt.flag)
			}
		})
	}
}
