// Package sign stores users' Ed25519 signing keys (the private part only
// sealed, see gateway/sign) and the record of every signing. The signing
// module writes Postgres directly: its write rate is low and it moves no
// balance.
package sign

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fintech/platform/storage/postgres"
)

// Key statuses.
const (
	StatusActive  = "active"
	StatusRetired = "retired"
)

// KeyRow is a sign_keys row. SealedSeed is the AEAD ciphertext of the
// private key's seed under the master key named by MasterKeyID.
type KeyRow struct {
	ID          string     `db:"id"`
	UserID      string     `db:"user_id"`
	PublicKey   []byte     `db:"public_key"`
	SealedSeed  []byte     `db:"sealed_seed"`
	Nonce       []byte     `db:"nonce"`
	MasterKeyID string     `db:"master_key_id"`
	Status      string     `db:"status"`
	CreatedAt   time.Time  `db:"created_at"`
	RetiredAt   *time.Time `db:"retired_at"`
}

// SignatureRow is a sign_signatures row.
type SignatureRow struct {
	ID               string    `db:"id"`
	KeyID            string    `db:"key_id"`
	UserID           string    `db:"user_id"`
	Signature        string    `db:"signature"`
	PayloadDigest    string    `db:"payload_digest"`
	CanonicalPayload []byte    `db:"canonical_payload"`
	CreatedAt        time.Time `db:"created_at"`
}

const keyColumns = `id, user_id, public_key, sealed_seed, nonce, master_key_id, status, created_at, retired_at`

// Store is the signing repository.
type Store struct {
	pool *pgxpool.Pool
}

// NewStore builds the repository.
func NewStore(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

// IsNotFound reports whether err is a missing row.
func IsNotFound(err error) bool { return errors.Is(err, postgres.ErrNotFound) }

// ActiveKey returns the user's active key or postgres.ErrNotFound.
func (s *Store) ActiveKey(ctx context.Context, userID string) (KeyRow, error) {
	return s.key(ctx, `SELECT `+keyColumns+` FROM sign_keys WHERE user_id = $1 AND status = 'active'`, userID)
}

// Key returns a key by id (active or retired) or postgres.ErrNotFound.
func (s *Store) Key(ctx context.Context, id string) (KeyRow, error) {
	return s.key(ctx, `SELECT `+keyColumns+` FROM sign_keys WHERE id = $1`, id)
}

// Keys lists the user's keys, newest first.
func (s *Store) Keys(ctx context.Context, userID string) ([]KeyRow, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+keyColumns+` FROM sign_keys WHERE user_id = $1 ORDER BY created_at DESC, id DESC`, userID)
	if err != nil {
		return nil, fmt.Errorf("list signing keys: %w", err)
	}
	list, err := pgx.CollectRows(rows, pgx.RowToStructByName[KeyRow])
	if err != nil {
		return nil, fmt.Errorf("list signing keys: %w", err)
	}
	return list, nil
}

func (s *Store) key(ctx context.Context, sql, arg string) (KeyRow, error) {
	rows, err := s.pool.Query(ctx, sql, arg)
	if err != nil {
		return KeyRow{}, fmt.Errorf("read signing key: %w", err)
	}
	k, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[KeyRow])
	if err != nil {
		return KeyRow{}, fmt.Errorf("read signing key: %w", postgres.Translate(err))
	}
	return k, nil
}

const insertKeySQL = `
INSERT INTO sign_keys (id, user_id, public_key, sealed_seed, nonce, master_key_id, status, created_at)
VALUES ($1, $2, $3, $4, $5, $6, 'active', $7)
ON CONFLICT (user_id) WHERE status = 'active' DO NOTHING`

// CreateFirstKey stores k as the user's active key unless the user has one
// already (a concurrent first use): then nothing is written. Either way it
// returns the user's active key.
func (s *Store) CreateFirstKey(ctx context.Context, k KeyRow) (KeyRow, error) {
	if _, err := s.pool.Exec(ctx, insertKeySQL, k.ID, k.UserID, k.PublicKey, k.SealedSeed, k.Nonce, k.MasterKeyID, k.CreatedAt); err != nil {
		return KeyRow{}, fmt.Errorf("create signing key: %w", err)
	}
	return s.ActiveKey(ctx, k.UserID)
}

// ErrRotateRace means the user's active key changed while rotating.
var ErrRotateRace = errors.New("the active signing key changed concurrently")

