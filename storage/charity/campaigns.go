// Package charity stores the charity campaigns. Campaign creation and
// approval are written here directly by the gateway (low rate, no balances),
// each with its outbox rows in the same transaction. Donations and the
// campaign totals are written only by the fiat consumer (storage/fiat,
// donation.go); this package reads them.
package charity

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/pipeline"
	"github.com/fintech/platform/storage/postgres"
)

// ErrInvalidState means the campaign is not in a state that allows the change.
var ErrInvalidState = errors.New("invalid state")

// Campaign is a charity_campaigns row.
type Campaign struct {
	ID             string
	ProposerUserID string
	Title          string
	Description    string
	Category       string
	GoalKzt        int64
	Media          []string
	EndsAt         *time.Time
	Status         string
	Pinned         bool
	Featured       bool
	WalletID       string
	RaisedKzt      int64
	GoalReachedAt  *time.Time
	CreatedAt      time.Time
	ApprovedAt     *time.Time
	// DonorCount counts distinct donors, anonymous ones included. It is
	// filled by the reads that say so.
	DonorCount int64
}

// Donor is one of a campaign's recent non-anonymous donations.
type Donor struct {
	Name      string
	AmountKzt int64
	DonatedAt time.Time
}

// Filter selects campaigns of the public list.
type Filter struct {
	Category string
	// Status is "" (every approved campaign), "active" (approved and not
	// past endsAt) or "ended" (approved and past endsAt).
	Status string
	Now    time.Time
}

// Cursor is the position of the last campaign of a page.
type Cursor struct {
	Pinned bool
	ID     string
}

// Campaigns is the campaign repository.
type Campaigns struct {
	pool *pgxpool.Pool
}

// NewCampaigns builds the repository.
func NewCampaigns(pool *pgxpool.Pool) *Campaigns { return &Campaigns{pool: pool} }

const insertWalletSQL = `
INSERT INTO fiat_wallets (id, user_id, currency, balance, status, kind, created_at)
VALUES ($1, $2, 'KZT', 0, 'active', 'campaign', $3)`

const insertCampaignSQL = `
INSERT INTO charity_campaigns (id, proposer_user_id, title, description, category, goal_kzt, media, ends_at,
    status, wallet_id, created_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'pending', $9, $10)`

// Create inserts a pending campaign with its platform-held KZT wallet and
// queues events, all in one transaction.
func (s *Campaigns) Create(ctx context.Context, c Campaign, events []pipeline.OutboxRow) error {
	media, err := json.Marshal(nonNil(c.Media))
	if err != nil {
		return fmt.Errorf("encode media: %w", err)
	}
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, insertWalletSQL, c.WalletID, "campaign:"+c.ID, c.CreatedAt); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, insertCampaignSQL, c.ID, c.ProposerUserID, c.Title, c.Description, c.Category,
			c.GoalKzt, media, c.EndsAt, c.WalletID, c.CreatedAt); err != nil {
			return err
		}
		return pipeline.InsertOutbox(ctx, tx, events)
	})
	if err != nil {
		return fmt.Errorf("create campaign %s: %w", c.ID, postgres.Translate(err))
	}
	return nil
}

const campaignCols = `id, proposer_user_id, title, description, category, goal_kzt, media, ends_at, status, pinned,
    featured, wallet_id, raised_kzt, goal_reached_at, created_at, approved_at`

func scanCampaign(row pgx.CollectableRow) (Campaign, error) {
	var c Campaign
	var media []byte
	err := row.Scan(&c.ID, &c.ProposerUserID, &c.Title, &c.Description, &c.Category, &c.GoalKzt, &media, &c.EndsAt,
		&c.Status, &c.Pinned, &c.Featured, &c.WalletID, &c.RaisedKzt, &c.GoalReachedAt, &c.CreatedAt, &c.ApprovedAt)
	if err != nil {
		return c, err
	}
	if err := json.Unmarshal(media, &c.Media); err != nil {
		return c, fmt.Errorf("decode media of %s: %w", c.ID, err)
	}
	c.Media = nonNil(c.Media)
	return c, nil
}

