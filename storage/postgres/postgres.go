// Package postgres connects to the Postgres state of record, applies the
// embedded migrations and translates driver errors once for every repository.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"

	"github.com/fintech/platform/storage/migrations"
	"github.com/fintech/platform/topics/netsource"
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

// Option changes how Connect opens its pool.
type Option func(*pgxpool.Config)

// WithTracer traces every statement of the pool with t (nil: none).
func WithTracer(t pgx.QueryTracer) Option {
	return func(cfg *pgxpool.Config) {
		if t != nil {
			cfg.ConnConfig.Tracer = t
		}
	}
}

// Connect opens a pool on url and checks that the server answers.
func Connect(ctx context.Context, url string, maxConns int32, opts ...Option) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("parse DATABASE_URL: %w", err)
	}
	if maxConns > 0 {
		cfg.MaxConns = maxConns
	}
	if dial := netsource.DialContext(); dial != nil {
		cfg.ConnConfig.DialFunc = dial
	}
	for _, o := range opts {
		o(cfg)
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
// again unchanged, so that it must be retried (with backoff, for as long as
// it takes) and never parked: see Transient.
func IsRetriable(err error) bool { return Transient(err) }

// Transient reports whether err is a failure of the moment rather than of
// the command, decided by SQLSTATE class:
//
//   - 08 connection exceptions, 40 transaction rollbacks (serialization
//     failures, deadlocks), 53 insufficient resources (too many
//     connections, disk full), 57 operator intervention (a cancelled
//     query, an admin or crash shutdown, a server starting up) except
//     57P04 (the database was dropped), 58 system errors (I/O);
//   - 55P03 lock not available, 25006 read-only transaction (the window in
//     which a failed-over primary is still, or a standby already is,
//     read-only), 0A000 feature not supported (a cached plan whose result
//     type a migration changed), 23505 unique violation (two consumers
//     racing for one row: the loser finds it applied when run again);
//   - any error that is not a Postgres error: the connection or the
//     network (retrying is safe because a batch that did commit is found in
//     processed_commands), except a cancelled context.
//
// Everything else a Postgres server answers is deterministic for the same
// input: data exceptions (22), integrity violations (23), syntax or access
// errors (42) and the rest. A consumer retries for as long as it takes only
// what Momentary reports: a unique violation or a cancelled query can
// repeat for one command every time, and is parked after the command's
// tries like the rest (pipeline.Config.ParkAfter).
func Transient(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return transientCode(pgErr.Code)
	}
	return !errors.Is(err, context.Canceled)
}

func transientCode(code string) bool {
	switch code {
	case "55P03", "25006", "0A000", "23505":
		return true
	case "57P04":
		return false
	}
	if len(code) != 5 {
		return false
	}
	switch code[:2] {
	case "08", "40", "53", "57", "58":
		return true
	}
	return false
}

// Momentary reports whether err is a failure of the server, the
// connection or contention with other transactions — never of the
// statement and its data — so that a consumer retries its batch for as long
// as it takes and never parks a command on it: a failover must not park
// good commands. It is Transient without what can repeat for one command
// every time it is run: a unique violation (23505) and a cancelled query or
// statement timeout (57014) are left to the consumer's tries and parking
// (pipeline.Config.ParkAfter), as is every other SQLSTATE.
//
//   - 08 connection exceptions, 25006 read-only transaction (a demoted
//     primary or a standby), 57P01/57P02/57P03 admin or crash shutdown and a
//     server starting up;
//   - 40 serialization failures and deadlocks, 55P03 lock not available;
//   - 53 insufficient resources, 58 system errors, 0A000 a cached plan a
//     migration changed;
//   - any error that is not a Postgres error, except a cancelled context.
func Momentary(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "23505", "57014":
			return false
		}
		return transientCode(pgErr.Code)
	}
	return !errors.Is(err, context.Canceled)
}

// Unavailable reports whether err says Postgres cannot be reached or used
// right now (a failover, a restart, too many connections), as opposed to a
// failure of the statement itself: a connection that could not be made or
// broke, a timeout, or a transient SQLSTATE other than a unique violation.
// A request that met it may be retried: the API answers 503.
func Unavailable(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code != "23505" && transientCode(pgErr.Code)
	}
	var connErr *pgconn.ConnectError
	var netErr net.Error
	return errors.As(err, &connErr) || errors.As(err, &netErr) || pgconn.Timeout(err) || pgconn.SafeToRetry(err) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)
}

// ReadOnly reports whether err is a write refused because the server is
// read-only (25006): a primary that was demoted, or a standby.
func ReadOnly(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "25006"
}

// FollowPrimary closes pool's connections when err says their server no
// longer takes writes: a demoted primary keeps its sessions, and the pool
// would hand them out again and again. New connections go through the
// DATABASE_URL's host list, which with target_session_attrs=read-write
// skips every server that is not the primary.
func FollowPrimary(pool *pgxpool.Pool, err error) {
	if ReadOnly(err) {
		pool.Reset()
	}
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
