package webhooks

import (
	"context"
	"fmt"
	"time"

	"github.com/fintech/platform/storage/postgres"
)

// CreateStreamTicket keeps a stream ticket (its token's SHA-256) for userID
// and the login session that minted it until expiresAt, and forgets the
// tickets that expired before now.
func (s *Store) CreateStreamTicket(ctx context.Context, tokenHash, userID, sessionID string, expiresAt, now time.Time) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM stream_tickets WHERE expires_at <= $1`, now); err != nil {
		return fmt.Errorf("expire stream tickets: %w", err)
	}
	if _, err := s.pool.Exec(ctx, `
INSERT INTO stream_tickets (token_hash, user_id, session_id, expires_at, created_at) VALUES ($1, $2, $3, $4, $5)`,
		tokenHash, userID, sessionID, expiresAt, now); err != nil {
		return fmt.Errorf("store stream ticket: %w", postgres.Translate(err))
	}
	return nil
}

// UseStreamTicket redeems a ticket once: it returns the user and the
// session it was minted for and deletes it in the same statement, so two requests racing with one
// ticket cannot both win. An unknown, used or expired ticket is
// postgres.ErrNotFound.
func (s *Store) UseStreamTicket(ctx context.Context, tokenHash string, now time.Time) (string, string, error) {
	var userID, sessionID string
	err := s.pool.QueryRow(ctx, `
DELETE FROM stream_tickets WHERE token_hash = $1 AND expires_at > $2 RETURNING user_id, session_id`, tokenHash, now).
		Scan(&userID, &sessionID)
	if err != nil {
		return "", "", fmt.Errorf("use stream ticket: %w", postgres.Translate(err))
	}
	return userID, sessionID, nil
}