func scanCampaignDonors(row pgx.CollectableRow) (Campaign, error) {
	var c Campaign
	var media []byte
	err := row.Scan(&c.ID, &c.ProposerUserID, &c.Title, &c.Description, &c.Category, &c.GoalKzt, &media, &c.EndsAt,
		&c.Status, &c.Pinned, &c.Featured, &c.WalletID, &c.RaisedKzt, &c.GoalReachedAt, &c.CreatedAt, &c.ApprovedAt,
		&c.DonorCount)
	if err != nil {
		return c, err
	}
	if err := json.Unmarshal(media, &c.Media); err != nil {
		return c, fmt.Errorf("decode media of %s: %w", c.ID, err)
	}
	c.Media = nonNil(c.Media)
	return c, nil
}

const lockCampaignSQL = `SELECT ` + campaignCols + ` FROM charity_campaigns WHERE id = $1 FOR UPDATE`

const approveSQL = `
UPDATE charity_campaigns SET status = 'active', pinned = $2, featured = $3, approved_at = $4 WHERE id = $1`

// Approve moves a pending campaign to active with the pin and feature
// flags and queues the events events builds from the approved campaign, in
// one transaction. An unknown campaign is postgres.ErrNotFound; one that is
// not pending is ErrInvalidState.
func (s *Campaigns) Approve(ctx context.Context, id string, pin, feature bool, now time.Time,
	events func(Campaign) ([]pipeline.OutboxRow, error)) (Campaign, error) {
	var out Campaign
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, lockCampaignSQL, id)
		if err != nil {
			return err
		}
		c, err := pgx.CollectExactlyOneRow(rows, scanCampaign)
		if err != nil {
			return err
		}
		if c.Status != schemas.CampaignPending {
			return ErrInvalidState
		}
		if _, err := tx.Exec(ctx, approveSQL, id, pin, feature, now); err != nil {
			return err
		}
		c.Status, c.Pinned, c.Featured, c.ApprovedAt = schemas.CampaignActive, pin, feature, &now
		ev, err := events(c)
		if err != nil {
			return err
		}
		out = c
		return pipeline.InsertOutbox(ctx, tx, ev)
	})
	if err != nil {
		return Campaign{}, fmt.Errorf("approve campaign %s: %w", id, postgres.Translate(err))
	}
	return out, nil
}

const donorCountCol = `, (SELECT count(DISTINCT d.donor_user_id) FROM charity_donations d WHERE d.campaign_id = c.id)`

// Get returns a campaign without its donor count (a primary-key read, as
// every donation needs), or postgres.ErrNotFound.
func (s *Campaigns) Get(ctx context.Context, id string) (Campaign, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+campaignCols+` FROM charity_campaigns c WHERE c.id = $1`, id)
	if err != nil {
		return Campaign{}, fmt.Errorf("read campaign %s: %w", id, err)
	}
	c, err := pgx.CollectExactlyOneRow(rows, scanCampaign)
	if err != nil {
		return Campaign{}, fmt.Errorf("read campaign %s: %w", id, postgres.Translate(err))
	}
	return c, nil
}

// DonorCount counts a campaign's distinct donors, anonymous ones included.
func (s *Campaigns) DonorCount(ctx context.Context, campaignID string) (int64, error) {
	var n int64
	err := s.pool.QueryRow(ctx, `SELECT count(DISTINCT donor_user_id) FROM charity_donations WHERE campaign_id = $1`,
		campaignID).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count donors of %s: %w", campaignID, err)
	}
	return n, nil
}

// DistinctDonors counts the distinct donors of every campaign, anonymous
// ones included. It is read from Postgres, not from the analytics copy:
// ClickHouse does not know who gave anonymously, so it cannot tell one
// anonymous donor giving twice from two.
func (s *Campaigns) DistinctDonors(ctx context.Context) (int64, error) {
	var n int64
	if err := s.pool.QueryRow(ctx, `SELECT count(DISTINCT donor_user_id) FROM charity_donations`).Scan(&n); err != nil {
		return 0, fmt.Errorf("count donors: %w", err)
	}
	return n, nil
}

