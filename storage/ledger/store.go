package ledger

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fintech/platform/storage/postgres"
)

// Head is the chain head: the last entry's height and hash (0 and 64 zeros
// for an empty chain).
type Head struct {
	Height    int64
	Hash      string
	Timestamp *time.Time
}

const lockHeadSQL = `SELECT height, hash, ts FROM ledger_head WHERE one FOR UPDATE`

// LockHead reads the head and locks it until tx ends, so that two appenders
// (a zombie during a rebalance) can never chain onto the same head.
func LockHead(ctx context.Context, tx pgx.Tx) (Head, error) {
	var h Head
	if err := tx.QueryRow(ctx, lockHeadSQL).Scan(&h.Height, &h.Hash, &h.Timestamp); err != nil {
		return Head{}, fmt.Errorf("lock ledger head: %w", err)
	}
	return h, nil
}

const setHeadSQL = `UPDATE ledger_head SET height = $1, hash = $2, ts = $3 WHERE one`

// SetHead moves the head after entries were inserted in the same tx.
func SetHead(ctx context.Context, tx pgx.Tx, h Head) error {
	if _, err := tx.Exec(ctx, setHeadSQL, h.Height, h.Hash, h.Timestamp); err != nil {
		return fmt.Errorf("move ledger head to %d: %w", h.Height, err)
	}
	return nil
}

// SourceKey names the originating record of an entry.
type SourceKey struct{ Scope, Kind, SourceID string }

const entryColumns = `height, id, kind, source_id, actor_user_id, amount_cents, currency, meta, ts, prev_hash, hash`

func scanEntry(row pgx.Row) (Entry, error) {
	var e Entry
	var currency, meta *string
	if err := row.Scan(&e.Height, &e.ID, &e.Kind, &e.SourceID, &e.ActorUserID, &e.AmountCents,
		&currency, &meta, &e.Timestamp, &e.PrevHash, &e.Hash); err != nil {
		return Entry{}, err
	}
	if currency != nil {
		e.Currency = *currency
	}
	if meta != nil {
		e.Meta = []byte(*meta)
	}
	e.Timestamp = e.Timestamp.UTC()
	return e, nil
}

func collect(rows pgx.Rows) ([]Entry, error) {
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Entry, error) { return scanEntry(r) })
}

const bySourcesSQL = `SELECT ` + entryColumns + `, scope FROM ledger_entries
WHERE (scope, kind, source_id) IN (SELECT * FROM unnest($1::text[], $2::text[], $3::text[]))`

