package identity

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fintech/platform/storage/postgres"
)

// Session is a login: a row of auth_sessions.
type Session struct {
	ID         string
	UserID     string
	CreatedAt  time.Time
	LastSeenAt time.Time
	ExpiresAt  time.Time
	IP         string
	UserAgent  string
}

// SessionState is what a request's session check needs.
type SessionState struct {
	UserID     string
	Live       bool // not ended and not expired
	LastSeenAt time.Time
	ExpiresAt  time.Time
}

// CreateSession stores a new login.
func (u *Users) CreateSession(ctx context.Context, s Session) error {
	_, err := u.pool.Exec(ctx, `
INSERT INTO auth_sessions (id, user_id, created_at, last_seen_at, expires_at, ip, user_agent)
VALUES ($1, $2, $3, $3, $4, $5, $6)`, s.ID, s.UserID, s.CreatedAt, s.ExpiresAt, s.IP, s.UserAgent)
	if err != nil {
		return fmt.Errorf("create session of %s: %w", s.UserID, postgres.Translate(err))
	}
	return nil
}

// SessionState reads one session by its primary key; an unknown id is
// postgres.ErrNotFound.
func (u *Users) SessionState(ctx context.Context, id string, now time.Time) (SessionState, error) {
	var s SessionState
	err := u.pool.QueryRow(ctx, `
SELECT user_id, ended_at IS NULL AND expires_at > $2, last_seen_at, expires_at FROM auth_sessions WHERE id = $1`, id, now).
		Scan(&s.UserID, &s.Live, &s.LastSeenAt, &s.ExpiresAt)
	if err != nil {
		return SessionState{}, fmt.Errorf("session %s: %w", id, postgres.Translate(err))
	}
	return s, nil
}

// TouchSession records that the session was used at now.
func (u *Users) TouchSession(ctx context.Context, id string, now time.Time) error {
	if _, err := u.pool.Exec(ctx, `
UPDATE auth_sessions SET last_seen_at = $2 WHERE id = $1 AND ended_at IS NULL AND last_seen_at < $2`, id, now); err != nil {
		return fmt.Errorf("touch session %s: %w", id, err)
	}
	return nil
}

// RefreshSessions answers, in one statement, which of ids are still live
// sessions at now (not ended, not expired), and writes last_seen_at = now on
// those of touch that are live and last seen before now. An id it does not
// return is not live: ended, expired or unknown. It reads each id by the
// primary key under one snapshot, so the answer holds every session end
// committed before the statement began.
func (u *Users) RefreshSessions(ctx context.Context, ids, touch []string, now time.Time) ([]string, error) {
	// The UPDATE in a data-modifying CTE runs whether or not the SELECT
	// reads it; the SELECT sees the snapshot from before it, which changes
	// nothing here (a touch never changes liveness). With touch empty it
	// modifies no row, so no transaction id is taken and the commit is a
	// read-only one.
	rows, err := u.pool.Query(ctx, `
WITH touched AS (
    UPDATE auth_sessions SET last_seen_at = $2
    WHERE id = ANY($3) AND ended_at IS NULL AND expires_at > $2 AND last_seen_at < $2
)
SELECT id FROM auth_sessions WHERE id = ANY($1) AND ended_at IS NULL AND expires_at > $2`, ids, now, touch)
	if err != nil {
		return nil, fmt.Errorf("refresh %d sessions: %w", len(ids), err)
	}
	live, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("refresh %d sessions: %w", len(ids), err)
	}
	return live, nil
}

// Sessions lists the user's live sessions, newest first.
func (u *Users) Sessions(ctx context.Context, userID string, now time.Time) ([]Session, error) {
	rows, err := u.pool.Query(ctx, `
SELECT id, user_id, created_at, last_seen_at, expires_at, ip, user_agent FROM auth_sessions
WHERE user_id = $1 AND ended_at IS NULL AND expires_at > $2 ORDER BY created_at DESC, id DESC`, userID, now)
	if err != nil {
		return nil, fmt.Errorf("sessions of %s: %w", userID, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Session, error) {
		var s Session
		err := r.Scan(&s.ID, &s.UserID, &s.CreatedAt, &s.LastSeenAt, &s.ExpiresAt, &s.IP, &s.UserAgent)
		return s, err
	})
	if err != nil {
		return nil, fmt.Errorf("sessions of %s: %w", userID, err)
	}
	return out, nil
}

