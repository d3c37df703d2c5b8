package mask

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// HeldFlag is a mask-risk-flag that a spent abuse budget kept from the
// merchant's reputation: recorded for review, never dropped silently.
type HeldFlag struct {
	ChargeID, MaskOwner, MerchantUserID, ClientIP string
	RiskScore                                     int
	Reason                                        string // the spent budget's scope
	CreatedAt                                     time.Time
}

// HoldRiskFlag records a held flag in the charge's transaction.
func HoldRiskFlag(ctx context.Context, tx pgx.Tx, f HeldFlag) error {
	_, err := tx.Exec(ctx, `INSERT INTO mask_held_risk_flags
(charge_id, mask_owner, merchant_user_id, client_ip, risk_score, reason, created_at)
VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (charge_id) DO NOTHING`,
		f.ChargeID, f.MaskOwner, f.MerchantUserID, f.ClientIP, f.RiskScore, f.Reason, f.CreatedAt)
	if err != nil {
		return fmt.Errorf("hold risk flag of charge %s: %w", f.ChargeID, err)
	}
	return nil
}
