// Package mask stores virtual payment masks and their charges. The gateway
// reads through Masks; the mask consumer locks, reads history and writes
// inside its batch transaction through Store.
//
// No real card number is stored anywhere: a mask's virtual PAN is the only
// card data the platform has.
package mask

import (
	"time"

	"github.com/fintech/platform/schemas"
)

// MaskRow is a row of masks.
type MaskRow struct {
	ID               string     `db:"id"`
	UserID           string     `db:"user_id"`
	Label            string     `db:"label"`
	Kind             string     `db:"kind"`
	LockedToMerchant string     `db:"locked_to_merchant"`
	LockedToCategory string     `db:"locked_to_category"`
	Currency         string     `db:"currency"`
	SpendLimitCents  int64      `db:"spend_limit_cents"`
	RemainingCents   int64      `db:"remaining_cents"`
	VirtualPan       string     `db:"virtual_pan"`
	Status           string     `db:"status"`
	Consumed         bool       `db:"consumed"`
	ExpiresAt        time.Time  `db:"expires_at"`
	CreatedAt        time.Time  `db:"created_at"`
	RevokedAt        *time.Time `db:"revoked_at"`
}

const maskColumns = `id, user_id, label, kind, locked_to_merchant, locked_to_category, currency,
spend_limit_cents, remaining_cents, virtual_pan, status, consumed, expires_at, created_at, revoked_at`

// View is the API shape of the mask at time now: an active mask past its
// expiry shows status expired.
func (m MaskRow) View(now time.Time) schemas.Mask {
	status := m.Status
	if status == schemas.MaskStatusActive && !now.Before(m.ExpiresAt) {
		status = schemas.MaskStatusExpired
	}
	return schemas.Mask{
		ID: m.ID, UserID: m.UserID, Label: m.Label, Kind: m.Kind,
		LockedToMerchant: m.LockedToMerchant, LockedToCategory: m.LockedToCategory,
		Currency: m.Currency, SpendLimitCents: m.SpendLimitCents, RemainingCents: m.RemainingCents,
		VirtualPan: m.VirtualPan, Status: status, ExpiresAt: m.ExpiresAt.UTC(), CreatedAt: m.CreatedAt.UTC(),
		RevokedAt: utc(m.RevokedAt),
	}
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// ChargeRow is a row of mask_charges.
type ChargeRow struct {
	ID               string               `db:"id"`
	MaskID           string               `db:"mask_id"`
	UserID           string               `db:"user_id"`
	PaymentRef       string               `db:"payment_ref"`
	AmountCents      int64                `db:"amount_cents"`
	Currency         string               `db:"currency"`
	Merchant         string               `db:"merchant"`
	MerchantCategory string               `db:"merchant_category"`
	MerchantUserID   string               `db:"merchant_user_id"`
	Status           string               `db:"status"`
	DeclineReason    string               `db:"decline_reason"`
	RiskScore        int                  `db:"risk_score"`
	RiskFactors      []schemas.RiskFactor `db:"risk_factors"`
	RemainingCents   int64                `db:"remaining_cents"`
	CreatedAt        time.Time            `db:"created_at"`
}

const chargeColumns = `id, mask_id, user_id, payment_ref, amount_cents, currency, merchant,
merchant_category, merchant_user_id, status, decline_reason, risk_score, risk_factors, remaining_cents, created_at`

// View is the API shape of the charge.
func (c ChargeRow) View() schemas.MaskChargeResult {
	factors := c.RiskFactors
	if factors == nil {
		factors = []schemas.RiskFactor{}
	}
	return schemas.MaskChargeResult{
		ID: c.ID, MaskID: c.MaskID, UserID: c.UserID, PaymentRef: c.PaymentRef,
		AmountCents: c.AmountCents, Currency: c.Currency, Merchant: c.Merchant,
		MerchantCategory: c.MerchantCategory, Status: c.Status, DeclineReason: c.DeclineReason,
		RiskScore: c.RiskScore, RiskFactors: factors, RemainingCents: c.RemainingCents,
		CreatedAt: c.CreatedAt.UTC(),
	}
}
