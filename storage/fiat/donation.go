package fiat

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fintech/platform/storage/postgres"
)

// KindCampaign is the kind of a campaign's platform-held wallet.
const KindCampaign = "campaign"

// Donation is a charity_donations row, inserted by the fiat consumer in the
// batch that moved its money.
type Donation struct {
	ID            string
	CampaignID    string
	DonorUserID   string
	WalletID      string
	AmountKzt     int64
	Anonymous     bool
	Message       string
	TransactionID string
	LedgerEntryID string
	CreatedAt     time.Time
}

// InsertDonations appends donation rows with COPY.
func InsertDonations(ctx context.Context, q postgres.Querier, ds []Donation) error {
	if len(ds) == 0 {
		return nil
	}
	_, err := q.CopyFrom(ctx, pgx.Identifier{"charity_donations"},
		[]string{"id", "campaign_id", "donor_user_id", "wallet_id", "amount_kzt", "anonymous", "message",
			"transaction_id", "ledger_entry_id", "created_at"},
		pgx.CopyFromSlice(len(ds), func(i int) ([]any, error) {
			d := ds[i]
			return []any{d.ID, d.CampaignID, d.DonorUserID, d.WalletID, d.AmountKzt, d.Anonymous, d.Message,
				d.TransactionID, d.LedgerEntryID, d.CreatedAt}, nil
		}))
	if err != nil {
		return fmt.Errorf("insert %d donations: %w", len(ds), postgres.Translate(err))
	}
	return nil
}

// CampaignTotal is a campaign's raised total before and after a batch.
type CampaignTotal struct {
	Before, After, Goal int64
}

const addCampaignTotalSQL = `
UPDATE charity_campaigns
SET raised_kzt = raised_kzt + $2,
    goal_reached_at = CASE WHEN goal_reached_at IS NULL AND raised_kzt + $2 >= goal_kzt THEN $3 ELSE goal_reached_at END
WHERE id = $1
RETURNING raised_kzt, goal_kzt`

// AddCampaignTotals adds each campaign's donations of the batch to its
// raised total with one additive update per campaign, in id order (so
// concurrent appliers take the row locks in the same order), and returns the
// totals before and after. The row lock is held until the commit, so the
// "before" values of concurrent batches never overlap: exactly one batch sees
// a campaign cross its goal. Every campaign must exist, or the transaction
// fails: a donation is never dropped.
func AddCampaignTotals(ctx context.Context, q postgres.Querier, deltas map[string]int64, now time.Time) (map[string]CampaignTotal, error) {
	ids := make([]string, 0, len(deltas))
	for id := range deltas {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	out := make(map[string]CampaignTotal, len(ids))
	for _, id := range ids {
		var after, goal int64
		if err := q.QueryRow(ctx, addCampaignTotalSQL, id, deltas[id], now).Scan(&after, &goal); err != nil {
			return nil, fmt.Errorf("add donations to campaign %s: %w", id, err)
		}
		out[id] = CampaignTotal{Before: after - deltas[id], After: after, Goal: goal}
	}
	return out, nil
}
