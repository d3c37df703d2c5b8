package mask

import "github.com/fintech/platform/schemas"

// Risk thresholds (spec: Limits).
const (
	// DeclineScore and above is a hard decline (risk_declined).
	DeclineScore = 80
	// FlagScore and above flags the merchant (reputation mask-risk-flag).
	FlagScore = 70
	// MaxScore caps the sum of the factors.
	MaxScore = 100
)

// Risk factor names and points (decisions.md, Mask). The charge lists the
// factors that applied, so every score is explainable.
const (
	FactorBase          = "base"
	FactorHalfLimit     = "amount_half_of_spend_limit"
	FactorNearRemaining = "amount_near_remaining_balance"
	FactorVelocity      = "velocity"
	FactorNewMerchant   = "new_merchant"
	FactorRecentDecline = "recent_decline"

	pointsBase          = 5
	pointsHalfLimit     = 25
	pointsNearRemaining = 15
	pointsVelocity      = 30
	pointsNewMerchant   = 15
	pointsRecentDecline = 20

	// velocityCharges authorized charges in the velocity window add the
	// velocity factor.
	velocityCharges = 3
)

// RiskInput is what the score of one charge depends on: the charge, the
// mask before the charge, and the mask's recent history.
type RiskInput struct {
	AmountCents     int64
	SpendLimitCents int64
	RemainingCents  int64
	// RecentAuthorized counts authorized charges on the mask in the last 60 s.
	RecentAuthorized int
	// Recurring is true for a recurring mask; only those score new merchants.
	Recurring bool
	// MerchantSeen is true when the mask authorized a charge of this merchant before.
	MerchantSeen bool
	// RecentDecline is true when the mask declined a charge in the last 10 minutes.
	RecentDecline bool
}

// Score computes the risk score 0..100 of a charge and the factors that make
// it up. It is pure: the same input always gives the same answer.
func Score(in RiskInput) (int, []schemas.RiskFactor) {
	factors := []schemas.RiskFactor{{Factor: FactorBase, Points: pointsBase}}
	// amount >= 50% of the spend limit, in integers: 2*amount >= limit.
	if 2*in.AmountCents >= in.SpendLimitCents {
		factors = append(factors, schemas.RiskFactor{Factor: FactorHalfLimit, Points: pointsHalfLimit})
	}
	// amount >= 90% of the remaining balance: 10*amount >= 9*remaining.
	if 10*in.AmountCents >= 9*in.RemainingCents {
		factors = append(factors, schemas.RiskFactor{Factor: FactorNearRemaining, Points: pointsNearRemaining})
	}
	if in.RecentAuthorized >= velocityCharges {
		factors = append(factors, schemas.RiskFactor{Factor: FactorVelocity, Points: pointsVelocity})
	}
	if in.Recurring && !in.MerchantSeen {
		factors = append(factors, schemas.RiskFactor{Factor: FactorNewMerchant, Points: pointsNewMerchant})
	}
	if in.RecentDecline {
		factors = append(factors, schemas.RiskFactor{Factor: FactorRecentDecline, Points: pointsRecentDecline})
	}
	score := 0
	for _, f := range factors {
		score += f.Points
	}
	return min(score, MaxScore), factors
}
