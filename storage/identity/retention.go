package identity

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fintech/platform/storage/postgres"
)

// Password-reset mail cap: at most ResetMailsPerDay links per account (one
// account per address) in any ResetWindow, so `forgot` cannot flood an
// inbox. A request over it sends nothing and answers as any other.
const (
	ResetMailsPerDay = 5
	ResetWindow      = 24 * time.Hour
)

// ErrResetCap is an account that was mailed ResetMailsPerDay reset links in
// the last ResetWindow.
var ErrResetCap = errors.New("password reset mail cap reached")

// CreatePasswordResetCapped is CreatePasswordReset under the per-account
// cap: under a per-user lock it refuses with ErrResetCap when max links were
// made in the last ResetWindow.
func (u *Users) CreatePasswordResetCapped(ctx context.Context, tokenHash, userID string, expiresAt, now time.Time, max int) error {
	err := pgx.BeginFunc(ctx, u.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('reset-mail:' || $1))`, userID); err != nil {
			return err
		}
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM password_resets WHERE user_id = $1 AND created_at > $2`,
			userID, now.Add(-ResetWindow)).Scan(&n); err != nil {
			return err
		}
		if n >= max {
			return ErrResetCap
		}
		_, err := tx.Exec(ctx, `
INSERT INTO password_resets (token_hash, user_id, expires_at, created_at) VALUES ($1, $2, $3, $4)`,
			tokenHash, userID, expiresAt, now)
		return err
	})
	if errors.Is(err, ErrResetCap) {
		return err
	}
	if err != nil {
		return fmt.Errorf("store password reset: %w", postgres.Translate(err))
	}
	return nil
}

// PruneAccounts deletes what accounts leave behind that ended before
// before: sessions ended or expired, reset links made (a link lives 30
// minutes, the cap looks back a day), API keys revoked or expired (their
// hashes no longer authenticate anything), and counted second-factor
// attempts. It returns the rows deleted.
func (u *Users) PruneAccounts(ctx context.Context, before time.Time) (int64, error) {
	var total int64
	for _, q := range []string{
		`DELETE FROM auth_sessions WHERE coalesce(ended_at, expires_at) < $1 AND (ended_at IS NOT NULL OR expires_at < $1)`,
		`DELETE FROM password_resets WHERE created_at < $1`,
		`DELETE FROM api_keys WHERE coalesce(revoked_at, expires_at) < $1`,
		`DELETE FROM mfa_attempts WHERE attempted_at < $1`,
	} {
		tag, err := u.pool.Exec(ctx, q, before)
		if err != nil {
			return total, fmt.Errorf("prune accounts: %w", err)
		}
		total += tag.RowsAffected()
	}
	return total, nil
}