// BySources returns the entries that exist for the given sources.
func BySources(ctx context.Context, q postgres.Querier, keys []SourceKey) (map[SourceKey]Entry, error) {
	out := map[SourceKey]Entry{}
	if len(keys) == 0 {
		return out, nil
	}
	scopes := make([]string, len(keys))
	kinds := make([]string, len(keys))
	ids := make([]string, len(keys))
	for i, k := range keys {
		scopes[i], kinds[i], ids[i] = k.Scope, k.Kind, k.SourceID
	}
	rows, err := q.Query(ctx, bySourcesSQL, scopes, kinds, ids)
	if err != nil {
		return nil, fmt.Errorf("find ledger entries by source: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var scope string
		e, err := scanEntry(scopedRow{rows, &scope})
		if err != nil {
			return nil, fmt.Errorf("scan ledger entry: %w", err)
		}
		e.Scope = scope
		out[SourceKey{scope, e.Kind, e.SourceID}] = e
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("find ledger entries by source: %w", err)
	}
	return out, nil
}

// ExistingIDs returns which of ids are entry ids already.
func ExistingIDs(ctx context.Context, q postgres.Querier, ids []string) (map[string]bool, error) {
	if len(ids) == 0 {
		return map[string]bool{}, nil
	}
	out, err := postgres.StringSet(ctx, q, `SELECT id FROM ledger_entries WHERE id = ANY($1)`, ids)
	if err != nil {
		return nil, fmt.Errorf("find ledger entry ids: %w", err)
	}
	return out, nil
}

// scopedRow scans the entry columns followed by the scope.
type scopedRow struct {
	pgx.Row
	scope *string
}

func (r scopedRow) Scan(dest ...any) error { return r.Row.Scan(append(dest, r.scope)...) }

var insertColumns = []string{"height", "id", "kind", "source_id", "actor_user_id", "amount_cents",
	"currency", "meta", "ts", "prev_hash", "hash", "scope"}

// Insert copies entries into the chain table in the caller's transaction.
func Insert(ctx context.Context, q postgres.Querier, entries []Entry) error {
	if len(entries) == 0 {
		return nil
	}
	_, err := q.CopyFrom(ctx, pgx.Identifier{"ledger_entries"}, insertColumns,
		pgx.CopyFromSlice(len(entries), func(i int) ([]any, error) {
			e := entries[i]
			var currency, meta *string
			if e.Currency != "" {
				currency = &e.Currency
			}
			if e.Meta != nil {
				m := string(e.Meta)
				meta = &m
			}
			return []any{e.Height, e.ID, e.Kind, e.SourceID, e.ActorUserID, e.AmountCents,
				currency, meta, e.Timestamp, e.PrevHash, e.Hash, e.Scope}, nil
		}))
	if err != nil {
		return fmt.Errorf("insert %d ledger entries: %w", len(entries), err)
	}
	return nil
}

// Store serves the ledger reads.
type Store struct {
	pool *pgxpool.Pool
}

// NewStore builds the read side.
func NewStore(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

// Head returns the current head.
func (s *Store) Head(ctx context.Context) (Head, Entry, bool, error) {
	e, err := scanEntry(s.pool.QueryRow(ctx, `SELECT `+entryColumns+` FROM ledger_entries ORDER BY height DESC LIMIT 1`))
	if errors.Is(err, pgx.ErrNoRows) {
		return Head{Hash: GenesisPrevHash}, Entry{}, false, nil
	}
	if err != nil {
		return Head{}, Entry{}, false, fmt.Errorf("read ledger head: %w", err)
	}
	ts := e.Timestamp
	return Head{Height: e.Height, Hash: e.Hash, Timestamp: &ts}, e, true, nil
}

// Context is an entry with its neighbours in the chain.
type Context struct {
	Entry    Entry
	Previous *Entry
	Next     *Entry
}

// ByID returns one entry with its neighbours; postgres.ErrNotFound when the
// id is unknown.
func (s *Store) ByID(ctx context.Context, id string) (Context, error) {
	e, err := scanEntry(s.pool.QueryRow(ctx, `SELECT `+entryColumns+` FROM ledger_entries WHERE id = $1`, id))
	if err != nil {
		return Context{}, fmt.Errorf("read ledger entry %s: %w", id, postgres.Translate(err))
	}
	rows, err := s.pool.Query(ctx, `SELECT `+entryColumns+` FROM ledger_entries WHERE height IN ($1, $2)`, e.Height-1, e.Height+1)
	if err != nil {
		return Context{}, fmt.Errorf("read ledger neighbours of %s: %w", id, err)
	}
	ns, err := collect(rows)
	if err != nil {
		return Context{}, fmt.Errorf("read ledger neighbours of %s: %w", id, err)
	}
	out := Context{Entry: e}
	for i := range ns {
		if ns[i].Height < e.Height {
			out.Previous = &ns[i]
		} else {
			out.Next = &ns[i]
		}
	}
	return out, nil
}

// Filter selects entries for List.
type Filter struct {
	Kind        string
	ActorUserID string
	Since       *time.Time
	AfterHeight int64
	Limit       int
}

// List returns entries in height order after f.AfterHeight, at most
// f.Limit+1 of them so the caller can tell whether more exist.
func (s *Store) List(ctx context.Context, f Filter) ([]Entry, error) {
	sql := `SELECT ` + entryColumns + ` FROM ledger_entries WHERE height > $1`
	args := []any{f.AfterHeight}
	if f.Kind != "" {
		args = append(args, f.Kind)
		sql += fmt.Sprintf(` AND kind = $%d`, len(args))
	}
	if f.ActorUserID != "" {
		args = append(args, f.ActorUserID)
		sql += fmt.Sprintf(` AND actor_user_id = $%d`, len(args))
	}
	if f.Since != nil {
		args = append(args, *f.Since)
		sql += fmt.Sprintf(` AND ts >= $%d`, len(args))
	}
	args = append(args, f.Limit+1)
	sql += fmt.Sprintf(` ORDER BY height LIMIT $%d`, len(args))
	rows, err := s.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("list ledger entries: %w", err)
	}
	es, err := collect(rows)
	if err != nil {
		return nil, fmt.Errorf("list ledger entries: %w", err)
	}
	return es, nil
}
