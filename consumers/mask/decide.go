package mask

import (
	"strings"
	"time"

	"github.com/fintech/platform/schemas"
)

// MaskState is the part of a mask that a charge decision reads.
type MaskState struct {
	Kind             string
	Status           string
	LockedToMerchant string
	LockedToCategory string
	SpendLimitCents  int64
	RemainingCents   int64
	// Consumed is true once a single-use mask authorized its charge.
	Consumed  bool
	ExpiresAt time.Time
}

// History is the mask's recent activity as seen by the charge being decided.
type History struct {
	RecentAuthorized int  // authorized charges in the last 60 s
	RecentDecline    bool // a declined charge in the last 10 minutes
	MerchantSeen     bool // an authorized charge of this merchant before
}

// ChargeRequest is the charge being decided.
type ChargeRequest struct {
	AmountCents      int64
	Merchant         string
	MerchantCategory string
}

// Decision is the outcome of one charge: authorized, or declined with a
// reason; with the risk score and its factors either way.
type Decision struct {
	Authorized bool
	Reason     string // decline reason, empty when authorized
	Score      int
	Factors    []schemas.RiskFactor
	// Flag is true when the score reaches FlagScore: the merchant gets a
	// mask-risk-flag reputation event.
	Flag bool
}

// Decide decides a charge. It is pure. The checks run in this order and
// the first that fails is the decline reason: revoked, expired, single-use
// consumed, merchant lock, category lock, spend limit, risk. The risk score
// is computed for every charge, declined ones included, so that a flagged
// merchant is flagged whatever else is wrong with the charge.
func Decide(m MaskState, h History, req ChargeRequest, now time.Time) Decision {
	score, factors := Score(RiskInput{
		AmountCents:      req.AmountCents,
		SpendLimitCents:  m.SpendLimitCents,
		RemainingCents:   m.RemainingCents,
		RecentAuthorized: h.RecentAuthorized,
		Recurring:        m.Kind == schemas.MaskKindRecurring,
		MerchantSeen:     h.MerchantSeen,
		RecentDecline:    h.RecentDecline,
	})
	d := Decision{Score: score, Factors: factors, Flag: score >= FlagScore}
	switch {
	case m.Status == schemas.MaskStatusRevoked:
		d.Reason = schemas.DeclineMaskRevoked
	case !now.Before(m.ExpiresAt):
		d.Reason = schemas.DeclineMaskExpired
	case m.Kind == schemas.MaskKindSingleUse && m.Consumed:
		d.Reason = schemas.DeclineSingleUseConsumed
	case m.Kind == schemas.MaskKindMerchantLocked && !sameName(req.Merchant, m.LockedToMerchant):
		d.Reason = schemas.DeclineMerchantLocked
	case m.Kind == schemas.MaskKindCategoryLocked && !sameName(req.MerchantCategory, m.LockedToCategory):
		d.Reason = schemas.DeclineCategoryLocked
	case req.AmountCents > m.RemainingCents:
		d.Reason = schemas.DeclineLimitExceeded
	case score >= DeclineScore:
		d.Reason = schemas.DeclineRiskDeclined
	default:
		d.Authorized = true
	}
	return d
}

// sameName compares merchant names and categories the way a person would:
// ignoring case and surrounding blanks.
func sameName(a, b string) bool {
	return strings.EqualFold(strings.TrimSpace(a), strings.TrimSpace(b))
}
