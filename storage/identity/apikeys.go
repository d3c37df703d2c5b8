package identity

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fintech/platform/storage/postgres"
)

// ErrKeyLimit is a user who already holds the most active API keys allowed.
var ErrKeyLimit = errors.New("api key limit reached")

// APIKey is a restricted API key row; the key itself is never stored, only
// its SHA-256.
type APIKey struct {
	ID         string
	UserID     string
	Name       string
	Prefix     string
	Hash       []byte
	Scopes     []string
	CreatedAt  time.Time
	ExpiresAt  *time.Time
	LastUsedAt *time.Time
	// Email is the owner's e-mail (read by ByHash only).
	Email string
}

// APIKeys is the restricted API key repository.
type APIKeys struct {
	pool *pgxpool.Pool
}

// NewAPIKeys builds the repository.
func NewAPIKeys(pool *pgxpool.Pool) *APIKeys { return &APIKeys{pool: pool} }

const apiKeyCols = `id, user_id, name, prefix, key_hash, scopes, created_at, expires_at, last_used_at`

func scanAPIKey(row pgx.Row) (APIKey, error) {
	var k APIKey
	err := row.Scan(&k.ID, &k.UserID, &k.Name, &k.Prefix, &k.Hash, &k.Scopes, &k.CreatedAt, &k.ExpiresAt, &k.LastUsedAt)
	return k, err
}

// Create inserts a key unless the user already holds max active (unrevoked,
// unexpired) ones (ErrKeyLimit). A per-user advisory lock serialises
// concurrent creations so the limit holds under races.
func (s *APIKeys) Create(ctx context.Context, k APIKey, max int) error {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('api_keys:' || $1))`, k.UserID); err != nil {
			return err
		}
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM api_keys
WHERE user_id = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $2)`, k.UserID, k.CreatedAt).Scan(&n); err != nil {
			return err
		}
		if n >= max {
			return ErrKeyLimit
		}
		_, err := tx.Exec(ctx, `INSERT INTO api_keys (id, user_id, name, prefix, key_hash, scopes, created_at, expires_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, k.ID, k.UserID, k.Name, k.Prefix, k.Hash, k.Scopes, k.CreatedAt, k.ExpiresAt)
		return err
	})
	if err != nil && !errors.Is(err, ErrKeyLimit) {
		return fmt.Errorf("create api key of %s: %w", k.UserID, postgres.Translate(err))
	}
	return err
}

// Active lists the user's unrevoked, unexpired keys, newest first.
func (s *APIKeys) Active(ctx context.Context, userID string, now time.Time) ([]APIKey, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+apiKeyCols+` FROM api_keys
WHERE user_id = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $2)
ORDER BY created_at DESC, id DESC`, userID, now)
	if err != nil {
		return nil, fmt.Errorf("api keys of %s: %w", userID, err)
	}
	keys, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (APIKey, error) { return scanAPIKey(r) })
	if err != nil {
		return nil, fmt.Errorf("api keys of %s: %w", userID, err)
	}
	return keys, nil
}

// ByHash returns the unrevoked key whose SHA-256 is hash, with its owner's
// e-mail (expiry is the caller's check). None is postgres.ErrNotFound.
func (s *APIKeys) ByHash(ctx context.Context, hash []byte) (APIKey, error) {
	var k APIKey
	err := s.pool.QueryRow(ctx, `SELECT k.id, k.user_id, k.name, k.prefix, k.key_hash, k.scopes, k.created_at,
    k.expires_at, k.last_used_at, u.email
FROM api_keys k JOIN users u ON u.id = k.user_id
WHERE k.key_hash = $1 AND k.revoked_at IS NULL`, hash).Scan(&k.ID, &k.UserID, &k.Name, &k.Prefix, &k.Hash, &k.Scopes,
		&k.CreatedAt, &k.ExpiresAt, &k.LastUsedAt, &k.Email)
	if err != nil {
		return APIKey{}, fmt.Errorf("api key by hash: %w", postgres.Translate(err))
	}
	return k, nil
}

// Revoke ends one of the user's keys at once. Another user's key, an
// unknown id and a key revoked before are postgres.ErrNotFound.
func (s *APIKeys) Revoke(ctx context.Context, userID, id string, now time.Time) error {
	tag, err := s.pool.Exec(ctx, `UPDATE api_keys SET revoked_at = $3
WHERE id = $1 AND user_id = $2 AND revoked_at IS NULL`, id, userID, now)
	if err != nil {
		return fmt.Errorf("revoke api key %s: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("revoke api key %s: %w", id, postgres.ErrNotFound)
	}
	return nil
}

// Live reports whether the key id is unrevoked and unexpired at now (an
// open event stream asks it again and again: the key authenticated once, at
// connect).
func (s *APIKeys) Live(ctx context.Context, id string, now time.Time) (bool, error) {
	var live bool
	if err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM api_keys
WHERE id = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $2))`, id, now).Scan(&live); err != nil {
		return false, fmt.Errorf("api key %s live: %w", id, err)
	}
	return live, nil
}

// Touch records that a key was used at now, unless a use at or after
// notBefore is recorded already: the gateway calls it at most once a minute
// per key, and the condition keeps several gateways from rewriting the row.
func (s *APIKeys) Touch(ctx context.Context, id string, now, notBefore time.Time) error {
	if _, err := s.pool.Exec(ctx, `UPDATE api_keys SET last_used_at = $2
WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < $3)`, id, now, notBefore); err != nil {
		return fmt.Errorf("touch api key %s: %w", id, err)
	}
	return nil
}
