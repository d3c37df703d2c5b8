package identity

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fintech/platform/storage/postgres"
)

// Account is what admin rights are decided from at request time.
type Account struct {
	Email    string
	Verified bool
	// MFA is a confirmed TOTP enrolment.
	MFA bool
	// RoleConfirmed is true when an operator made or confirmed the account
	// on the server (`platform admin create` or `admin verify`) and its
	// address is verified: only then does an allowlist confer a role. The
	// web verification link never sets it.
	RoleConfirmed bool
}

// Account returns the user's current e-mail, whether it is verified, whether
// an operator confirmed the account for an allow-listed role and whether
// two-factor is on.
func (u *Users) Account(ctx context.Context, userID string) (Account, error) {
	var a Account
	err := u.pool.QueryRow(ctx, `
SELECT email, email_verified_at IS NOT NULL,
       email_verified_at IS NOT NULL AND role_confirmed_at IS NOT NULL,
       EXISTS (SELECT 1 FROM user_totp t WHERE t.user_id = users.id AND t.confirmed_at IS NOT NULL)
FROM users WHERE id = $1`, userID).
		Scan(&a.Email, &a.Verified, &a.RoleConfirmed, &a.MFA)
	if err != nil {
		return Account{}, fmt.Errorf("find account %s: %w", userID, postgres.Translate(err))
	}
	return a, nil
}

// CreateVerification stores a one-time link (its token's SHA-256) for the
// user's current e-mail.
func (u *Users) CreateVerification(ctx context.Context, tokenHash, userID, email string, expiresAt, now time.Time) error {
	_, err := u.pool.Exec(ctx, `
INSERT INTO email_verifications (token_hash, user_id, email, expires_at, created_at) VALUES ($1, $2, $3, $4, $5)`,
		tokenHash, userID, email, expiresAt, now)
	if err != nil {
		return fmt.Errorf("store e-mail verification: %w", postgres.Translate(err))
	}
	return nil
}

// ErrVerificationCap means the address was sent as many verification links
// as VerificationWindow allows.
var ErrVerificationCap = errors.New("verification mail cap reached for the address")

// VerificationWindow is the window of CreateVerificationCapped's cap.
const VerificationWindow = 24 * time.Hour

// CreateVerificationCapped is CreateVerification unless the address (any
// account's, case-insensitively) was already sent max links within
// VerificationWindow: then ErrVerificationCap, and retryAt is when the
// oldest of them leaves the window. The count and the insert are
// serialized per address.
func (u *Users) CreateVerificationCapped(ctx context.Context, tokenHash, userID, email string, expiresAt, now time.Time,
	max int) (retryAt time.Time, err error) {
	err = pgx.BeginFunc(ctx, u.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('verify-mail:' || lower($1)))`, email); err != nil {
			return err
		}
		var n int
		var oldest *time.Time
		if err := tx.QueryRow(ctx, `SELECT count(*), min(created_at) FROM email_verifications
WHERE lower(email) = lower($1) AND created_at > $2`, email, now.Add(-VerificationWindow)).Scan(&n, &oldest); err != nil {
			return err
		}
		if n >= max {
			if oldest != nil {
				retryAt = oldest.Add(VerificationWindow)
			}
			return ErrVerificationCap
		}
		_, err := tx.Exec(ctx, `
INSERT INTO email_verifications (token_hash, user_id, email, expires_at, created_at) VALUES ($1, $2, $3, $4, $5)`,
			tokenHash, userID, email, expiresAt, now)
		return err
	})
	if errors.Is(err, ErrVerificationCap) {
		return retryAt, err
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("store e-mail verification: %w", postgres.Translate(err))
	}
	return time.Time{}, nil
}

// PruneVerifications deletes the verification links made before before
// (used, expired or not: a link lives 24 hours, the cap looks back as
// long).
func (u *Users) PruneVerifications(ctx context.Context, before time.Time) (int64, error) {
	tag, err := u.pool.Exec(ctx, `DELETE FROM email_verifications WHERE created_at < $1`, before)
	if err != nil {
		return 0, fmt.Errorf("prune e-mail verifications: %w", err)
	}
	return tag.RowsAffected(), nil
}

// ConfirmVerification uses the link once: it marks the user's e-mail
// verified when the link is unused, unexpired and names the address the
// account still has. It returns the verified e-mail, or postgres.ErrNotFound
// for a link that does not qualify.
func (u *Users) ConfirmVerification(ctx context.Context, tokenHash string, now time.Time) (string, error) {
	var email string
	err := u.pool.QueryRow(ctx, `
WITH used AS (
    UPDATE email_verifications v SET used_at = $2
    FROM users
    WHERE v.token_hash = $1 AND v.used_at IS NULL AND v.expires_at > $2
      AND users.id = v.user_id AND lower(users.email) = lower(v.email)
    RETURNING v.user_id, v.email
)
UPDATE users SET email_verified_at = coalesce(users.email_verified_at, $2)
FROM used WHERE users.id = used.user_id
RETURNING used.email`, tokenHash, now).Scan(&email)
	if err != nil {
		return "", fmt.Errorf("confirm e-mail verification: %w", postgres.Translate(err))
	}
	return email, nil
}

// MarkVerified marks an existing account's e-mail verified and confirms it
// for the roles of its address (the operator's bootstrap, `platform admin
// verify`). A missing account is postgres.ErrNotFound.
func (u *Users) MarkVerified(ctx context.Context, email string, now time.Time) (string, error) {
	var id string
	err := u.pool.QueryRow(ctx, `
UPDATE users SET email_verified_at = coalesce(email_verified_at, $2), role_confirmed_at = coalesce(role_confirmed_at, $2)
WHERE lower(email) = lower($1) RETURNING id`, strings.TrimSpace(email), now).Scan(&id)
	if err != nil {
		return "", fmt.Errorf("verify %s: %w", email, postgres.Translate(err))
	}
	return id, nil
}

// Registration is who created an account, when and from where.
type Registration struct {
	UserID       string
	Email        string
	CreatedAt    time.Time
	RegisteredBy string // RegisteredBySelf or RegisteredByOperator
	IP           string // "" when not stored
	VerifiedAt   *time.Time
}

// Registration returns how the account of email (case-insensitively) was
// created; a missing account is postgres.ErrNotFound.
func (u *Users) Registration(ctx context.Context, email string) (Registration, error) {
	var r Registration
	err := u.pool.QueryRow(ctx, `
SELECT id, email, created_at, registered_by, coalesce(registration_ip, ''), email_verified_at
FROM users WHERE lower(email) = lower($1)`, strings.TrimSpace(email)).
		Scan(&r.UserID, &r.Email, &r.CreatedAt, &r.RegisteredBy, &r.IP, &r.VerifiedAt)
	if err != nil {
		return Registration{}, fmt.Errorf("registration of %s: %w", email, postgres.Translate(err))
	}
	return r, nil
}