// EndSession ends one live session of the user; an id that is not a live
// session of this user is postgres.ErrNotFound.
func (u *Users) EndSession(ctx context.Context, userID, id string, now time.Time) error {
	tag, err := u.pool.Exec(ctx, `
UPDATE auth_sessions SET ended_at = $3 WHERE id = $1 AND user_id = $2 AND ended_at IS NULL`, id, userID, now)
	if err != nil {
		return fmt.Errorf("end session %s: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("end session %s: %w", id, postgres.ErrNotFound)
	}
	return nil
}

// EndOtherSessions ends every live session of the user but keep ("" ends
// them all) and, in the same transaction, revokes every API key of the
// user ("sign out everywhere" leaves nothing a thief could still use); it
// returns the ended session ids.
func (u *Users) EndOtherSessions(ctx context.Context, userID, keep string, now time.Time) ([]string, error) {
	var ended []string
	err := pgx.BeginFunc(ctx, u.pool, func(tx pgx.Tx) error {
		var err error
		if ended, err = endSessions(ctx, tx, userID, keep, now); err != nil {
			return err
		}
		return revokeKeys(ctx, tx, userID, now)
	})
	if err != nil {
		return nil, fmt.Errorf("sign out everywhere of %s: %w", userID, err)
	}
	return ended, nil
}

// revokeKeys revokes every unrevoked API key of the user: a password
// change, a reset and "sign out everywhere" end the credentials a session
// could have minted, not only the sessions.
func revokeKeys(ctx context.Context, tx pgx.Tx, userID string, now time.Time) error {
	if _, err := tx.Exec(ctx, `UPDATE api_keys SET revoked_at = $2 WHERE user_id = $1 AND revoked_at IS NULL`,
		userID, now); err != nil {
		return fmt.Errorf("revoke api keys of %s: %w", userID, err)
	}
	return nil
}

// querier is a pool or a transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

func endSessions(ctx context.Context, q querier, userID, keep string, now time.Time) ([]string, error) {
	rows, err := q.Query(ctx, `
UPDATE auth_sessions SET ended_at = $3 WHERE user_id = $1 AND id <> $2 AND ended_at IS NULL RETURNING id`,
		userID, keep, now)
	if err != nil {
		return nil, fmt.Errorf("end sessions of %s: %w", userID, err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("end sessions of %s: %w", userID, err)
	}
	return ids, nil
}

// SetPassword replaces the user's password hash and, in the same
// transaction, ends every session but keep and revokes every API key of
// the user; it returns the ended session ids.
func (u *Users) SetPassword(ctx context.Context, userID, hash, keep string, now time.Time) ([]string, error) {
	var ended []string
	err := pgx.BeginFunc(ctx, u.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE users SET password_hash = $2 WHERE id = $1`, userID, hash)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return postgres.ErrNotFound
		}
		if ended, err = endSessions(ctx, tx, userID, keep, now); err != nil {
			return err
		}
		return revokeKeys(ctx, tx, userID, now)
	})
	if err != nil {
		return nil, fmt.Errorf("set password of %s: %w", userID, postgres.Translate(err))
	}
	return ended, nil
}

// CreatePasswordReset stores a one-time reset link (its token's SHA-256).
func (u *Users) CreatePasswordReset(ctx context.Context, tokenHash, userID string, expiresAt, now time.Time) error {
	_, err := u.pool.Exec(ctx, `
INSERT INTO password_resets (token_hash, user_id, expires_at, created_at) VALUES ($1, $2, $3, $4)`,
		tokenHash, userID, expiresAt, now)
	if err != nil {
		return fmt.Errorf("store password reset: %w", postgres.Translate(err))
	}
	return nil
}

// ResetPassword spends a reset link once and, in the same transaction, sets
// the new password hash, ends every session of its user and revokes every
// API key of the user. A link that is
// unknown, used or expired is postgres.ErrNotFound. It returns the user and
// the ended session ids.
func (u *Users) ResetPassword(ctx context.Context, tokenHash, hash string, now time.Time) (string, []string, error) {
	var userID string
	var ended []string
	err := pgx.BeginFunc(ctx, u.pool, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `
UPDATE password_resets SET used_at = $2
WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2 RETURNING user_id`, tokenHash, now).Scan(&userID)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE users SET password_hash = $2 WHERE id = $1`, userID, hash); err != nil {
			return err
		}
		// Every other link of the user dies with the password it was for.
		if _, err := tx.Exec(ctx, `
UPDATE password_resets SET used_at = $2 WHERE user_id = $1 AND used_at IS NULL`, userID, now); err != nil {
			return err
		}
		if ended, err = endSessions(ctx, tx, userID, "", now); err != nil {
			return err
		}
		return revokeKeys(ctx, tx, userID, now)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil, fmt.Errorf("reset password: %w", postgres.ErrNotFound)
	}
	if err != nil {
		return "", nil, fmt.Errorf("reset password: %w", postgres.Translate(err))
	}
	return userID, ended, nil
}
