package mask

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/postgres"
)

// Masks serves the gateway's reads of masks and charges. Every read is
// scoped to the owner: users never see another user's masks.
type Masks struct {
	pool *pgxpool.Pool
}

// NewMasks builds the repository.
func NewMasks(pool *pgxpool.Pool) *Masks { return &Masks{pool: pool} }

const ownedSQL = `SELECT ` + maskColumns + ` FROM masks WHERE id = $1 AND user_id = $2`

// Owned returns the mask when it exists and belongs to userID; otherwise
// postgres.ErrNotFound (another user's mask is indistinguishable from none).
func (m *Masks) Owned(ctx context.Context, maskID, userID string) (MaskRow, error) {
	rows, err := m.pool.Query(ctx, ownedSQL, maskID, userID)
	if err != nil {
		return MaskRow{}, fmt.Errorf("find mask %s: %w", maskID, err)
	}
	row, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[MaskRow])
	if err != nil {
		return MaskRow{}, fmt.Errorf("find mask %s: %w", maskID, postgres.Translate(err))
	}
	return row, nil
}

const listActiveSQL = `SELECT ` + maskColumns + ` FROM masks
WHERE user_id = $1 AND status = 'active' AND NOT consumed AND expires_at > $2 AND ($3 = '' OR (created_at, id) < ($5, $3))
ORDER BY created_at DESC, id DESC LIMIT $4`

// ListActive returns the user's usable masks (active, unexpired, and for
// single-use masks not yet consumed), newest first by creation time then
// id, after the cursor position (zero for the first page).
func (m *Masks) ListActive(ctx context.Context, userID string, now time.Time, after schemas.Position, limit int) ([]MaskRow, error) {
	rows, err := m.pool.Query(ctx, listActiveSQL, userID, now, after.ID, limit, after.At)
	if err != nil {
		return nil, fmt.Errorf("list masks of %s: %w", userID, err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowToStructByName[MaskRow])
	if err != nil {
		return nil, fmt.Errorf("list masks of %s: %w", userID, err)
	}
	return out, nil
}

const listChargesSQL = `SELECT ` + chargeColumns + ` FROM mask_charges
WHERE user_id = $1 AND ($2 = '' OR mask_id = $2) AND ($3 = '' OR (created_at, id) < ($5, $3))
ORDER BY created_at DESC, id DESC LIMIT $4`

// ListCharges returns the user's charges, newest first by creation time
// then id, optionally of one mask, after the cursor position (zero for the
// first page).
func (m *Masks) ListCharges(ctx context.Context, userID, maskID string, after schemas.Position, limit int) ([]ChargeRow, error) {
	rows, err := m.pool.Query(ctx, listChargesSQL, userID, maskID, after.ID, limit, after.At)
	if err != nil {
		return nil, fmt.Errorf("list charges of %s: %w", userID, err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowToStructByName[ChargeRow])
	if err != nil {
		return nil, fmt.Errorf("list charges of %s: %w", userID, err)
	}
	return out, nil
}

// Stats is the roll-up of one user's masks and charges.
type Stats struct {
	ActiveMasks     int64
	Charges         int64
	Declined        int64
	TotalSpendCents int64
	SpendByCurrency map[string]int64
	MeanRiskScore   float64
}

const statsSQL = `
SELECT (SELECT count(*) FROM masks WHERE user_id = $1 AND status = 'active' AND NOT consumed AND expires_at > $2),
       count(*),
       count(*) FILTER (WHERE status = 'declined'),
       COALESCE(avg(risk_score), 0)::float8
FROM mask_charges WHERE user_id = $1`

const spendSQL = `
SELECT currency, sum(amount_cents)::bigint FROM mask_charges
WHERE user_id = $1 AND status = 'authorized' GROUP BY currency`

// Stats computes the user's roll-up at time now.
func (m *Masks) Stats(ctx context.Context, userID string, now time.Time) (Stats, error) {
	s := Stats{SpendByCurrency: map[string]int64{}}
	err := m.pool.QueryRow(ctx, statsSQL, userID, now).Scan(&s.ActiveMasks, &s.Charges, &s.Declined, &s.MeanRiskScore)
	if err != nil {
		return Stats{}, fmt.Errorf("mask stats of %s: %w", userID, err)
	}
	rows, err := m.pool.Query(ctx, spendSQL, userID)
	if err != nil {
		return Stats{}, fmt.Errorf("mask spend of %s: %w", userID, err)
	}
	var cur string
	var sum int64
	_, err = pgx.ForEachRow(rows, []any{&cur, &sum}, func() error {
		s.SpendByCurrency[cur] = sum
		s.TotalSpendCents += sum
		return nil
	})
	if err != nil {
		return Stats{}, fmt.Errorf("mask spend of %s: %w", userID, err)
	}
	return s, nil
}