// Rotate retires the user's active key (if any) and makes k the active one,
// in one transaction. Retired keys stay readable by Key, so signatures made
// with them still verify. It returns the id of the retired key ("" if none).
// A concurrent rotation that made another key active in the meantime is
// ErrRotateRace (nothing is written); the caller may try again.
func (s *Store) Rotate(ctx context.Context, k KeyRow) (string, error) {
	var retired string
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `UPDATE sign_keys SET status = 'retired', retired_at = $2
			WHERE user_id = $1 AND status = 'active' RETURNING id`, k.UserID, k.CreatedAt).Scan(&retired)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		tag, err := tx.Exec(ctx, insertKeySQL, k.ID, k.UserID, k.PublicKey, k.SealedSeed, k.Nonce, k.MasterKeyID, k.CreatedAt)
		if err != nil {
			return err
		}
		if tag.RowsAffected() != 1 {
			return ErrRotateRace
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("rotate signing key: %w", postgres.Translate(err))
	}
	return retired, nil
}

// Reseal replaces a key's sealed seed (after the master key rotated).
func (s *Store) Reseal(ctx context.Context, id string, sealed, nonce []byte, masterKeyID string) error {
	_, err := s.pool.Exec(ctx, `UPDATE sign_keys SET sealed_seed = $2, nonce = $3, master_key_id = $4 WHERE id = $1`,
		id, sealed, nonce, masterKeyID)
	if err != nil {
		return fmt.Errorf("reseal signing key: %w", err)
	}
	return nil
}

// RecordSignature stores one signing.
func (s *Store) RecordSignature(ctx context.Context, r SignatureRow) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO sign_signatures (id, key_id, user_id, signature, payload_digest, canonical_payload, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, r.ID, r.KeyID, r.UserID, r.Signature, r.PayloadDigest, r.CanonicalPayload, r.CreatedAt)
	if err != nil {
		return fmt.Errorf("record signature: %w", err)
	}
	return nil
}

// ErrPayloadBudget means the user's kept signed payloads would exceed the
// budget; RecordSignatureWithin returns when the oldest one expires.
var ErrPayloadBudget = errors.New("signed payload budget spent")

// RecordSignatureWithin stores one signing unless the user's payloads kept
// since `since` (the retention) would then exceed maxBytes or maxCount: then
// ErrPayloadBudget, with the time the oldest kept one leaves the window. A
// per-user advisory lock makes concurrent signings count each other.
func (s *Store) RecordSignatureWithin(ctx context.Context, r SignatureRow, since time.Time, maxBytes, maxCount int64) (time.Time, error) {
	var oldest time.Time
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('sign_signatures:' || $1))`, r.UserID); err != nil {
			return err
		}
		var bytes, count int64
		var first *time.Time
		if err := tx.QueryRow(ctx, `SELECT coalesce(sum(length(canonical_payload)), 0), count(*), min(created_at)
FROM sign_signatures WHERE user_id = $1 AND created_at >= $2`, r.UserID, since).Scan(&bytes, &count, &first); err != nil {
			return err
		}
		if bytes+int64(len(r.CanonicalPayload)) > maxBytes || count+1 > maxCount {
			if first != nil {
				oldest = *first
			}
			return ErrPayloadBudget
		}
		_, err := tx.Exec(ctx, `INSERT INTO sign_signatures (id, key_id, user_id, signature, payload_digest, canonical_payload, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, r.ID, r.KeyID, r.UserID, r.Signature, r.PayloadDigest, r.CanonicalPayload, r.CreatedAt)
		return err
	})
	if errors.Is(err, ErrPayloadBudget) {
		return oldest, err
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("record signature: %w", err)
	}
	return time.Time{}, nil
}

// PruneSignatures deletes the signings made before before (the retention);
// /verify then answers `provided: null` for them, and the public key still
// verifies them offline.
func (s *Store) PruneSignatures(ctx context.Context, before time.Time) (int64, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM sign_signatures WHERE created_at < $1`, before)
	if err != nil {
		return 0, fmt.Errorf("prune signatures: %w", err)
	}
	return tag.RowsAffected(), nil
}

// SignatureDigest returns the payload digest recorded for a signature
// string, or postgres.ErrNotFound when it was never made here.
func (s *Store) SignatureDigest(ctx context.Context, signature string) (string, error) {
	var d string
	err := s.pool.QueryRow(ctx, `SELECT payload_digest FROM sign_signatures WHERE signature = $1 ORDER BY id LIMIT 1`, signature).Scan(&d)
	if err != nil {
		return "", fmt.Errorf("find signature: %w", postgres.Translate(err))
	}
	return d, nil
}
