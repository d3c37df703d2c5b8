package ledger

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Checkpoint is a verified chain head: the entries up to Height were
// checked and the entry at Height has Hash. The zero value is the genesis.
type Checkpoint struct {
	Height int64
	Hash   string
}

// Verified is the stored verification state: the last verified head, when
// the last full walk ran, and the break it (or an incremental walk) found.
type Verified struct {
	Checkpoint
	FullWalkAt *time.Time
	Broken     *VerifyResult
}

// Execer is what recording needs from a pool.
type Execer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// ReadVerified reads the verification state (the zero one before any walk).
func ReadVerified(ctx context.Context, db Conn) (Verified, error) {
	var (
		v      Verified
		broken []byte
	)
	err := db.QueryRow(ctx, `SELECT height, hash, full_walk_at, broken FROM ledger_verified`).
		Scan(&v.Height, &v.Hash, &v.FullWalkAt, &broken)
	if errors.Is(err, pgx.ErrNoRows) {
		return Verified{}, nil
	}
	if err != nil {
		return Verified{}, fmt.Errorf("read verified head: %w", err)
	}
	if broken != nil {
		var res VerifyResult
		if err := json.Unmarshal(broken, &res); err != nil {
			return Verified{}, fmt.Errorf("read verified head: broken result: %w", err)
		}
		v.Broken = &res
	}
	return v, nil
}

// EntryHash returns the stored hash at height (false when there is none).
func EntryHash(ctx context.Context, db Conn, height int64) (string, bool, error) {
	var h string
	err := db.QueryRow(ctx, `SELECT hash FROM ledger_entries WHERE height = $1`, height).Scan(&h)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("read entry %d: %w", height, err)
	}
	return h, true, nil
}

// RecordWalk stores the outcome of a walk: a valid one moves the verified
// head forward (never back: concurrent walkers may finish out of order) and,
// when full, clears a recorded break; an invalid one records its result.
func RecordWalk(ctx context.Context, db Execer, res VerifyResult, full bool, at time.Time) error {
	var fullAt *time.Time
	if full {
		fullAt = &at
	}
	var err error
	if res.Valid {
		_, err = db.Exec(ctx, `INSERT INTO ledger_verified AS v (height, hash, verified_at, full_walk_at)
VALUES ($1, $2, $3, $4)
ON CONFLICT (id) DO UPDATE SET
    height = CASE WHEN EXCLUDED.height > v.height THEN EXCLUDED.height ELSE v.height END,
    hash = CASE WHEN EXCLUDED.height > v.height THEN EXCLUDED.hash ELSE v.hash END,
    verified_at = EXCLUDED.verified_at,
    full_walk_at = coalesce(EXCLUDED.full_walk_at, v.full_walk_at),
    broken = CASE WHEN $4::timestamptz IS NOT NULL THEN NULL ELSE v.broken END`,
			res.Height, res.HeadHash, at, fullAt)
	} else {
		raw, merr := json.Marshal(res)
		if merr != nil {
			return merr
		}
		_, err = db.Exec(ctx, `INSERT INTO ledger_verified AS v (height, hash, verified_at, full_walk_at, broken)
VALUES (0, $1, $2, $3, $4)
ON CONFLICT (id) DO UPDATE SET verified_at = EXCLUDED.verified_at,
    full_walk_at = coalesce(EXCLUDED.full_walk_at, v.full_walk_at), broken = EXCLUDED.broken`,
			GenesisPrevHash, at, fullAt, raw)
	}
	if err != nil {
		return fmt.Errorf("record chain walk: %w", err)
	}
	return nil
}
