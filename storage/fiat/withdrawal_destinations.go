package fiat

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/postgres"
)

// WithdrawalDestination is a withdrawal's destination, sealed.
type WithdrawalDestination struct {
	WithdrawalID, UserID string
	Sealed, Hint         string
	CreatedAt            time.Time
}

// WithdrawalAAD binds a sealed destination to its withdrawal.
func WithdrawalAAD(withdrawalID string) string { return "withdrawal:" + withdrawalID }

// SaveWithdrawalDestination stores a sealed destination before its
// withdrawal command is sent (a refused withdrawal leaves a row nobody's
// transaction names; it holds only the caller's own sealed value).
func (s *Store) SaveWithdrawalDestination(ctx context.Context, d WithdrawalDestination) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO fiat_withdrawal_destinations (withdrawal_id, user_id, destination_sealed, hint, created_at)
VALUES ($1, $2, $3, $4, $5)`, d.WithdrawalID, d.UserID, d.Sealed, d.Hint, d.CreatedAt)
	if err != nil {
		return fmt.Errorf("save withdrawal destination %s: %w", d.WithdrawalID, err)
	}
	return nil
}

// Sealer seals a text value bound to aad (sealed.Keyring).
type Sealer interface {
	SealText(plaintext, aad string) (string, error)
}

// SealLegacyWithdrawals is the data step of migration 0148, run by
// `platform migrate` and `platform run` after goose: it seals the
// destinations of withdrawals written before it (in clear in the memo and
// the audit detail), stores them in fiat_withdrawal_destinations, and
// replaces the memo and the audit detail with the hint. Idempotent: a
// withdrawal with a destination row is skipped. Returns how many it sealed.
func SealLegacyWithdrawals(ctx context.Context, pool *pgxpool.Pool, vault Sealer) (int, error) {
	total := 0
	for {
		n, err := sealLegacyBatch(ctx, pool, vault, 500)
		total += n
		if err != nil || n == 0 {
			return total, err
		}
	}
}

func sealLegacyBatch(ctx context.Context, pool *pgxpool.Pool, vault Sealer, limit int) (int, error) {
	n := 0
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT t.id, t.ref_id, t.from_user, t.memo, t.created_at FROM fiat_transactions t
WHERE t.kind = 'withdrawal' AND NOT EXISTS (SELECT 1 FROM fiat_withdrawal_destinations d WHERE d.withdrawal_id = t.ref_id)
ORDER BY t.id LIMIT $1 FOR UPDATE`, limit)
		if err != nil {
			return err
		}
		type legacy struct {
			txID, wdID, user, memo string
			at                     time.Time
		}
		list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (legacy, error) {
			var l legacy
			err := r.Scan(&l.txID, &l.wdID, &l.user, &l.memo, &l.at)
			return l, err
		})
		if err != nil || len(list) == 0 {
			return err
		}
		// fiat_audit is append-only; this one rewrite of the clear
		// destinations is the migration's, inside its transaction.
		if _, err := tx.Exec(ctx, `ALTER TABLE fiat_audit DISABLE TRIGGER fiat_audit_no_change`); err != nil {
			return err
		}
		for _, l := range list {
			sealed, err := vault.SealText(l.memo, WithdrawalAAD(l.wdID))
			if err != nil {
				return err
			}
			hint := schemas.AccountHint(l.memo)
			if _, err := tx.Exec(ctx, `INSERT INTO fiat_withdrawal_destinations (withdrawal_id, user_id, destination_sealed, hint, created_at)
VALUES ($1, $2, $3, $4, $5)`, l.wdID, l.user, sealed, hint, l.at); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `UPDATE fiat_transactions SET memo = $2 WHERE id = $1`, l.txID, hint); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `UPDATE fiat_audit SET detail = $2 WHERE action = 'withdrawal' AND subject = $1`,
				l.txID, "to "+hint); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, `ALTER TABLE fiat_audit ENABLE TRIGGER fiat_audit_no_change`); err != nil {
			return err
		}
		n = len(list)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("seal legacy withdrawal destinations: %w", err)
	}
	return n, nil
}

// PruneRefusedDestinations deletes the sealed destinations of withdrawals
// made before before that the applier refused (no withdrawal transaction
// names them): they moved no money, so nothing needs to say where to.
func PruneRefusedDestinations(ctx context.Context, db postgres.Querier, before time.Time) (int64, error) {
	tag, err := db.Exec(ctx, `
DELETE FROM fiat_withdrawal_destinations d
WHERE d.created_at < $1
  AND NOT EXISTS (SELECT 1 FROM fiat_transactions t WHERE t.kind = 'withdrawal' AND t.ref_id = d.withdrawal_id)`, before)
	if err != nil {
		return 0, fmt.Errorf("prune refused withdrawal destinations: %w", err)
	}
	return tag.RowsAffected(), nil
}
