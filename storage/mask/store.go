package mask

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fintech/platform/storage/postgres"
)

// Store is the mask consumer's access to Postgres inside its batch
// transaction. It holds no state: every method works on the caller's tx.
type Store struct{}

// NewStore builds the store.
func NewStore() *Store { return &Store{} }

const lockMasksSQL = `SELECT ` + maskColumns + ` FROM masks WHERE id = ANY($1) ORDER BY id FOR UPDATE`

// LockMasks reads the masks among ids and locks their rows until tx ends
// (in id order, so two consumers never deadlock). Unknown ids are absent
// from the result.
func (s *Store) LockMasks(ctx context.Context, tx pgx.Tx, ids []string) (map[string]MaskRow, error) {
	out := make(map[string]MaskRow, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := tx.Query(ctx, lockMasksSQL, ids)
	if err != nil {
		return nil, fmt.Errorf("lock %d masks: %w", len(ids), err)
	}
	list, err := pgx.CollectRows(rows, pgx.RowToStructByName[MaskRow])
	if err != nil {
		return nil, fmt.Errorf("lock %d masks: %w", len(ids), err)
	}
	for _, m := range list {
		out[m.ID] = m
	}
	return out, nil
}

// Ref names a charge by its mask and the client's payment reference.
type Ref struct{ MaskID, PaymentRef string }

// MerchantKey names a (mask, merchant) pair.
type MerchantKey struct{ MaskID, Merchant string }

// HistoryRequest asks for the recent activity the risk score reads.
type HistoryRequest struct {
	MaskIDs []string
	// VelocitySince and DeclineSince start the velocity and recent-decline windows.
	VelocitySince, DeclineSince time.Time
	// Merchants are the (mask, merchant) pairs to check for earlier
	// authorized charges.
	Merchants []MerchantKey
	// Refs are the payment references to look up earlier charges of.
	Refs []Ref
	// MerchantUsers are the merchantUserIds named by the batch's charges.
	MerchantUsers []string
}

// History is the recent activity of a batch's masks.
type History struct {
	// RecentAuthorized counts authorized charges since VelocitySince per
	// mask, capped at 3 (the velocity factor needs no more).
	RecentAuthorized map[string]int
	// LastDecline is the newest decline since DeclineSince per mask.
	LastDecline map[string]time.Time
	// Seen holds the pairs whose merchant was authorized on the mask before.
	Seen map[MerchantKey]bool
	// Existing holds the charges already decided for a Ref.
	Existing map[Ref]ChargeRow
	// ActiveMerchants holds the MerchantUsers that hold an active merchant
	// key: only they can be flagged by a risky charge.
	ActiveMerchants map[string]bool
}

const activeMerchantsSQL = `SELECT DISTINCT user_id FROM fiat_merchant_keys WHERE user_id = ANY($1) AND status = 'active'`

const recentSQL = `
SELECT m.id,
  (SELECT count(*) FROM (SELECT 1 FROM mask_charges c
      WHERE c.mask_id = m.id AND c.status = 'authorized' AND c.created_at > $2 LIMIT 3) v)::int,
  (SELECT max(c.created_at) FROM mask_charges c
      WHERE c.mask_id = m.id AND c.status = 'declined' AND c.created_at > $3)
FROM unnest($1::text[]) AS m(id)`

const seenSQL = `
SELECT p.mask_id, p.merchant FROM unnest($1::text[], $2::text[]) AS p(mask_id, merchant)
WHERE EXISTS (SELECT 1 FROM mask_charges c
  WHERE c.mask_id = p.mask_id AND c.merchant = p.merchant AND c.status = 'authorized')`

const existingSQL = `
SELECT ` + chargeColumns + ` FROM mask_charges
WHERE (mask_id, payment_ref) IN (SELECT * FROM unnest($1::text[], $2::text[]))`

// History reads the recent activity of the requested masks, merchants and
// payment references.
func (s *Store) History(ctx context.Context, tx pgx.Tx, req HistoryRequest) (History, error) {
	h := History{RecentAuthorized: map[string]int{}, LastDecline: map[string]time.Time{},
		Seen: map[MerchantKey]bool{}, Existing: map[Ref]ChargeRow{}}
	if len(req.MaskIDs) > 0 {
		rows, err := tx.Query(ctx, recentSQL, req.MaskIDs, req.VelocitySince, req.DeclineSince)
		if err != nil {
			return History{}, fmt.Errorf("read recent charges: %w", err)
		}
		var id string
		var n int
		var last *time.Time
		_, err = pgx.ForEachRow(rows, []any{&id, &n, &last}, func() error {
			h.RecentAuthorized[id] = n
			if last != nil {
				h.LastDecline[id] = *last
			}
			return nil
		})
		if err != nil {
			return History{}, fmt.Errorf("read recent charges: %w", err)
		}
	}
	if len(req.Merchants) > 0 {
		masks, merchants := make([]string, len(req.Merchants)), make([]string, len(req.Merchants))
		for i, k := range req.Merchants {
			masks[i], merchants[i] = k.MaskID, k.Merchant
		}
		rows, err := tx.Query(ctx, seenSQL, masks, merchants)
		if err != nil {
			return History{}, fmt.Errorf("read seen merchants: %w", err)
		}
		var k MerchantKey
		_, err = pgx.ForEachRow(rows, []any{&k.MaskID, &k.Merchant}, func() error {
			h.Seen[k] = true
			return nil
		})
		if err != nil {
			return History{}, fmt.Errorf("read seen merchants: %w", err)
		}
	}
	if len(req.Refs) > 0 {
		masks, refs := make([]string, len(req.Refs)), make([]string, len(req.Refs))
		for i, r := range req.Refs {
			masks[i], refs[i] = r.MaskID, r.PaymentRef
		}
		rows, err := tx.Query(ctx, existingSQL, masks, refs)
		if err != nil {
			return History{}, fmt.Errorf("read earlier charges: %w", err)
		}
		list, err := pgx.CollectRows(rows, pgx.RowToStructByName[ChargeRow])
		if err != nil {
			return History{}, fmt.Errorf("read earlier charges: %w", err)
		}
		for _, c := range list {
			h.Existing[Ref{c.MaskID, c.PaymentRef}] = c
		}
	}
	if len(req.MerchantUsers) > 0 {
		active, err := postgres.StringSet(ctx, tx, activeMerchantsSQL, req.MerchantUsers)
		if err != nil {
			return History{}, fmt.Errorf("read active merchants: %w", err)
		}
		h.ActiveMerchants = active
	}
	return h, nil
}

// Changes is what one batch writes: new masks, changed masks, new charges.
type Changes struct {
	NewMasks []MaskRow
	// Updated masks carry their new remaining balance, status, consumed flag
	// and revocation time; the other fields are not written.
	Updated []MaskRow
	Charges []ChargeRow
}

const updateMasksSQL = `
UPDATE masks m SET remaining_cents = u.remaining, status = u.status, consumed = u.consumed, revoked_at = u.revoked_at
FROM unnest($1::text[], $2::bigint[], $3::text[], $4::bool[], $5::timestamptz[]) AS u(id, remaining, status, consumed, revoked_at)
WHERE m.id = u.id`

// Save writes a batch's changes: one COPY for the new masks, one UPDATE for
// all changed masks (each hot mask is written once per batch, not once per
// charge), one COPY for the charges. A virtual PAN or (mask, paymentRef)
// that exists already fails with a unique violation, which the pipeline
// retries.
func (s *Store) Save(ctx context.Context, tx pgx.Tx, ch Changes) error {
	if len(ch.NewMasks) > 0 {
		_, err := tx.CopyFrom(ctx, pgx.Identifier{"masks"},
			[]string{"id", "user_id", "label", "kind", "locked_to_merchant", "locked_to_category", "currency",
				"spend_limit_cents", "remaining_cents", "virtual_pan", "status", "consumed", "expires_at", "created_at", "revoked_at"},
			pgx.CopyFromSlice(len(ch.NewMasks), func(i int) ([]any, error) {
				m := ch.NewMasks[i]
				return []any{m.ID, m.UserID, m.Label, m.Kind, m.LockedToMerchant, m.LockedToCategory, m.Currency,
					m.SpendLimitCents, m.RemainingCents, m.VirtualPan, m.Status, m.Consumed, m.ExpiresAt, m.CreatedAt, m.RevokedAt}, nil
			}))
		if err != nil {
			return fmt.Errorf("insert %d masks: %w", len(ch.NewMasks), err)
		}
	}
	if len(ch.Updated) > 0 {
		up := append([]MaskRow(nil), ch.Updated...)
		sort.Slice(up, func(i, j int) bool { return up[i].ID < up[j].ID })
		ids, remaining, status := make([]string, len(up)), make([]int64, len(up)), make([]string, len(up))
		consumed, revoked := make([]bool, len(up)), make([]*time.Time, len(up))
		for i, m := range up {
			ids[i], remaining[i], status[i], consumed[i], revoked[i] = m.ID, m.RemainingCents, m.Status, m.Consumed, m.RevokedAt
		}
		if _, err := tx.Exec(ctx, updateMasksSQL, ids, remaining, status, consumed, revoked); err != nil {
			return fmt.Errorf("update %d masks: %w", len(up), err)
		}
	}
	if len(ch.Charges) > 0 {
		_, err := tx.CopyFrom(ctx, pgx.Identifier{"mask_charges"},
			[]string{"id", "mask_id", "user_id", "payment_ref", "amount_cents", "currency", "merchant",
				"merchant_category", "merchant_user_id", "status", "decline_reason", "risk_score", "risk_factors",
				"remaining_cents", "created_at"},
			pgx.CopyFromSlice(len(ch.Charges), func(i int) ([]any, error) {
				c := ch.Charges[i]
				return []any{c.ID, c.MaskID, c.UserID, c.PaymentRef, c.AmountCents, c.Currency, c.Merchant,
					c.MerchantCategory, c.MerchantUserID, c.Status, c.DeclineReason, c.RiskScore, c.RiskFactors,
					c.RemainingCents, c.CreatedAt}, nil
			}))
		if err != nil {
			return fmt.Errorf("insert %d charges: %w", len(ch.Charges), err)
		}
	}
	return nil
}
