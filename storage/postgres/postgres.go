// Package postgres connects to the Postgres state of record, applies the
// embedded migrations and translates driver errors once for every repository.
package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"

	"github.com/fintech/platform/storage/migrations"
)

// ErrNotFound means the row does not exist.
var ErrNotFound = errors.New("not found")

// ErrConflict means a unique constraint refused the write.
var ErrConflict = errors.New("conflict")

// Querier is what repositories need from a pool or a transaction.
type Querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	CopyFrom(ctx context.Context, table pgx.Identifier, cols []string, src pgx.CopyFromSource) (int64, error)
}

var (
	_ Querier = (*pgxpool.Pool)(nil)
	_ Querier = (pgx.Tx)(nil)
)

// Connect opens a pool on url and checks that the server answers.
func Connect(ctx context.Context, url string, maxConns int32) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("parse DATABASE_URL: %w", err)
	}
	if maxConns > 0 {
		cfg.MaxConns = maxConns
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open postgres pool: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("reach postgres at %s:%d: %w", cfg.ConnConfig.Host, cfg.ConnConfig.Port, err)
	}
	return pool, nil
}

// Migrate applies every embedded migration not yet applied and returns the
// names of those it applied. Concurrent callers are serialized by an advisory
// lock.
func Migrate(ctx context.Context, pool *pgxpool.Pool) ([]string, error) {
	db := stdlib.OpenDBFromPool(pool)
	defer db.Close()
	locker, err := lockFor()
	if err != nil {
		return nil, err
	}
	p, err := goose.NewProvider(goose.DialectPostgres, db, migrations.FS,
		goose.WithSessionLocker(locker), goose.WithAllowOutofOrder(true))
	if err != nil {
		return nil, fmt.Errorf("load migrations: %w", err)
	}
	results, err := p.Up(ctx)
	if err != nil {
		return nil, fmt.Errorf("apply migrations: %w", err)
	}
	var applied []string
	for _, r := range results {
		applied = append(applied, r.Source.Path)
	}
	return applied, nil
}

// Translate maps driver errors to ErrNotFound and ErrConflict, keeping the
// original in the chain.
func Translate(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("%w: %w", ErrNotFound, err)
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" {
		return fmt.Errorf("%w: %w", ErrConflict, err)
	}
	return err
}

// IsRetriable reports whether a failed transaction may succeed when run
// again: serialization failures, deadlocks, unique races between consumers,
// an unavailable server, and connection or network failures.
func IsRetriable(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "40001", "40P01", "23505", "57P01", "57P03", "08006", "08003", "08001":
			return true
		}
		return false
	}
	// Anything else is the connection or the network: retrying is safe
	// because a batch that did commit is found in processed_commands.
	return !errors.Is(err, context.Canceled)
}

// StringSet runs a query returning one text column (its first argument is
// typically an array for `= ANY($1)`) and returns the values as a set.
func StringSet(ctx context.Context, q Querier, sql string, args ...any) (map[string]bool, error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	found, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(found))
	for _, v := range found {
		out[v] = true
	}
	return out, nil
}