const recentDonorsSQL = `
SELECT coalesce(u.name, ''), d.amount_kzt, d.created_at
FROM charity_donations d LEFT JOIN users u ON u.id = d.donor_user_id
WHERE d.campaign_id = $1 AND NOT d.anonymous
ORDER BY d.created_at DESC, d.id DESC
LIMIT $2`

// RecentDonors returns the last n non-anonymous donations of a campaign,
// newest first, with the donor's registered name.
func (s *Campaigns) RecentDonors(ctx context.Context, campaignID string, n int) ([]Donor, error) {
	rows, err := s.pool.Query(ctx, recentDonorsSQL, campaignID, n)
	if err != nil {
		return nil, fmt.Errorf("recent donors of %s: %w", campaignID, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Donor, error) {
		var d Donor
		err := r.Scan(&d.Name, &d.AmountKzt, &d.DonatedAt)
		return d, err
	})
	if err != nil {
		return nil, fmt.Errorf("recent donors of %s: %w", campaignID, err)
	}
	return out, nil
}

// where builds the filter of the public list ($1 category or ”, $2 status
// or ”, $3 now).
const listWhere = `
WHERE c.status = 'active'
  AND ($1 = '' OR c.category = $1)
  AND ($2 = '' OR ($2 = 'active' AND (c.ends_at IS NULL OR c.ends_at > $3))
               OR ($2 = 'ended' AND c.ends_at IS NOT NULL AND c.ends_at <= $3))`

const listSQL = `SELECT ` + campaignCols + donorCountCol + ` FROM charity_campaigns c` + listWhere + `
  AND ($4 = '' OR (CASE WHEN c.pinned THEN 1 ELSE 0 END, c.id) < ($5::int, $4))
ORDER BY c.pinned DESC, c.id DESC
LIMIT $6`

// List returns a page of approved campaigns, pinned first, then newest
// first, after the cursor (nil for the first page), and the number of
// campaigns matching the filter.
func (s *Campaigns) List(ctx context.Context, f Filter, after *Cursor, limit int) ([]Campaign, int64, error) {
	afterID, afterPinned := "", 0
	if after != nil {
		afterID = after.ID
		if after.Pinned {
			afterPinned = 1
		}
	}
	rows, err := s.pool.Query(ctx, listSQL, f.Category, f.Status, f.Now, afterID, afterPinned, limit)
	if err != nil {
		return nil, 0, fmt.Errorf("list campaigns: %w", err)
	}
	out, err := pgx.CollectRows(rows, scanCampaignDonors)
	if err != nil {
		return nil, 0, fmt.Errorf("list campaigns: %w", err)
	}
	var total int64
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM charity_campaigns c`+listWhere, f.Category, f.Status, f.Now).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count campaigns: %w", err)
	}
	return out, total, nil
}

// ActiveCount counts the approved campaigns not past their endsAt.
func (s *Campaigns) ActiveCount(ctx context.Context, now time.Time) (int64, error) {
	var n int64
	err := s.pool.QueryRow(ctx, `SELECT count(*) FROM charity_campaigns
WHERE status = 'active' AND (ends_at IS NULL OR ends_at > $1)`, now).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count active campaigns: %w", err)
	}
	return n, nil
}

// WalletOwner returns the owner and kind of a fiat wallet, or
// postgres.ErrNotFound.
func (s *Campaigns) WalletOwner(ctx context.Context, walletID string) (userID, kind string, err error) {
	err = s.pool.QueryRow(ctx, `SELECT user_id, kind FROM fiat_wallets WHERE id = $1`, walletID).Scan(&userID, &kind)
	if err != nil {
		return "", "", fmt.Errorf("read wallet %s: %w", walletID, postgres.Translate(err))
	}
	return userID, kind, nil
}

// Ping checks the database.
func (s *Campaigns) Ping(ctx context.Context) error { return s.pool.Ping(ctx) }

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
