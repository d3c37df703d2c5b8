package fiat

import (
	"time"

	"github.com/jackc/pgx/v5"
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

const insertDonationsSQL = `
INSERT INTO charity_donations (id, campaign_id, donor_user_id, wallet_id, amount_kzt, anonymous, message,
    transaction_id, ledger_entry_id, created_at)
SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::bool[], $7::text[], $8::text[],
    $9::text[], $10::timestamptz[])`

// QueueInsertDonations queues donation rows.
func QueueInsertDonations(b *pgx.Batch, ds []Donation) {
	if len(ds) == 0 {
		return
	}
	b.Queue(insertDonationsSQL, col(ds, func(d *Donation) string { return d.ID }),
		col(ds, func(d *Donation) string { return d.CampaignID }), col(ds, func(d *Donation) string { return d.DonorUserID }),
		col(ds, func(d *Donation) string { return d.WalletID }), col(ds, func(d *Donation) int64 { return d.AmountKzt }),
		col(ds, func(d *Donation) bool { return d.Anonymous }), col(ds, func(d *Donation) string { return d.Message }),
		col(ds, func(d *Donation) string { return d.TransactionID }), col(ds, func(d *Donation) string { return d.LedgerEntryID }),
		col(ds, func(d *Donation) time.Time { return d.CreatedAt }))
}

// Campaign is a campaign's raised total and goal, locked by the batch that
// adds donations to it.
type Campaign struct {
	ID     string
	Raised int64
	Goal   int64
}

const lockCampaignsSQL = `SELECT id, raised_kzt, goal_kzt FROM charity_campaigns WHERE id = ANY($1) ORDER BY id FOR UPDATE`

func scanCampaign(row pgx.CollectableRow) (Campaign, error) {
	var c Campaign
	err := row.Scan(&c.ID, &c.Raised, &c.Goal)
	return c, err
}

// QueueLockCampaigns queues the lock of the campaigns among ids. The lock
// is what makes campaign.goal_reached fire exactly once: concurrent batches
// see one another's totals, never the same "before".
func QueueLockCampaigns(b *pgx.Batch, ids []string, into map[string]*Campaign) {
	lockByIDs(b, "campaigns", lockCampaignsSQL, ids, scanCampaign, func(c *Campaign) string { return c.ID }, into)
}

const writeCampaignsSQL = `
UPDATE charity_campaigns c SET raised_kzt = v.raised,
    goal_reached_at = CASE WHEN c.goal_reached_at IS NULL AND v.raised >= c.goal_kzt THEN $3 ELSE c.goal_reached_at END
FROM unnest($1::text[], $2::bigint[]) AS v(id, raised)
WHERE c.id = v.id`

// QueueWriteCampaigns queues the new raised totals of locked campaigns,
// stamping goal_reached_at on the first batch that reaches the goal.
func QueueWriteCampaigns(b *pgx.Batch, cs []*Campaign, now time.Time) {
	if len(cs) == 0 {
		return
	}
	b.Queue(writeCampaignsSQL, col(cs, func(c **Campaign) string { return (*c).ID }),
		col(cs, func(c **Campaign) int64 { return (*c).Raised }), now)
}
