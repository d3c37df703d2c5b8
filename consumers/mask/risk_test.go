package mask

import (
	"reflect"
	"testing"

	"github.com/fintech/platform/schemas"
)

func TestScore(t *testing.T) {
	t.Parallel()
	const limit = 10_000
	base := RiskInput{AmountCents: 100, SpendLimitCents: limit, RemainingCents: limit}
	with := func(f func(*RiskInput)) RiskInput { in := base; f(&in); return in }
	tests := []struct {
		name    string
		in      RiskInput
		score   int
		factors []string
	}{
		{"base only", base, 5, []string{FactorBase}},
		{"amount exactly 50% of the limit", with(func(in *RiskInput) { in.AmountCents = 5_000 }), 30, []string{FactorBase, FactorHalfLimit}},
		{"amount one cent under 50% of the limit", with(func(in *RiskInput) { in.AmountCents = 4_999 }), 5, []string{FactorBase}},
		{"odd limit: 50% is 2.5, amount 3 counts", with(func(in *RiskInput) { in.SpendLimitCents, in.RemainingCents, in.AmountCents = 5, 5, 3 }),
			30, []string{FactorBase, FactorHalfLimit}},
		{"odd limit: amount 2 is under 50%", with(func(in *RiskInput) { in.SpendLimitCents, in.RemainingCents, in.AmountCents = 5, 100, 2 }),
			5, []string{FactorBase}},
		{"amount exactly 90% of the remaining balance", with(func(in *RiskInput) { in.RemainingCents, in.AmountCents = 1_000, 900 }),
			20, []string{FactorBase, FactorNearRemaining}},
		{"amount one cent under 90% of the remaining balance", with(func(in *RiskInput) { in.RemainingCents, in.AmountCents = 1_000, 899 }),
			5, []string{FactorBase}},
		{"amount above the remaining balance", with(func(in *RiskInput) { in.RemainingCents, in.AmountCents = 50, 100 }),
			20, []string{FactorBase, FactorNearRemaining}},
		{"nothing remaining", with(func(in *RiskInput) { in.RemainingCents = 0 }), 20, []string{FactorBase, FactorNearRemaining}},
		{"two recent authorized charges", with(func(in *RiskInput) { in.RecentAuthorized = 2 }), 5, []string{FactorBase}},
		{"three recent authorized charges", with(func(in *RiskInput) { in.RecentAuthorized = 3 }), 35, []string{FactorBase, FactorVelocity}},
		{"many recent authorized charges", with(func(in *RiskInput) { in.RecentAuthorized = 40 }), 35, []string{FactorBase, FactorVelocity}},
		{"recurring mask, new merchant", with(func(in *RiskInput) { in.Recurring = true }), 20, []string{FactorBase, FactorNewMerchant}},
		{"recurring mask, known merchant", with(func(in *RiskInput) { in.Recurring, in.MerchantSeen = true, true }), 5, []string{FactorBase}},
		{"other mask, new merchant", with(func(in *RiskInput) { in.MerchantSeen = false }), 5, []string{FactorBase}},
		{"recent decline", with(func(in *RiskInput) { in.RecentDecline = true }), 25, []string{FactorBase, FactorRecentDecline}},
		{"65: velocity, near remaining, new merchant", with(func(in *RiskInput) {
			in.RecentAuthorized, in.RemainingCents, in.Recurring = 3, 100, true
		}), 65, []string{FactorBase, FactorNearRemaining, FactorVelocity, FactorNewMerchant}},
		{"exactly 70: near remaining, velocity, recent decline", with(func(in *RiskInput) {
			in.RemainingCents, in.RecentAuthorized, in.RecentDecline = 100, 3, true
		}), 70, []string{FactorBase, FactorNearRemaining, FactorVelocity, FactorRecentDecline}},
		{"75: half limit, near remaining, velocity", with(func(in *RiskInput) {
			in.AmountCents, in.RecentAuthorized = 9_000, 3
		}), 75, []string{FactorBase, FactorHalfLimit, FactorNearRemaining, FactorVelocity}},
		{"exactly 80: half limit, velocity, recent decline", with(func(in *RiskInput) {
			in.AmountCents, in.RecentAuthorized, in.RecentDecline = 5_000, 3, true
		}), 80, []string{FactorBase, FactorHalfLimit, FactorVelocity, FactorRecentDecline}},
		{"every factor is capped at 100", with(func(in *RiskInput) {
			in.AmountCents, in.RecentAuthorized, in.Recurring, in.RecentDecline = 10_000, 5, true, true
		}), 100, []string{FactorBase, FactorHalfLimit, FactorNearRemaining, FactorVelocity, FactorNewMerchant, FactorRecentDecline}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			score, factors := Score(tt.in)
			var names []string
			sum := 0
			for _, f := range factors {
				names = append(names, f.Factor)
				sum += f.Points
			}
			if score != tt.score || !reflect.DeepEqual(names, tt.factors) {
				t.Fatalf("Score = %d %v, want %d %v", score, names, tt.score, tt.factors)
			}
			if min(sum, MaxScore) != score {
				t.Fatalf("factors sum to %d but the score is %d", sum, score)
			}
		})
	}
}

func TestScorePoints(t *testing.T) {
	t.Parallel()
	_, factors := Score(RiskInput{AmountCents: 10, SpendLimitCents: 10, RemainingCents: 10,
		RecentAuthorized: 3, Recurring: true, RecentDecline: true})
	want := []schemas.RiskFactor{
		{Factor: FactorBase, Points: 5}, {Factor: FactorHalfLimit, Points: 25}, {Factor: FactorNearRemaining, Points: 15},
		{Factor: FactorVelocity, Points: 30}, {Factor: FactorNewMerchant, Points: 15}, {Factor: FactorRecentDecline, Points: 20},
	}
	if !reflect.DeepEqual(factors, want) {
		t.Fatalf("factors = %v, want %v", factors, want)
	}
}
