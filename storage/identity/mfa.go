package identity

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fintech/platform/storage/postgres"
)

// TOTP is a user's TOTP enrolment: the secret as sealed text, and whether a
// first code confirmed it.
type TOTP struct {
	SealedSecret string
	Confirmed    bool
	LastStep     int64
}

// TOTP returns the user's enrolment; none is postgres.ErrNotFound.
func (u *Users) TOTP(ctx context.Context, userID string) (TOTP, error) {
	var t TOTP
	err := u.pool.QueryRow(ctx, `
SELECT secret, confirmed_at IS NOT NULL, last_step FROM user_totp WHERE user_id = $1`, userID).
		Scan(&t.SealedSecret, &t.Confirmed, &t.LastStep)
	if err != nil {
		return TOTP{}, fmt.Errorf("totp of %s: %w", userID, postgres.Translate(err))
	}
	return t, nil
}

// StartTOTP stores a pending secret, replacing a pending one; an enrolment
// already confirmed is postgres.ErrConflict.
func (u *Users) StartTOTP(ctx context.Context, userID, sealedSecret string, now time.Time) error {
	tag, err := u.pool.Exec(ctx, `
INSERT INTO user_totp (user_id, secret, created_at) VALUES ($1, $2, $3)
ON CONFLICT (user_id) DO UPDATE SET secret = excluded.secret, created_at = excluded.created_at, last_step = 0
WHERE user_totp.confirmed_at IS NULL`, userID, sealedSecret, now)
	if err != nil {
		return fmt.Errorf("start totp of %s: %w", userID, postgres.Translate(err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("start totp of %s: %w", userID, postgres.ErrConflict)
	}
	return nil
}

// ConfirmTOTP enables the pending enrolment with the step of its first
// code and replaces the user's recovery codes with codeHashes, in one
// transaction. No pending enrolment (or a step not after the last) is
// postgres.ErrNotFound.
func (u *Users) ConfirmTOTP(ctx context.Context, userID string, step int64, codeHashes []string, now time.Time) error {
	err := pgx.BeginFunc(ctx, u.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `
UPDATE user_totp SET confirmed_at = $3, last_step = $2
WHERE user_id = $1 AND confirmed_at IS NULL AND last_step < $2`, userID, step, now)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return postgres.ErrNotFound
		}
		if _, err := tx.Exec(ctx, `DELETE FROM user_recovery_codes WHERE user_id = $1`, userID); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `
INSERT INTO user_recovery_codes (user_id, code_hash) SELECT $1, unnest($2::text[])`, userID, codeHashes)
		return err
	})
	if err != nil {
		return fmt.Errorf("confirm totp of %s: %w", userID, postgres.Translate(err))
	}
	return nil
}

// UseTOTPStep accepts a code of the given 30-second step at most once: it
// reports false when the enrolment is not confirmed or a code of this or a
// later step was accepted already (a replay).
func (u *Users) UseTOTPStep(ctx context.Context, userID string, step int64) (bool, error) {
	tag, err := u.pool.Exec(ctx, `
UPDATE user_totp SET last_step = $2 WHERE user_id = $1 AND confirmed_at IS NOT NULL AND last_step < $2`, userID, step)
	if err != nil {
		return false, fmt.Errorf("use totp step of %s: %w", userID, err)
	}
	return tag.RowsAffected() == 1, nil
}

// UseRecoveryCode spends one unused recovery code; false when it is not one.
func (u *Users) UseRecoveryCode(ctx context.Context, userID, codeHash string, now time.Time) (bool, error) {
	tag, err := u.pool.Exec(ctx, `
UPDATE user_recovery_codes SET used_at = $3 WHERE user_id = $1 AND code_hash = $2 AND used_at IS NULL`,
		userID, codeHash, now)
	if err != nil {
		return false, fmt.Errorf("use recovery code of %s: %w", userID, err)
	}
	return tag.RowsAffected() == 1, nil
}

// DisableTOTP removes the user's enrolment and recovery codes.
func (u *Users) DisableTOTP(ctx context.Context, userID string) error {
	err := pgx.BeginFunc(ctx, u.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM user_recovery_codes WHERE user_id = $1`, userID); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `DELETE FROM user_totp WHERE user_id = $1`, userID)
		return err
	})
	if err != nil {
		return fmt.Errorf("disable totp of %s: %w", userID, err)
	}
	return nil
}

// ErrMFALocked is an account that reached the most wrong second-factor
// codes allowed in the window; a *MFALocked carries when it may try again.
var ErrMFALocked = errors.New("too many wrong second-factor codes")

// MFALocked is ErrMFALocked with the wait.
type MFALocked struct {
	// RetryAfter is how long until the oldest counted attempt leaves the
	// window.
	RetryAfter time.Duration
}

func (e *MFALocked) Error() string { return ErrMFALocked.Error() }

// Unwrap makes errors.Is(err, ErrMFALocked) hold.
func (e *MFALocked) Unwrap() error { return ErrMFALocked }

// TakeMFAAttempt counts an attempt at a second-factor code of the user
// before the code is checked: under a per-user lock it refuses with
// *MFALocked when max attempts are counted in the window before now, and
// otherwise records one and returns its id. The caller gives a right code's
// attempt back (ReturnMFAAttempt), so what is counted is the wrong ones, and
// parallel guesses cannot pass the limit between a check and a record.
func (u *Users) TakeMFAAttempt(ctx context.Context, userID string, now time.Time, window time.Duration, max int) (int64, error) {
	var id int64
	err := pgx.BeginFunc(ctx, u.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('mfa-attempts:' || $1))`, userID); err != nil {
			return err
		}
		var n int
		var oldest *time.Time
		if err := tx.QueryRow(ctx, `
SELECT count(*), min(attempted_at) FROM mfa_attempts WHERE user_id = $1 AND attempted_at > $2`,
			userID, now.Add(-window)).Scan(&n, &oldest); err != nil {
			return err
		}
		if n >= max && oldest != nil {
			wait := oldest.Add(window).Sub(now)
			if wait < time.Second {
				wait = time.Second
			}
			return &MFALocked{RetryAfter: wait}
		}
		return tx.QueryRow(ctx, `INSERT INTO mfa_attempts (user_id, attempted_at) VALUES ($1, $2) RETURNING id`,
			userID, now).Scan(&id)
	})
	var locked *MFALocked
	if errors.As(err, &locked) {
		return 0, locked
	}
	if err != nil {
		return 0, fmt.Errorf("count second-factor attempts of %s: %w", userID, postgres.Translate(err))
	}
	return id, nil
}

// ReturnMFAAttempt uncounts an attempt whose code was right.
func (u *Users) ReturnMFAAttempt(ctx context.Context, id int64) error {
	if _, err := u.pool.Exec(ctx, `DELETE FROM mfa_attempts WHERE id = $1`, id); err != nil {
		return fmt.Errorf("return second-factor attempt %d: %w", id, err)
	}
	return nil
}
